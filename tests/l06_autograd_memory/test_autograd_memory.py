"""L06 · the attention saved-tensor ledger, measuring it with saved-tensor hooks, and checkpointing."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from grader.kit import (
    assert_exact,
    assert_parts,
    assert_rejects,
    assert_rejects_all,
    grade,
    learner,
    where_learner_runs,
)

UNIT = "l06_autograd_memory"
attention_saved_bytes = learner(UNIT, "autograd_memory", "attention_saved_bytes")
saved_tensor_bytes = learner(UNIT, "autograd_memory", "saved_tensor_bytes")
checkpoint_plan = learner(UNIT, "autograd_memory", "checkpoint_plan")
checkpointed_forward = learner(UNIT, "autograd_memory", "checkpointed_forward")

WIDTH = 16  # features of the checkpointing blocks: a 4×16 fp32 activation is 256 B


def assert_named_parts(got: object, want: dict, what: str, **kw) -> None:
    """assert_parts on the keys the contract names: an extra key in the learner's dict is not a mistake."""
    assert_parts({k: got[k] for k in want if k in got} if isinstance(got, dict) else got, want, what, **kw)


# ---- oracles written here, independent of the learner's code ----------------------------------


def measure(fn, *args) -> dict[str, int]:
    """What autograd saves while ``fn(*args)`` runs: the test's own saved-tensor hooks."""
    saved: list[torch.Tensor] = []

    def pack(t):
        saved.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn(*args)
    storages = {(t.untyped_storage().data_ptr(), str(t.device)): t.untyped_storage().nbytes() for t in saved}
    return {"count": len(saved), "bytes": sum(t.numel() * t.element_size() for t in saved),
            "unique_bytes": sum(storages.values())}


def attention(q, k, v, p_drop: float = 0.1):
    """Naive attention, op by op, as the lecture writes it (§6.1 rows 4-7)."""
    probs = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if p_drop:
        probs = F.dropout(probs, p_drop, training=True)
    return probs @ v


def ledger(b: int, n: int, s: int, d: int, e: int, dropout: bool, m: int) -> dict[str, int]:
    qkv, scores = b * n * s * d * e, b * n * s * s
    parts = {"q": qkv, "k": qkv, "v": qkv, "softmax_out": scores * e,
             "dropout_mask": scores * m if dropout else 0, "dropout_out": scores * e if dropout else 0}
    return {**parts, "total": sum(parts.values())}


def qkv(b: int, n: int, s: int, d: int, dtype=torch.float32):
    g = torch.Generator().manual_seed(b * 1000 + n * 100 + s * 10 + d)
    return [torch.randn(b, n, s, d, generator=g, dtype=dtype, requires_grad=True) for _ in range(3)]


# ---- attention_saved_bytes ---------------------------------------------------------------------


@grade(attention_saved_bytes, "correctness", points=3,
       hint="Which tensors does P'·V keep for its backward, and is the dropout mask really one bit per score?")
def test_attention_ledger_worked_numbers():
    """Course §6.2: B=2, n=32, S=8192, d=128, 16-bit: softmax 8,589,934,592 B per layer, 274.88 GB for 32."""
    call = "attention_saved_bytes(2, 32, 8192, 128)"
    want = {"q": 134_217_728, "k": 134_217_728, "v": 134_217_728, "softmax_out": 8_589_934_592,
            "dropout_mask": 4_294_967_296, "dropout_out": 8_589_934_592, "total": 21_877_489_664}
    got = attention_saved_bytes(2, 32, 8192, 128)
    assert_named_parts(got, want, call, total="total", unit="B")
    assert_exact(got["softmax_out"] * 32, 274_877_906_944, f"{call}['softmax_out'] × 32 layers", unit="B",
                 why="the lecture's 274.88 GB of softmax outputs alone")
    assert_exact(attention_saved_bytes(2, 32, 8192, 128, dropout=False)["total"], 8_992_587_776,
                 "attention_saved_bytes(2, 32, 8192, 128, dropout=False)['total']", unit="B",
                 why="without dropout P·V keeps the P softmax already kept: count that tensor once")


@grade(attention_saved_bytes, "correctness", points=2,
       hint="Every part is a product of the sizes; which ones grow with S² and which with S·d?")
@given(b=st.integers(1, 64), n=st.integers(1, 128), s=st.integers(1, 2**17), d=st.integers(1, 256),
       e=st.sampled_from([1, 2, 4, 8]), m=st.sampled_from([1, 2, 4]), dropout=st.booleans())
def test_attention_ledger_closed_form(b, n, s, d, e, m, dropout):
    call = f"attention_saved_bytes({b}, {n}, {s}, {d}, elem_bytes={e}, dropout={dropout}, mask_bytes={m})"
    got = attention_saved_bytes(b, n, s, d, elem_bytes=e, dropout=dropout, mask_bytes=m)
    assert_named_parts(got, ledger(b, n, s, d, e, dropout, m), call, total="total", unit="B")


@grade(attention_saved_bytes, "correctness", points=3,
       hint="Run the attention under saved-tensor hooks yourself: how many tensors of B·n·S² elements come out?")
@settings(max_examples=8)
@given(b=st.integers(1, 2), n=st.integers(1, 3), s=st.integers(1, 12), d=st.integers(1, 8),
       dtype=st.sampled_from([torch.float32, torch.float64]), dropout=st.booleans())
def test_attention_ledger_matches_measurement(b, n, s, d, dtype, dropout):
    """The ledger equals what autograd really saves on the CPU (whose dropout mask has the input's dtype)."""
    e = torch.empty(0, dtype=dtype).element_size()
    measured = measure(lambda *t: attention(*t, p_drop=0.1 if dropout else 0.0), *qkv(b, n, s, d, dtype))
    got = attention_saved_bytes(b, n, s, d, elem_bytes=e, dropout=dropout, mask_bytes=e)
    call = f"attention_saved_bytes({b}, {n}, {s}, {d}, elem_bytes={e}, dropout={dropout}, mask_bytes={e})"
    # with dropout six distinct tensors are saved; without, softmax's output is saved twice (one storage)
    assert_exact(got["total"] if isinstance(got, dict) else got, measured["unique_bytes"], f"{call}['total']",
                 unit="B", why=f"autograd saved {measured['count']} tensors, {measured['unique_bytes']} B of "
                 "distinct storage, for this attention on the CPU")


@grade(attention_saved_bytes, "correctness", points=1, validation=True,
       hint="Raise ValueError naming the argument: sizes are ints >= 1, dropout a bool.")
def test_attention_ledger_rejects_bad_arguments():
    assert_rejects_all(attention_saved_bytes, [
        ((0, 32, 8192, 128), "batch"), ((2, -1, 8192, 128), "n_heads"), ((2, 32, 8192.0, 128), "seq"),
        ((2, 32, 8192, 0), "head_dim"), ((2, 32, 8192, 128, 2.0), "elem_bytes"),
        ((2, 32, 8192, 128, 2, 1), "dropout"), ((2, 32, 8192, 128, 2, True, 0), "mask_bytes"),
    ])


# ---- saved_tensor_bytes ------------------------------------------------------------------------


def vector(n: int = 1024, dtype=torch.float32) -> torch.Tensor:
    return torch.arange(n, dtype=dtype).requires_grad_()


def assert_saved(got: object, want: dict[str, int], call: str) -> None:
    if not isinstance(got, dict) or not set(want) <= set(got):
        raise AssertionError(f"{call} = {got!r}, expected a dict with keys {sorted(want)}: {want}")
    for key, why in [("count", "one per tensor pack() receives"),
                     ("bytes", "numel · element_size of each saved tensor, a tensor saved twice counted twice"),
                     ("unique_bytes", "nbytes() of each distinct storage, once")]:
        assert_exact(got[key], want[key], f"{call}[{key!r}]", unit="B" if key != "count" else "", why=why)


@grade(saved_tensor_bytes, "correctness", points=3,
       hint="x * x saves x twice: how many bytes is that, and how many bytes of memory really stay alive?")
def test_saved_bytes_worked_examples():
    x = vector()
    assert_saved(saved_tensor_bytes(lambda t: t * t, x), {"count": 2, "bytes": 8192, "unique_bytes": 4096},
                 "saved_tensor_bytes(lambda t: t * t, x) with x 1024 fp32")
    assert_saved(saved_tensor_bytes(lambda t: t * 3.0, x), {"count": 0, "bytes": 0, "unique_bytes": 0},
                 "saved_tensor_bytes(lambda t: t * 3.0, x): d(3t)/dt needs no tensor")
    assert_saved(saved_tensor_bytes(lambda t: t[:600] * t[424:], x),
                 {"count": 2, "bytes": 4800, "unique_bytes": 4096},
                 "saved_tensor_bytes(lambda t: t[:600] * t[424:], x): two overlapping views of one storage")
    assert_saved(saved_tensor_bytes(lambda t: torch.native_dropout(t, 0.5, True), x),
                 {"count": 1, "bytes": 1024, "unique_bytes": 1024},
                 "saved_tensor_bytes(native_dropout, x): the mask is a bool tensor, 1 byte per element")


@grade(saved_tensor_bytes, "correctness", points=2,
       hint="Pass the arguments through to fn; the attention saves Q, K, P, the mask, P' and V.")
def test_saved_bytes_attention():
    """fp32, B=2, n=4, S=16, d=8: six tensors, 36,864 B = the ledger with a 4-byte CPU mask."""
    q, k, v = qkv(2, 4, 16, 8)
    assert_saved(saved_tensor_bytes(attention, q, k, v), {"count": 6, "bytes": 36_864, "unique_bytes": 36_864},
                 "saved_tensor_bytes(attention, q, k, v) with dropout")
    assert_saved(saved_tensor_bytes(lambda *t: attention(*t, p_drop=0.0), q, k, v),
                 {"count": 5, "bytes": 28_672, "unique_bytes": 20_480},
                 "saved_tensor_bytes(attention without dropout, q, k, v): P is saved by softmax and by P·V")


@grade(saved_tensor_bytes, "correctness", points=3,
       hint="Key distinct storages by the storage's data_ptr, not the tensor's: a view starts inside it.")
@settings(max_examples=12)
@given(n=st.integers(1, 300), cuts=st.lists(st.integers(0, 299), min_size=3, max_size=3),
       dtype=st.sampled_from([torch.float16, torch.float32, torch.float64]), twice=st.booleans(),
       mask=st.booleans())
def test_saved_bytes_views_and_dtypes(n, cuts, dtype, twice, mask):
    """Products of random slices of one or two tensors, optional bool dropout masks: against the test's hooks."""
    i, j = cuts[0] % n, cuts[1] % n
    length = 1 + cuts[2] % (n - max(i, j))
    x, y = vector(n, dtype), vector(n, dtype)
    other = x if twice else y

    def fn(t, u):
        out = t[i:i + length] * u[j:j + length]
        return torch.native_dropout(out, 0.5, True)[0] if mask else out

    call = (f"saved_tensor_bytes(fn, x, {'x' if twice else 'y'}) with {n} {dtype}, fn = t[{i}:{i + length}] * "
            f"u[{j}:{j + length}]" + (" then native_dropout" if mask else ""))
    assert_saved(saved_tensor_bytes(fn, x, other), measure(fn, x, other), call)


@grade(saved_tensor_bytes, "correctness", points=1, validation=True, hint="Is fn something you can call?")
def test_saved_bytes_rejects_bad_arguments():
    assert_rejects(saved_tensor_bytes, (None, vector()), "fn")
    assert_rejects(saved_tensor_bytes, (vector(), vector()), "fn")


# ---- checkpoint_plan ---------------------------------------------------------------------------


def plan(n: int, act: int, inp: int) -> dict[str, int]:
    peak, k = min((k * inp + math.ceil(n / k) * act, k) for k in range(1, n + 1))
    return {"segments": k, "peak_bytes": peak, "no_ckpt_bytes": n * act, "recompute_flops_pct": 33}


@grade(checkpoint_plan, "correctness", points=3,
       hint="√L is where the two terms balance for equal per-layer costs; what if a checkpoint is cheaper?")
def test_checkpoint_plan_worked_numbers():
    """(32,1,1) → 4 segments (the ties 4, 5, 6, 8 → the smallest); a LLaMA block (34·sbh kept, 2·sbh input)."""
    for args, want in [((32, 1, 1), {"segments": 4, "peak_bytes": 12, "no_ckpt_bytes": 32}),
                       ((32, 34, 2), {"segments": 32, "peak_bytes": 98, "no_ckpt_bytes": 1088}),
                       ((80, 34, 2), {"segments": 40, "peak_bytes": 148, "no_ckpt_bytes": 2720})]:
        assert_named_parts(checkpoint_plan(*args), {**want, "recompute_flops_pct": 33}, f"checkpoint_plan{args}")


@grade(checkpoint_plan, "correctness", points=2,
       hint="Try every k: the last segment may be shorter, so a segment holds ⌈L/k⌉ layers, not L/k.")
@settings(max_examples=50)
@given(n=st.integers(1, 300), act=st.integers(0, 10**6), inp=st.integers(0, 10**6))
def test_checkpoint_plan_brute_force(n, act, inp):
    assert_named_parts(checkpoint_plan(n, act, inp), plan(n, act, inp), f"checkpoint_plan({n}, {act}, {inp})")


@grade(checkpoint_plan, "correctness", points=1, validation=True, hint="Raise ValueError naming the argument.")
def test_checkpoint_plan_rejects_bad_arguments():
    assert_rejects_all(checkpoint_plan, [
        ((0, 1, 1), "n_layers"), ((32.0, 1, 1), "n_layers"), ((32, -1, 1), "act_bytes_per_layer"),
        ((32, 1, 1.5), "input_bytes_per_layer"),
    ])


# ---- checkpointed_forward ----------------------------------------------------------------------


class Block(nn.Module):
    """Linear + tanh that logs each forward call into a shared list."""

    def __init__(self, index: int, log: list[int], g: torch.Generator):
        super().__init__()
        self.index, self.log = index, log
        self.linear = nn.Linear(WIDTH, WIDTH)
        with torch.no_grad():
            self.linear.weight.copy_(torch.randn(WIDTH, WIDTH, generator=g) / 4)
            self.linear.bias.copy_(torch.randn(WIDTH, generator=g) / 4)

    def forward(self, x):
        self.log.append(self.index)
        return torch.tanh(self.linear(x))


def make(n_blocks: int, x_grad: bool, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    log: list[int] = []
    blocks = [Block(i, log, g) for i in range(n_blocks)]
    x = torch.randn(4, WIDTH, generator=g).requires_grad_(x_grad)
    return blocks, x, log


def plain_grads(n_blocks: int, x_grad: bool, seed: int = 0):
    blocks, x, _ = make(n_blocks, x_grad, seed)
    y = x
    for block in blocks:
        y = block(y)
    y.square().sum().backward()
    return y.detach(), [p.grad for b in blocks for p in b.parameters()], x.grad


def groups(n: int, segments: int) -> list[list[int]]:
    base, extra = divmod(n, segments)
    sizes, start, out = [base + 1] * extra + [base] * (segments - extra), 0, []
    for size in sizes:
        out.append(list(range(start, start + size)))
        start += size
    return out


def run_checkpointed(n_blocks: int, segments: int, x_grad: bool):
    """Forward under the test's hooks, then backward: (measured, output, grads, x.grad, forward log, backward log).

    Run where the learner's code runs (where_learner_runs): the learner's forward builds its graph on this check's
    blocks, the backward runs through it there, and only data comes back; the expected training is the judge's own
    (plain_grads, on blocks of its own)."""
    blocks, x, log = make(n_blocks, x_grad)
    out = []
    saved = measure(lambda t: out.append(checkpointed_forward(blocks, t, segments)), x)
    y = out[0]
    call = f"checkpointed_forward({n_blocks} blocks, x (requires_grad={x_grad}), {segments})"
    if not isinstance(y, torch.Tensor) or y.shape != x.shape:
        raise AssertionError(f"{call} returned {y!r}, expected a tensor of shape {tuple(x.shape)}")
    forward_log = list(log)
    try:
        y.square().sum().backward()
    except RuntimeError as exc:
        raise AssertionError(f"{call}: backward failed ({exc}). With use_reentrant=True the checkpoint's output "
                             "needs an input that requires grad; use use_reentrant=False") from None
    return (saved, y.detach(), [p.grad for b in blocks for p in b.parameters()], x.grad, forward_log,
            log[len(forward_log):])


def assert_same_training(n_blocks: int, segments: int, x_grad: bool) -> None:
    call = f"checkpointed_forward({n_blocks} blocks, x (requires_grad={x_grad}), {segments})"
    saved, y, grads, x_grad_got, forward_log, backward_log = where_learner_runs(run_checkpointed, n_blocks, segments,
                                                                                 x_grad)
    want_y, want_grads, want_x_grad = plain_grads(n_blocks, x_grad)
    torch.testing.assert_close(y.detach(), want_y, rtol=1e-6, atol=1e-6, msg=f"{call}: output differs from the chain")
    for i, (got, want) in enumerate(zip(grads, want_grads, strict=True)):
        if got is None:
            raise AssertionError(f"{call}: parameter {i} got no gradient; the blocks' weights must be trained "
                                 "even when x does not require grad (use_reentrant=False)")
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6, msg=f"{call}: gradient of parameter {i}")
    if x_grad:
        torch.testing.assert_close(x_grad_got, want_x_grad, rtol=1e-6, atol=1e-6, msg=f"{call}: x.grad")
    per_input = 4 * WIDTH * 4
    assert_exact(saved["bytes"], segments * per_input, f"bytes saved for backward outside the checkpoints by {call}",
                 unit="B", why=f"only the {segments} segment inputs ({per_input} B each) may stay alive; every "
                 "segment, the last one too, goes through checkpoint()")
    assert forward_log == list(range(n_blocks)), (
        f"{call}: the forward ran the blocks {forward_log}, expected each once in order {list(range(n_blocks))}")
    want_back = [i for group in reversed(groups(n_blocks, segments)) for i in group]
    assert backward_log == want_back, (
        f"{call}: the backward reran the blocks in the order {backward_log}, expected {want_back}: each "
        f"group of split_sizes({n_blocks}, {segments}) is recomputed once, last group first")


@grade(checkpointed_forward, "correctness", points=3,
       hint="Which tensors must autograd keep outside the checkpoints, and how often does each block run?")
def test_checkpointed_forward_six_blocks():
    """6 blocks, 3 segments, x without grad: 768 B outside (3 × 256 B), each block twice, grads as the plain chain."""
    assert_same_training(6, 3, x_grad=False)


@grade(checkpointed_forward, "correctness", points=3,
       hint="split_sizes gives the groups, larger first; is the last group checkpointed too?")
@pytest.mark.parametrize("n_blocks, segments, x_grad", [(10, 4, True), (5, 5, False), (4, 1, True)])
def test_checkpointed_forward_groups(n_blocks, segments, x_grad):
    assert_same_training(n_blocks, segments, x_grad)


@grade(checkpointed_forward, "correctness", points=1, validation=True,
       hint="Raise ValueError naming segments when it is not between 1 and len(blocks).")
def test_checkpointed_forward_rejects_bad_arguments():
    blocks, x, _ = make(6, False)
    for segments in (0, 7, 2.0):
        assert_rejects(checkpointed_forward, (blocks, x, segments), "segments")
