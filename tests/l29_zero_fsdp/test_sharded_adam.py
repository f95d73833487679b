"""L29 · ZeRO-1/2 for real: shard ranges, Adam in place (torch's to a few ulps), sharded Adam on gloo."""

from __future__ import annotations

import functools
import math

import pytest
import torch._dynamo  # noqa: F401  (torch.optim imports it on first use: here, at collection, before any learner code runs)
from hypothesis import given
from hypothesis import strategies as st

from grader.kit import assert_exact, assert_rejects, assert_rejects_all, fresh_ranks_ahead, grade, learner

UNIT = "l29_zero_fsdp"
shard_range = learner(UNIT, "sharded_adam", "shard_range")
adam_update_ = learner(UNIT, "sharded_adam", "adam_update_", writes={"param": 0, "exp_avg": 2, "exp_avg_sq": 3})
ShardedAdam = learner(UNIT, "sharded_adam", "ShardedAdam", audited=True)

SIMPLENET = (64, 128, 10)  # lecture 28 lab 5.1's SimpleNet: 9,610 parameters
LR, BETAS, EPS, WD = 1e-2, (0.9, 0.999), 1e-8, 0.01
STEPS = 3
fresh_ranks_ahead()  # the memory check's clean process: forked from this one before any learner code runs here


# ---- shard_range -------------------------------------------------------------------------------------------------


@grade(shard_range, "correctness", points=2,
       hint="How long is every shard once the flat buffer is padded to a multiple of P, and where does rank r's end?")
def test_shard_range_worked():
    """SimpleNet's 9,610 parameters on 4 ranks: S = 2403, the last rank owns 2,401 real elements + 2 of padding."""
    for args, want in [((9610, 4, 0), (0, 2403)), ((9610, 4, 3), (7209, 9610)), ((9610, 3, 2), (6408, 9610)),
                       ((2, 4, 3), (2, 2)), ((2, 4, 1), (1, 2)), ((0, 2, 1), (0, 0)), ((7, 1, 0), (0, 7))]:
        got = shard_range(*args)
        assert tuple(got) == want, (f"shard_range{args} = {got}, expected {want}: S = ceil(numel / P), rank r owns "
                                    "[min(r·S, numel), min((r+1)·S, numel))")


@grade(shard_range, "correctness", points=2, hint="With P not dividing numel, does any element belong to no rank?")
@given(numel=st.integers(0, 10**7), world=st.integers(1, 64))
def test_shard_ranges_partition_the_buffer(numel, world):
    size = -(-numel // world)
    got = [tuple(shard_range(numel, world, r)) for r in range(world)]
    want = [(min(r * size, numel), min((r + 1) * size, numel)) for r in range(world)]
    assert got == want, f"shard_range({numel}, {world}, r) for r = 0..{world - 1}: {got[:6]}…, expected {want[:6]}…"
    for r, (lo, hi) in enumerate(got):
        assert_exact(lo, want[r][0], f"shard_range({numel}, {world}, {r})[0]")
        assert_exact(hi, want[r][1], f"shard_range({numel}, {world}, {r})[1]")


@grade(shard_range, "correctness", points=1, validation=True,
       hint="Raise ValueError naming the argument: a rank beyond the world, zero ranks, a float count.")
def test_shard_range_rejects_bad_arguments():
    assert_rejects_all(shard_range, [((10, 4, 4), "rank"), ((10, 0, 0), "world_size"), ((10.0, 2, 0), "numel"),
                                     ((10, 2, -1), "rank")])


# ---- adam_update_ ------------------------------------------------------------------------------------------------


def _grads(shape, steps: int, dtype, seed: int):
    """Gradients spanning 1e-2 … 1e2 in magnitude, with both signs."""
    import torch

    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(shape, generator=g, dtype=torch.float64)
             * 10 ** (torch.rand(shape, generator=g, dtype=torch.float64) * 4 - 2)).to(dtype) for _ in range(steps)]


@grade(adam_update_, "correctness", points=3,
       hint="torch.optim.Adam divides by 1 − β^t twice: which quantities does each correction scale, and where does "
            "weight decay go?")
@pytest.mark.parametrize("dtype_name", ["float64", "float32"])
@pytest.mark.parametrize("wd", [0.0, 0.01])
def test_adam_update_equals_torch(dtype_name, wd):
    """5 steps against torch.optim.Adam(foreach=False) on the same parameter and gradients, to ULPS ulps."""
    import torch

    dtype = getattr(torch, dtype_name)
    g = torch.Generator().manual_seed(29)
    start = torch.randn(37, 5, generator=g, dtype=torch.float64).to(dtype)
    ref = torch.nn.Parameter(start.clone())
    opt = torch.optim.Adam([ref], lr=LR, betas=BETAS, eps=EPS, weight_decay=wd, foreach=False)
    mine, m, v = start.clone(), torch.zeros_like(start), torch.zeros_like(start)
    for step, grad in enumerate(_grads(start.shape, 5, dtype, 7), start=1):
        ref.grad = grad.clone()
        opt.step()
        before = grad.clone()
        out = adam_update_(mine, grad, m, v, step, LR, BETAS[0], BETAS[1], EPS, wd)
        assert out is None, f"adam_update_ returns {type(out).__name__}; it updates param, exp_avg, exp_avg_sq in place"
        assert torch.equal(grad, before), "adam_update_ modified grad: add the L2 term into a new tensor"
        state = opt.state[ref]
        for name, got, want in (("param", mine, ref.detach()), ("exp_avg", m, state["exp_avg"]),
                                ("exp_avg_sq", v, state["exp_avg_sq"])):
            diff = (got - want).abs().max().item()
            assert within_ulps(got, want), (
                f"adam_update_(…, step={step}, lr={LR}, betas={BETAS}, eps={EPS}, weight_decay={wd}) on {dtype_name}: "
                f"{name} differs from torch.optim.Adam by up to {diff:.3g}, more than {ULPS} units in the last place "
                "(rounding alone stays far below): g = grad + wd·param; m ← β1·m + (1−β1)·g; v ← β2·v + (1−β2)·g²; "
                "denom = sqrt(v)/sqrt(1−β2^t) + eps; param −= lr/(1−β1^t) · m/denom")


# Rounding is not the lesson: `grad + wd * param` rounds twice where torch's `grad.add(param, alpha=wd)` may round
# once (a fused multiply-add), and sqrt(v / bc2) rounds otherwise than sqrt(v) / sqrt(bc2); after 5 steps such
# orders differ by a few units in the last place (1.7e-18 in fp64 seen). A wrong formula (no bias correction,
# AdamW's decay) is off by ~1e-3 or more. The README states this tolerance.
ULPS = 64


def within_ulps(got, want) -> bool:
    """Every element within ULPS units in the last place of ``want``'s dtype, relative to it (or to the tensor's
    largest magnitude for elements near 0)."""
    import torch

    eps = torch.finfo(want.dtype).eps * ULPS
    return got.dtype == want.dtype and got.shape == want.shape and torch.allclose(
        got, want, rtol=eps, atol=eps * float(want.abs().max()))


@grade(adam_update_, "correctness", points=1, validation=True,
       hint="Raise ValueError naming the argument: step 0, β1 = 1, a negative learning rate.")
def test_adam_update_rejects_bad_arguments():
    import torch

    def args(**kw):
        base = dict(step=1, lr=LR, beta1=0.9, beta2=0.999, eps=EPS, weight_decay=0.0)
        base.update(kw)
        return (torch.zeros(3), torch.ones(3), torch.zeros(3), torch.zeros(3), base["step"], base["lr"],
                base["beta1"], base["beta2"], base["eps"], base["weight_decay"])

    assert_rejects_all(adam_update_, [(args(step=0), "step"), (args(beta1=1.0), "beta1"), (args(beta2=-0.1), "beta2"),
                                      (args(lr=-1e-3), "lr"), (args(eps=-1.0), "eps"),
                                      (args(weight_decay=-0.1), "weight_decay")])


# ---- ShardedAdam on gloo -----------------------------------------------------------------------------------------


def _simplenet():
    import torch

    g = torch.Generator().manual_seed(64)
    params = []
    for fan_in, fan_out in zip(SIMPLENET, SIMPLENET[1:], strict=False):
        params += [torch.randn(fan_out, fan_in, generator=g, dtype=torch.float64) / fan_in**0.5,
                   torch.randn(fan_out, generator=g, dtype=torch.float64) * 0.1]
    return params


def _local_grad(shape, step: int, seed: int, i: int, dyadic: bool):
    """A rank's gradient of parameter i, from its secret seed for the check (rank_seed()): no rank can rebuild
    another's."""
    import torch

    (grad,) = _grads(shape, 1, torch.float64, seed + 1000 * step + i)
    return torch.round(grad * 2**24) / 2**24 if dyadic else grad  # exactly summable in any order


def _held_bytes(obj, skip: set[int]) -> int:
    """Where the heap cannot be counted (not glibc): the bytes of the distinct tensor storages reachable from the
    optimizer's attributes (two levels of containers), the parameters' and gradients' storages aside. Weaker: state
    kept anywhere else escapes it (THREAT_MODEL.md R3.7)."""
    import torch

    seen: dict[int, int] = {}

    def visit(x, depth: int) -> None:
        if isinstance(x, torch.Tensor):
            s = x.untyped_storage()
            if s.data_ptr() not in skip:
                seen[s.data_ptr()] = s.nbytes()
        elif depth < 3 and isinstance(x, dict):
            for v in x.values():
                visit(v, depth + 1)
        elif depth < 3 and isinstance(x, list | tuple | set):
            for v in x:
                visit(v, depth + 1)

    visit(getattr(obj, "__dict__", {}), 0)
    return sum(seen.values())


# The memory check: a model of 66,493 parameters in fp64 (532 KB per state vector), big enough that what an honest
# rank shows besides its state (glibc's per-thread caches, gloo's buffers, the module's own code: 50-70 KiB measured
# once gloo's first collectives are behind it, whatever the model's size) is noise next to the slack, and the slack
# small next to a replicated Adam's extra (P-1)/P·2·N·8 B (532-798 KB), or to keeping the whole of one moment.
MEMORY_SHAPES = ((128, 511), (509,), (3, 64, 3))
MEMORY_SLACK = 192 * 1024
MEMORY_STEPS = 1  # what one step leaves is what the next one reads


def _memory_params(seed: int) -> list:
    import torch

    g = torch.Generator().manual_seed(seed)
    return [torch.nn.Parameter(torch.randn(shape, generator=g, dtype=torch.float64)) for shape in MEMORY_SHAPES]


def _memory_numel() -> int:
    return sum(math.prod(shape) for shape in MEMORY_SHAPES)


def check_gloo_warmup(rank: int, world_size: int) -> None:
    """The grader's own collectives of the memory check's sizes, before any learner code runs in the rank: gloo
    makes its lasting buffers on a kind of call's first use (~100 KiB), which would otherwise land in the first
    memory window. Logged like the learner's (the wire accounts for them)."""
    import torch
    import torch.distributed as dist

    shard = _shard(world_size, _memory_numel())
    flat = torch.zeros(world_size * shard, dtype=torch.float64)
    dist.all_reduce(flat)
    dist.all_gather_into_tensor(flat, flat[:shard].clone())
    dist.reduce_scatter_tensor(flat[:shard].clone(), flat)


def check_memory(rank: int, world_size: int) -> dict:
    """What ShardedAdam keeps, counted from the rank's allocations (grader/instrument/allocations.py), wherever it
    is referenced: a module-level dict, a closure, a class attribute, NumPy arrays and Python lists count as much as
    the optimizer's own attributes. It runs first in ranks forked from a process where no learner code ever ran
    (run_ranks(..., fresh=True), grader/instrument/clean.py): nothing the learner's code made predates the first
    window, so no registry can hand it state made earlier. Per stage, one window: a fresh copy of the learner's
    module is loaded in it (its import-time allocations are the window's), the optimizer built and stepped
    MEMORY_STEPS times; the final gradients are credited their own bytes. Whatever stage 1's code left alive at
    its window's end was counted there (the window ends after a collection: a finalizer runs inside it), so what
    the stage-2 window could reach of stage 1's was counted once already. The parameters were made before the
    window and the check keeps their storages, and the stage-1 optimizer and its module stay alive through the
    stage-2 window: the learner's code can free none of them to offset what it keeps.
    """
    import torch

    from grader.instrument import allocations, clean, loader

    if not allocations.measurable():
        return {}
    if not clean.pristine():
        raise RuntimeError("grader bug: the memory check runs in a rank where learner code ran before its window: "
                           "run it first, with run_ranks(..., fresh=True)")
    g = torch.Generator().manual_seed(29 + rank)
    out, keep = {}, []
    for stage in (1, 2):
        params = _memory_params(stage)
        originals = [p.detach() for p in params]  # their storages outlive the window: nothing to free there
        window = allocations.Allocations().start()
        module = loader.load_fresh(UNIT, "sharded_adam")
        opt = module.ShardedAdam(params, lr=LR, betas=BETAS, eps=EPS, weight_decay=WD, stage=stage)
        for _ in range(MEMORY_STEPS):
            for p in params:
                p.grad = torch.randn(p.shape, generator=g, dtype=torch.float64)
            opt.step()
        held = window.stop([p.grad for p in params], within=2 * _shard(world_size, _memory_numel()) * 8 + MEMORY_SLACK)
        keep += [module, opt, params, originals]
        out[stage] = {"heap": held.heap_bytes, "python": held.python_bytes, "intact": held.intact}
    return out


def _average_grads(step: int, world_size: int, dyadic: bool, seeds: tuple[int, ...]) -> list:
    import torch

    out = []
    for i, p in enumerate(_simplenet()):
        total = torch.zeros_like(p)
        for r in range(world_size):
            total += _local_grad(p.shape, step, seeds[r], i, dyadic)
        out.append(total / world_size)
    return out


@functools.cache
def _reference(world_size: int, dyadic: bool, seeds: tuple[int, ...]) -> dict:
    """The grader's side (single process): a plain torch.optim.Adam fed the average gradient, STEPS steps."""
    import torch

    ref = [torch.nn.Parameter(p) for p in _simplenet()]
    opt = torch.optim.Adam(ref, lr=LR, betas=BETAS, eps=EPS, weight_decay=WD, foreach=False)
    for step in range(STEPS):
        for q, g in zip(ref, _average_grads(step, world_size, dyadic, seeds), strict=True):
            q.grad = g
        opt.step()
    return {"want": [q.detach().clone() for q in ref], "avg_grad": [q.grad.detach().clone() for q in ref]}


def _run_stage(rank: int, world_size: int, stage: int, dyadic: bool) -> dict:
    """The rank's side: ShardedAdam on this rank's local gradients (torch.optim is not imported in the ranks)."""
    import torch

    from grader.kit import rank_seed

    seed = rank_seed()
    params = [torch.nn.Parameter(p) for p in _simplenet()]
    opt = ShardedAdam(params, lr=LR, betas=BETAS, eps=EPS, weight_decay=WD, stage=stage)
    for step in range(STEPS):
        for i, p in enumerate(params):
            p.grad = _local_grad(p.shape, step, seed, i, dyadic)
        opt.step()
    skip = {p.untyped_storage().data_ptr() for p in params}
    skip |= {p.grad.untyped_storage().data_ptr() for p in params if p.grad is not None}
    return {"got": [p.detach().clone() for p in params],
            "grads_after": [None if p.grad is None else p.grad.detach().clone() for p in params],
            "state_bytes": opt.state_bytes(), "held": _held_bytes(opt, skip),
            "exp_avg": tuple(opt.exp_avg.shape), "exp_avg_sq": tuple(opt.exp_avg_sq.shape)}


def check_stage1(rank: int, world_size: int) -> dict:
    return {dyadic: _run_stage(rank, world_size, 1, dyadic) for dyadic in (False, True)}


def check_stage2(rank: int, world_size: int) -> dict:
    return {dyadic: _run_stage(rank, world_size, 2, dyadic) for dyadic in (False, True)}


@functools.cache
def _runs(world_size: int):
    from grader.kit import run_ranks

    # the memory check first, in ranks where no learner code ran before (fresh=True), after the grader's own
    # collectives have made gloo's lasting buffers (less noise)
    return run_ranks({"warmup": check_gloo_warmup, "memory": check_memory, "stage1": check_stage1,
                      "stage2": check_stage2}, world_size, timeout_s=60.0, fresh=True)


def _shard(world_size: int, numel: int | None = None) -> int:
    if numel is None:
        numel = sum(a * b + b for a, b in zip(SIMPLENET, SIMPLENET[1:], strict=False))
    return math.ceil(numel / world_size)


@grade(ShardedAdam, "correctness", points=4,
       hint="After the reduce, does every rank hold the AVERAGE gradient of its slice, and do all ranks end with the "
            "same full parameters?")
@pytest.mark.parametrize("world_size", [2, 3, 4])
@pytest.mark.parametrize("stage", [1, 2])
def test_sharded_adam_equals_adam_on_the_average(world_size, stage):
    """3 steps, lr 1e-2, wd 0.01, SimpleNet 64-128-10 in fp64: the parameters of every rank equal a plain
    torch.optim.Adam fed the average gradient (atol 1e-12); bit for bit when the gradients are exactly summable."""
    import torch

    run = _runs(world_size)[f"stage{stage}"]
    for rank in range(world_size):
        for dyadic, out in run.results[rank].items():
            out = {**out, **_reference(world_size, dyadic, tuple(run.seeds))}
            kind = "exactly summable gradients" if dyadic else "gradients 1e-2…1e2"
            where = f"ShardedAdam(stage={stage}) on P={world_size}, rank {rank}, {kind}, after {STEPS} steps"
            for i, (got, want) in enumerate(zip(out["got"], out["want"], strict=True)):
                err = (got - want).abs().max().item()
                assert torch.allclose(got, want, rtol=0, atol=1e-12), (
                    f"{where}: parameter {i} differs from torch.optim.Adam fed the average gradient by up to "
                    f"{err:.3g}; "
                    "average (sum / P) before Adam, update only your slice with the full-step bias corrections, then "
                    "all-gather every slice into every parameter")
                if dyadic and world_size != 3:  # sums of dyadic values are exact; / 2 and / 4 too
                    assert within_ulps(got, want), (
                        f"{where}: parameter {i} is within {err:.3g} but more than {ULPS} units in the last place "
                        "off, though these gradients sum exactly in any order")
            for i, (g, avg) in enumerate(zip(out["grads_after"], out["avg_grad"], strict=True)):
                if stage == 2:
                    assert g is None, (f"{where}: parameter {i}'s .grad is still set; stage 2 never keeps the full "
                                       "gradient: set every p.grad to None after the reduce-scatter")
                else:
                    assert g is not None and torch.allclose(g, avg, rtol=0, atol=1e-12), (
                        f"{where}: parameter {i}'s .grad should hold the all-reduced AVERAGE gradient after step()")


@grade(ShardedAdam, "correctness", points=1, validation=True,
       hint="Raise ValueError naming the argument: stage 3, or no trainable parameter.")
def test_sharded_adam_rejects_bad_arguments():
    import torch

    frozen = torch.nn.Parameter(torch.zeros(3), requires_grad=False)
    assert_rejects(ShardedAdam, ([torch.nn.Parameter(torch.zeros(3))],), "stage", {"stage": 3})
    assert_rejects(ShardedAdam, ([frozen],), "params")


@grade(ShardedAdam, "efficiency", points=3,
       hint="Which tensors does each rank need to keep between steps, and how long is each of them?")
@pytest.mark.parametrize("world_size", [2, 3, 4])
def test_sharded_adam_holds_one_shard_of_state(world_size):
    """state_bytes() = 2·S·8 B (SimpleNet: 76,880 / 51,264 / 38,448 B for P = 2 / 3 / 4 against 153,760 B
    unsharded); and what every rank keeps, counted from its allocations wherever they are referenced (module
    globals, closures, NumPy, Python lists: check_memory), stays within 2·S·8 B + 192 KiB on a 66,493-parameter
    model (2·S·8 = 532 KB / 355 KB / 266 KB; unsharded Adam keeps 1.06 MB)."""
    size = _shard(world_size)
    for stage in (1, 2):
        out = _runs(world_size)[f"stage{stage}"].results[0][False]
        assert out["exp_avg"] == (size,) and out["exp_avg_sq"] == (size,), (
            f"ShardedAdam(stage={stage}) on P={world_size}: exp_avg {out['exp_avg']}, exp_avg_sq {out['exp_avg_sq']}; "
            f"expected ({size},) each: this rank's slice, S = ceil(9610 / {world_size})")
        assert_exact(out["state_bytes"], 2 * size * 8, f"ShardedAdam(stage={stage}, P={world_size}).state_bytes()",
                     why=f"m and v of {size} fp64 elements", unit="B")
    numel = _memory_numel()
    big = _shard(world_size, numel)
    budget = 2 * big * 8
    memory = _runs(world_size)["memory"]
    for rank in range(world_size):
        measured = memory.results[rank]
        if not measured:  # no glibc to count the heap: the optimizer's attributes only (weaker, see _held_bytes)
            for stage in (1, 2):
                held = _runs(world_size)[f"stage{stage}"].results[rank][False]["held"]
                assert held <= 2 * size * 8 + 1024, (
                    f"ShardedAdam(stage={stage}) on P={world_size} holds {held:,} B of tensors besides the "
                    f"parameters and their gradients; ZeRO keeps 2·S·8 = {2 * size * 8:,} B (+1 KiB): drop "
                    "full-size buffers after step()")
            continue
        for stage in (1, 2):
            m = measured[stage]
            assert m["intact"], (f"ShardedAdam(stage={stage}) on P={world_size}, rank {rank}: the grader's memory "
                                 "tracing (tracemalloc) was switched off during the steps: leave it alone")
            kept = m["heap"] + m["python"]
            assert kept <= budget + MEMORY_SLACK, (
                f"ShardedAdam(stage={stage}) on P={world_size}, rank {rank}, {numel:,} fp64 parameters, "
                f"{MEMORY_STEPS} steps: the rank keeps {kept:,} B besides the parameters and their gradients "
                f"({m['heap']:,} B on the heap: tensors, NumPy arrays; {m['python']:,} B of Python objects), counted "
                f"wherever they are referenced; ZeRO keeps m and v of its slice, 2·S·8 = {budget:,} B "
                f"(+{MEMORY_SLACK // 1024} KiB), replicated Adam {2 * numel * 8:,} B: keep the states of this rank's "
                "slice only (wherever you keep them: the optimizer, a module-level dict, a closure count alike) and "
                "drop full-size buffers after step()")


@grade(ShardedAdam, "efficiency", points=2,
       hint="Which collective gives each rank only the average of its own slice?")
@pytest.mark.parametrize("world_size", [2, 4])
def test_stage2_reduce_scatters(world_size):
    """Stage 2 never all-reduces: one reduce-scatter and one all-gather per step, nothing else."""
    run = _runs(world_size)["stage2"]
    for rank in range(world_size):
        names = run.calls(rank)
        reduces = [n for n in names if n.startswith("reduce_scatter")]
        gathers = [n for n in names if n.startswith("all_gather")]
        steps = 2 * STEPS  # two variants per check
        assert "all_reduce" not in names and len(reduces) == steps and len(gathers) == steps \
            and len(names) == 2 * steps, (
                f"ShardedAdam(stage=2) on P={world_size}, rank {rank}: {steps} steps called {names}; expected one "
                "reduce-scatter (the gradient: each rank receives only its slice's sum) and one all-gather (the "
                "parameters) per step, no all_reduce")
    # batch grading: the bytes on the loopback, counted by the judge, are what ZeRO sends in both checks of the run
    # (the test's account, not the ranks' logs): per step, stage 1 all-reduces the (padded) gradient and stage 2
    # reduce-scatters it, and both all-gather the parameters' slices (list or tensor forms alike)
    flat, gather = world_size * _shard(world_size) * 8, (world_size + 1) * _shard(world_size) * 8
    per_step = {"stage1": [("all_reduce", flat), ("all_gather", gather)],
                "stage2": [("reduce_scatter", flat + flat // world_size), ("all_gather", gather)]}
    expected = {n: [c * 2 * STEPS] * world_size for n, c in per_step.items()}
    # the memory check: one stage-1 then one stage-2 optimizer of MEMORY_STEPS steps each on the bigger model
    flat, gather = world_size * _shard(world_size, _memory_numel()) * 8, (world_size + 1) * _shard(
        world_size, _memory_numel()) * 8
    expected["memory"] = [[("all_reduce", flat), ("all_gather", gather)] * MEMORY_STEPS
                          + [("reduce_scatter", flat + flat // world_size), ("all_gather", gather)] * MEMORY_STEPS
                          ] * world_size
    _runs(world_size).assert_wire("ShardedAdam", expected)
