"""kernels_ref/: every module declares what it is the reference of, and is right (interpreter, small shapes).

The tuned reference kernels are the oracles' twins and the gpu_perf bar. Each module ends with a
``REFERENCE`` declaration (grader/tools/bench.py): the unit and exercises whose gpu_perf tests time
it, the vendor key those tests score against, and its make bench rows. Here: every module has one,
it matches the gpu_perf tests the manifest collects, every unit with gpu_perf tests has one, and each
module is held against fp64 torch (its checks in ORACLES, keyed by module) on shapes that hit its
tails (ragged tiles, EVEN_K/EVEN_N off and on, causal diagonal tiles) and dtypes.
"""

from __future__ import annotations

import functools
import math

import pytest
import torch
import torch.nn.functional as F

from grader import api
from grader.core.results import Tier
from grader.core.target import REPO_ROOT
from grader.instrument.loader import load_reference
from grader.kit.compare import Tolerance, assert_close
from grader.tools import bench


def check_softmax(shape, dtype):
    x = (torch.randn(shape, generator=torch.Generator().manual_seed(0)) * 4).to(dtype)
    y = load_reference("softmax").softmax(x)
    assert_close(y, torch.softmax(x.double(), -1), dtype=dtype, what=f"kernels_ref.softmax({tuple(shape)})")


def check_matmul(m, n, k, dtype):
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(m, k, generator=g).to(dtype), torch.randn(n, k, generator=g).to(dtype).t()  # b: a view
    c = load_reference("matmul").matmul(a, b)
    exact = a.double() @ b.double()
    scale = a.double().abs() @ b.double().abs()
    eps = 2.0**-10 if dtype == torch.float16 else 2.0**-7
    err = (c.double() - exact).abs()
    assert c.dtype == dtype and (err <= eps * exact.abs() + 4 * math.sqrt(k) * 2.0**-24 * scale + 2.0**-24).all(), (
        f"kernels_ref.matmul({m}×{k} · {k}×{n}, {dtype}): max error {err.max():.3g}"
    )


def check_attention(b, h, n, d, dtype, causal):
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(b, h, n, d, generator=g).to(dtype) for _ in range(3))
    o, lse = load_reference("attention").flash_attention_fwd(q, k, v, causal=causal)
    q64, k64, v64 = q.double(), k.double(), v.double()
    s = q64 @ k64.transpose(-1, -2) / math.sqrt(d)
    if causal:
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), -math.inf)
    eps = {torch.float16: 2.0**-10, torch.bfloat16: 2.0**-7, torch.float32: 2.0**-20}[dtype]
    what = f"kernels_ref.flash_attention_fwd({b}, {h}, {n}, {d}, {dtype}, causal={causal})"
    o_ref = F.scaled_dot_product_attention(q64, k64, v64, is_causal=causal)
    assert_close(o, o_ref, dtype=dtype, tol=Tolerance(atol=eps * float(v64.abs().max()), rtol=eps), what=what + " o")
    assert_close(lse, torch.logsumexp(s, -1), dtype=torch.float32, tol=Tolerance(atol=1e-5, rtol=1e-6),
                 what=what + " lse")


def check_transpose(shape, dtype, view):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(3)).to(dtype)
    x = x.t() if view else x  # a strided view: the kernel takes any strides
    y = load_reference("transpose").transpose(x)
    what = f"kernels_ref.transpose({tuple(x.shape)}, {dtype}, strides {x.stride()})"
    assert y.is_contiguous() and y.dtype == dtype, f"{what}: contiguous {y.is_contiguous()}, dtype {y.dtype}"
    assert torch.equal(y, x.t()), f"{what}: differs from x.t() at {int((y != x.t()).sum())} elements"


def check_flash_fwd(bh, n, causal):
    g = torch.Generator().manual_seed(4)
    q, k, v = (torch.randn(bh, n, 64, generator=g) for _ in range(3))  # the capstone's layout, fp32
    o, lse = load_reference("flash_fwd").flash_fwd(q, k, v, causal=causal)
    s = q.double() @ k.double().transpose(-1, -2) / 8.0
    if causal:
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), -math.inf)
    what = f"kernels_ref.flash_fwd({bh}, {n}, 64, causal={causal})"
    tol = Tolerance(atol=2.0**-20 * float(v.abs().max()), rtol=2.0**-20)
    assert_close(o, torch.softmax(s, -1) @ v.double(), dtype=torch.float32, tol=tol, what=what + " o")
    assert_close(lse, torch.logsumexp(s, -1), dtype=torch.float32, tol=Tolerance(atol=1e-5, rtol=1e-6),
                 what=what + " lse")


def check_flash_decode(ctxs, n_kv, group, d, page, dtype, splits):
    """Paged decode: ragged contexts in shuffled pages, GQA, empty splits; fp64 dense attention per sequence."""
    g = torch.Generator().manual_seed(5)
    pages = [-(-c // page) for c in ctxs]
    ids = torch.randperm(sum(pages) + 2, generator=g)
    table = torch.full((len(ctxs), max(pages) + 1), len(ids) + 100, dtype=torch.int32)
    k_cache = torch.randn(len(ids), page, n_kv, d, generator=g).to(dtype)
    v_cache = torch.randn(len(ids), page, n_kv, d, generator=g).to(dtype)
    q = torch.randn(len(ctxs), n_kv * group, d, generator=g).to(dtype)
    start = 0
    for i, n in enumerate(pages):
        table[i, :n] = ids[start:start + n].to(torch.int32)
        start += n
    lens = torch.tensor(ctxs, dtype=torch.int32)
    o = load_reference("flash_decode").flash_decode(q, k_cache, v_cache, table, lens, splits)
    want = []
    for i, c in enumerate(ctxs):
        pos = torch.arange(c)
        slots = table[i].long()[pos // page]
        k = k_cache[slots, pos % page].double().repeat_interleave(group, dim=1)  # [c, heads, d]
        v = v_cache[slots, pos % page].double().repeat_interleave(group, dim=1)
        s = torch.einsum("hd,chd->hc", q[i].double(), k) / math.sqrt(d)
        want.append(torch.einsum("hc,chd->hd", torch.softmax(s, -1), v))
    eps = {torch.float16: 2.0**-10, torch.bfloat16: 2.0**-7, torch.float32: 2.0**-20}[dtype]
    what = f"kernels_ref.flash_decode(contexts {ctxs}, {n_kv}×{group} heads, d {d}, page {page}, {dtype}, {splits})"
    assert_close(o, torch.stack(want), dtype=dtype, tol=Tolerance(atol=eps * float(v_cache.double().abs().max()),
                                                                  rtol=eps), what=what)


# module -> (its check, the cases): a new kernels_ref module needs its entry here
ORACLES = {
    "softmax": (check_softmax, [((5, 1000), torch.float32), ((3, 4097), torch.float16), ((2, 65), torch.bfloat16)]),
    "matmul": (check_matmul, [(100, 70, 33, torch.float16), (64, 128, 64, torch.bfloat16), (1, 3, 200, torch.float16)]),
    "attention": (check_attention, [
        (1, 2, 100, 64, torch.float16, False), (2, 1, 96, 32, torch.float32, True),
        (1, 1, 65, 128, torch.bfloat16, True), (1, 1, 64, 16, torch.float32, False),
    ]),
    "transpose": (check_transpose, [((100, 70), torch.float32, False), ((65, 200), torch.float16, True),
                                    ((3, 130), torch.bfloat16, False)]),
    "flash_fwd": (check_flash_fwd, [(2, 100, False), (1, 37, True)]),
    "flash_decode": (check_flash_decode, [((37, 1, 16), 2, 4, 64, 16, torch.float16, 3),
                                          ((50, 5), 1, 1, 32, 8, torch.bfloat16, 8),
                                          ((17,), 2, 3, 16, 4, torch.float32, 2)]),
}


def _case_id(module: str, args: tuple | None) -> str:
    return "-".join([module, *(str(a).removeprefix("torch.").replace(" ", "") for a in args or ())])


def _oracle_cases() -> list:
    cases = []
    for module in bench.modules():
        _, args = ORACLES.get(module, (None, [None]))
        cases += [pytest.param(module, a, id=_case_id(module, a)) for a in args]
    return cases


@pytest.mark.parametrize("module, case", _oracle_cases())
def test_reference_is_right(module, case):
    if module not in ORACLES:
        pytest.fail(f"kernels_ref/{module}.py has no oracle: add ORACLES[{module!r}] = (check, cases) to "
                    "tests/grader/test_kernels_ref.py: a check against fp64 torch on shapes that hit its tails")
    ORACLES[module][0](*case)


def test_every_oracle_has_its_module():
    stale = sorted(set(ORACLES) - set(bench.modules()))
    assert not stale, f"ORACLES checks {stale}, which kernels_ref/ does not have: remove them or restore the modules"


@pytest.mark.parametrize("module", bench.modules())
def test_every_module_declares_what_it_is_the_reference_of(module):
    try:
        ref = bench.declaration(module)
    except LookupError as exc:
        pytest.fail(str(exc))
    for case in ref.bench:
        path = REPO_ROOT / "kernels_ref" / case.source
        assert not case.source or (path.suffix == ".cu" and path.is_file()), (
            f"kernels_ref/{module}.py: bench row {case.name!r} launches source={case.source!r}: name a .cu file of "
            "kernels_ref/"
        )


def test_every_cu_reference_has_a_bench_row():
    launched = {case.source for ref in bench.declarations().values() for case in ref.bench}
    for path in sorted((REPO_ROOT / "kernels_ref").glob("*.cu")):
        assert path.name in launched, (
            f"kernels_ref/{path.name} is launched by no make bench row: add dict(name={path.name!r}, "
            f"source={path.name!r}, inputs=..., run=..., oracle=..., baseline=..., goal=...) to the bench rows of "
            "the REFERENCE of the kernels_ref module it is the twin of"
        )


@functools.cache
def gpu_perf_exercises() -> dict[str, set[str]]:
    """unit -> the exercises of its gpu_perf tests (the plugin's manifest)."""
    return {u: set(ex) for u, ex in api.tier_exercises(Tier.GPU_PERF.value).items()}


def test_declarations_name_gpu_perf_tests_and_every_kernel_unit_has_one():
    declared, problems = bench.declarations(), []
    for module, ref in declared.items():
        unknown = set(ref.exercises) - gpu_perf_exercises().get(ref.unit, set())
        if unknown:
            problems.append(
                f"kernels_ref/{module}.py's REFERENCE names {sorted(unknown)} of {ref.unit}, which have no gpu_perf "
                f"test (its gpu_perf exercises: {sorted(gpu_perf_exercises().get(ref.unit, ()))}): fix unit= or "
                "exercises=")
    for unit, exercises in gpu_perf_exercises().items():
        if not any(ref.unit == unit for ref in declared.values()):
            problems.append(
                f"{unit} has gpu_perf tests ({sorted(exercises)}) and no kernels_ref declaration: add "
                f"kernels_ref/<name>.py, the tuned kernel its gpu_perf tests time as kernels_ref, ending with "
                f"REFERENCE = dict(unit={unit!r}, exercises=(...), vendor=..., bench=(...)) "
                "(kernels_ref/softmax.py is an example)")
    assert not problems, "\n".join(problems)
