"""L30 · Megatron tensor parallelism on gloo: shards, the conjugate operators f and g, a TP MLP equal to the dense
one."""

from __future__ import annotations

import functools

import pytest

from grader.kit import assert_rejects_all, grade, learner

UNIT = "l30_model_parallel"
shard_linear = learner(UNIT, "tensor_parallel", "shard_linear")
copy_to_tp = learner(UNIT, "tensor_parallel", "copy_to_tp", audited=True)
reduce_from_tp = learner(UNIT, "tensor_parallel", "reduce_from_tp", audited=True)
column_parallel_linear = learner(UNIT, "tensor_parallel", "column_parallel_linear", audited=True)
row_parallel_linear = learner(UNIT, "tensor_parallel", "row_parallel_linear", audited=True)
tp_mlp = learner(UNIT, "tensor_parallel", "tp_mlp", audited=True)

B, S, H, FFN = 2, 4, 8, 16  # lecture 30 lab 6.1's sizes
TOL = dict(rtol=1e-12, atol=1e-12)


def _randn(g, *shape):
    import torch

    return torch.randn(*shape, generator=g, dtype=torch.float64)


def _replicated() -> dict:
    """What every rank holds (seed 30, written here: any rank may know it): x, b2, dy (the output's gradient)."""
    import torch

    g = torch.Generator().manual_seed(30)
    return {"x": _randn(g, B, S, H), "b2": _randn(g, H) * 0.1, "dy": _randn(g, B, S, H)}


def _own(seed: int, world: int) -> dict:
    """What one rank alone holds, from its secret seed for the check (rank_seed()): its shards of W1 (rows), b1, W2
    (columns) and h (features), its loss gradient dy_r and its partial input x_r. No rank can rebuild another's."""
    import torch

    g, n = torch.Generator().manual_seed(seed), FFN // world
    return {"w1": _randn(g, n, H) / H**0.5, "b1": _randn(g, n) * 0.1, "w2": _randn(g, H, n) / FFN**0.5,
            "h": _randn(g, B, S, n), "dy_r": _randn(g, B, S, H), "x_r": _randn(g, B, S, H)}


def _mine(world: int) -> dict:
    """Inside a rank: the replicated tensors and this rank's own."""
    from grader.kit import rank_seed

    return {**_replicated(), **_own(rank_seed(), world)}


def _dense(seeds: tuple[int, ...]) -> dict:
    """The dense tensors the ranks' parts come from (the grader's side, from every rank's seed): x, W1 [FFN, H], b1,
    W2 [H, FFN], b2, dy, h, and the per-rank dys and xs; all fp64, nn.Linear layout."""
    import torch

    parts = [_own(seed, len(seeds)) for seed in seeds]
    return {**_replicated(), "w1": torch.cat([q["w1"] for q in parts]), "b1": torch.cat([q["b1"] for q in parts]),
            "w2": torch.cat([q["w2"] for q in parts], 1), "h": torch.cat([q["h"] for q in parts], 2),
            "dys": [q["dy_r"] for q in parts], "xs": [q["x_r"] for q in parts]}


def _dense_mlp_grads(d):
    """The dense MLP's output and gradients of Σ y·dy (the grader's reference, single process)."""
    import torch
    import torch.nn.functional as F

    x, w1, b1, w2, b2 = (d[k].clone().requires_grad_() for k in ("x", "w1", "b1", "w2", "b2"))
    y = F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2)
    grads = torch.autograd.grad((y * d["dy"]).sum(), [x, w1, b1, w2, b2])
    return y.detach(), dict(zip(("x", "w1", "b1", "w2", "b2"), grads, strict=True))


def _slice(t, dim: int, world: int, rank: int):
    n = t.shape[dim] // world
    return t.narrow(dim, rank * n, n)


# ---- shard_linear --------------------------------------------------------------------------------------------------


@grade(shard_linear, "correctness", points=2,
       hint="In nn.Linear's [out, in] weight, which dimension holds the output features, and where does the bias live?")
def test_shard_linear_slices():
    """Column: rows r·out/P … of W and the same slice of b. Row: columns r·in/P … of W, the bias whole. New tensors."""
    import torch

    d = _dense((31,))
    for world in (1, 2, 4):
        for rank in range(world):
            for style, w, b in (("column", d["w1"], d["b1"]), ("row", d["w2"], d["b2"])):
                got_w, got_b = shard_linear(w, b, world, rank, style)
                want_w = _slice(w, 0 if style == "column" else 1, world, rank)
                want_b = _slice(b, 0, world, rank) if style == "column" else b
                call = f"shard_linear(W {list(w.shape)}, b, world_size={world}, rank={rank}, style={style!r})"
                assert torch.equal(got_w, want_w), (
                    f"{call}: weight shard {list(got_w.shape)} is not {'rows' if style == 'column' else 'columns'} "
                    f"{rank}·{w.shape[0 if style == 'column' else 1] // world}… of W (nn.Linear's [out, in] layout: "
                    "column parallel splits the OUTPUT features, the rows)")
                assert torch.equal(got_b, want_b), (
                    f"{call}: bias {list(got_b.shape)}, expected {list(want_b.shape)} "
                    + ("(this rank's output features)" if style == "column" else "(whole: added once, after g)"))
                assert got_w.is_contiguous() and got_w.untyped_storage().data_ptr() != w.untyped_storage().data_ptr(), (
                    f"{call}: return a new contiguous tensor, not a view of the full weight")
        got_w, got_b = shard_linear(d["w1"], None, world, 0, "column")
        assert got_b is None, f"shard_linear(W, None, {world}, 0, 'column') should return None for the bias"


@grade(shard_linear, "correctness", points=1, validation=True,
       hint="Raise ValueError naming the argument: a third style, 3 ranks for 16 rows, rank 2 of 2, a 1-D weight.")
def test_shard_linear_rejects_bad_arguments():
    import torch

    w = torch.zeros(16, 8)
    assert_rejects_all(shard_linear, [((w, None, 2, 0, "diagonal"), "style"), ((w, None, 3, 0, "column"), "weight"),
                                      ((w, None, 3, 0, "row"), "weight"), ((w, None, 2, 2, "row"), "rank"),
                                      ((torch.zeros(16), None, 2, 0, "column"), "weight")])


# ---- on gloo: f, g, the parallel linears and the MLP ----------------------------------------------------------------


def check_f(rank: int, world_size: int) -> dict:
    """f: y = f(x) with x replicated, loss Σ y·dy_r (dy differs per rank)."""
    d = _mine(world_size)
    x = d["x"].clone().requires_grad_()
    y = copy_to_tp(x)
    (y * d["dy_r"]).sum().backward()
    return {"f_y": y.detach(), "f_grad": x.grad}


def check_g(rank: int, world_size: int) -> dict:
    """g: y = g(x_r) with x_r per rank, loss Σ y·dy."""
    d = _mine(world_size)
    xr = d["x_r"].clone().requires_grad_()
    before = xr.detach().clone()
    z = reduce_from_tp(xr)
    unchanged = bool((xr.detach() == before).all())
    (z * d["dy"]).sum().backward()
    return {"g_y": z.detach(), "g_grad": xr.grad, "g_input_kept": unchanged}


def check_column(rank: int, world_size: int) -> dict:
    d = _mine(world_size)
    w1 = d["w1"].clone().requires_grad_()
    b1 = d["b1"].clone().requires_grad_()
    x = d["x"].clone().requires_grad_()
    y = column_parallel_linear(x, w1, b1)
    (y * d["h"]).sum().backward()
    return {"col_y": y.detach(), "col_x": x.grad, "col_w": w1.grad, "col_b": b1.grad}


def check_row(rank: int, world_size: int) -> dict:
    d = _mine(world_size)
    w2 = d["w2"].clone().requires_grad_()
    b2 = d["b2"].clone().requires_grad_()
    hr = d["h"].clone().requires_grad_()
    z = row_parallel_linear(hr, w2, b2)
    (z * d["dy"]).sum().backward()
    return {"row_y": z.detach(), "row_x": hr.grad, "row_w": w2.grad, "row_b": b2.grad}


def _mlp(rank: int, world_size: int, backward: bool) -> dict:
    import torch

    d = _mine(world_size)
    shards = [d["w1"], d["b1"], d["w2"], d["b2"]]
    w1, b1, w2, b2 = (t.clone().requires_grad_(backward) for t in shards)
    x = d["x"].clone().requires_grad_(backward)
    with torch.set_grad_enabled(backward):
        y = tp_mlp(x, w1, b1, w2, b2)
    if not backward:
        return {"y": y.detach()}
    (y * d["dy"]).sum().backward()
    return {"y": y.detach(), "x": x.grad, "w1": w1.grad, "b1": b1.grad, "w2": w2.grad, "b2": b2.grad}


def check_mlp(rank: int, world_size: int) -> dict:
    return _mlp(rank, world_size, True)


def check_mlp_forward(rank: int, world_size: int) -> dict:
    return _mlp(rank, world_size, False)


CHECKS = {"f": check_f, "g": check_g, "column": check_column, "row": check_row, "mlp": check_mlp,
          "mlp_forward": check_mlp_forward}


@functools.cache
def _runs(world_size: int):
    from grader.kit import run_ranks

    return run_ranks(CHECKS, world_size, timeout_s=60.0)


def _close(got, want, what: str, advice: str) -> None:
    import torch

    assert got is not None, f"{what} is None: {advice}"
    assert got.shape == want.shape, f"{what} has shape {list(got.shape)}, expected {list(want.shape)}: {advice}"
    err = (got - want).abs().max().item()
    assert torch.allclose(got, want, **TOL), f"{what} differs from the dense reference by up to {err:.3g}: {advice}"


@grade(copy_to_tp, "correctness", points=2,
       hint="Every rank's copy of x feeds a different slice of the next layer: what is x's total gradient?")
@pytest.mark.parametrize("world_size", [2, 4])
def test_f_identity_forward_all_reduce_backward(world_size):
    import torch

    run = _runs(world_size)["f"]
    d = _dense(tuple(run.seeds))
    total = sum(d["dys"][:world_size], torch.zeros_like(d["x"]))
    for rank in range(world_size):
        r = run.results[rank]
        _close(r["f_y"], d["x"], f"P={world_size}, rank {rank}: copy_to_tp(x)", "f is the identity in the forward")
        _close(r["f_grad"], total, f"P={world_size}, rank {rank}: x.grad after copy_to_tp",
               "f's backward all-reduces (sums) the gradient over the ranks")


@grade(reduce_from_tp, "correctness", points=2,
       hint="The forward sums the ranks' partial outputs; what does the sum's gradient look like for each term?")
@pytest.mark.parametrize("world_size", [2, 4])
def test_g_all_reduce_forward_identity_backward(world_size):
    import torch

    run = _runs(world_size)["g"]
    d = _dense(tuple(run.seeds))
    total = sum(d["xs"][:world_size], torch.zeros_like(d["x"]))
    for rank in range(world_size):
        r = run.results[rank]
        _close(r["g_y"], total, f"P={world_size}, rank {rank}: reduce_from_tp(x_r)",
               "g all-reduces (sums) in the forward")
        _close(r["g_grad"], d["dy"], f"P={world_size}, rank {rank}: x_r.grad after reduce_from_tp",
               "g's backward is the identity (the output gradient is already the same on every rank)")
        assert r["g_input_kept"], f"P={world_size}, rank {rank}: reduce_from_tp modified its input; reduce a copy"


@grade(column_parallel_linear, "correctness", points=2,
       hint="This rank computes some output features; which of x's gradient contributions does it miss?")
@pytest.mark.parametrize("world_size", [2, 4])
def test_column_parallel_linear(world_size):
    import torch
    import torch.nn.functional as F

    run = _runs(world_size)["column"]
    d = _dense(tuple(run.seeds))
    x, w1, b1 = (d[k].clone().requires_grad_() for k in ("x", "w1", "b1"))
    y = F.linear(x, w1, b1)
    gx, gw, gb = torch.autograd.grad((y * d["h"]).sum(), [x, w1, b1])
    for rank in range(world_size):
        r, where = run.results[rank], f"P={world_size}, rank {rank}: column_parallel_linear"
        _close(r["col_y"], _slice(y.detach(), 2, world_size, rank), f"{where} output",
               "this rank's output features, F.linear(f(x), W_r, b_r)")
        _close(r["col_x"], gx, f"{where}: x.grad", "f (copy_to_tp) must sum x's gradient over the ranks")
        _close(r["col_w"], _slice(gw, 0, world_size, rank), f"{where}: W_r.grad", "the rows of the dense gradient")
        _close(r["col_b"], _slice(gb, 0, world_size, rank), f"{where}: b_r.grad", "the dense bias gradient's slice")


@grade(row_parallel_linear, "correctness", points=2,
       hint="The ranks' partial products are summed by g; how many times would a bias added before g be counted?")
@pytest.mark.parametrize("world_size", [2, 4])
def test_row_parallel_linear(world_size):
    import torch
    import torch.nn.functional as F

    run = _runs(world_size)["row"]
    d = _dense(tuple(run.seeds))
    h, w2, b2 = (d[k].clone().requires_grad_() for k in ("h", "w2", "b2"))
    z = F.linear(h, w2, b2)
    gh, gw, gb = torch.autograd.grad((z * d["dy"]).sum(), [h, w2, b2])
    for rank in range(world_size):
        r, where = run.results[rank], f"P={world_size}, rank {rank}: row_parallel_linear"
        _close(r["row_y"], z.detach(), f"{where} output", "g(F.linear(x_r, W_r)) + b: the bias once, after the sum")
        _close(r["row_x"], _slice(gh, 2, world_size, rank), f"{where}: x_r.grad", "g's backward is the identity")
        _close(r["row_w"], _slice(gw, 1, world_size, rank), f"{where}: W_r.grad", "the columns of the dense gradient")
        _close(r["row_b"], gb, f"{where}: b.grad", "the whole bias gradient, as in the dense layer")


@grade(tp_mlp, "correctness", points=3,
       hint="Which GELU does nn.GELU use by default, and does the MLP need any communication between its two layers?")
@pytest.mark.parametrize("world_size", [2, 4])
def test_tp_mlp_equals_dense(world_size):
    """x [2, 4, 8], FFN 16 (lecture 30 lab 6.1), fp64, loss Σ y·dy: output and every gradient equal the dense MLP's."""
    run = _runs(world_size)["mlp"]
    d = _dense(tuple(run.seeds))
    y, g = _dense_mlp_grads(d)
    for rank in range(world_size):
        r, where = run.results[rank], f"P={world_size}, rank {rank}: tp_mlp"
        parts = {"x": g["x"], "w1": _slice(g["w1"], 0, world_size, rank), "b1": _slice(g["b1"], 0, world_size, rank),
                 "w2": _slice(g["w2"], 1, world_size, rank), "b2": g["b2"]}
        _close(r["y"], y, f"{where} output", "column-parallel, exact (erf) GELU, row-parallel with the bias once")
        for k, want in parts.items():
            _close(r[k], want, f"{where}: {k}.grad", "compare with the dense MLP's gradient (its slice for shards)")


@grade(tp_mlp, "efficiency", points=3,
       hint="Where must the ranks talk at all: between the two layers, after the second, before the first?")
@pytest.mark.parametrize("world_size", [2, 4])
def test_tp_mlp_one_all_reduce_each_way(world_size):
    """One all_reduce of B·S·H·8 = 512 B in the forward (g) and one in the backward (f); nothing else."""
    fwd, both = _runs(world_size)["mlp_forward"], _runs(world_size)["mlp"]
    nbytes = B * S * H * 8
    for rank in range(world_size):
        for run, want, what in ((fwd, [("all_reduce", nbytes)], "the forward"),
                                (both, [("all_reduce", nbytes)] * 2, "a forward and a backward")):
            got = run.comm[rank]
            assert got == want, (
                f"P={world_size}, rank {rank}: tp_mlp's {what} called {got}; expected {want}: g all-reduces the "
                "row-parallel output once in the forward, f the input's gradient once in the backward, each a "
                f"[{B}, {S}, {H}] fp64 tensor ({nbytes} B)")
    # batch grading: the bytes on the loopback, counted by the judge, are what f and g send in every check of the run:
    # one all_reduce of a [B, S, H] tensor each time one of them communicates (the test's account, not the logs)
    times = {"f": 1, "g": 1, "column": 1, "row": 1, "mlp": 2, "mlp_forward": 1}
    _runs(world_size).assert_wire("tp_mlp", {n: [[("all_reduce", nbytes)] * k] * world_size for n, k in times.items()})
