"""L28 (+ L19) · DDP's buckets: the assignment rule, the overlap timeline, and a bucketed reducer on gloo."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.kit import assert_exact, assert_number, assert_rejects, assert_rejects_all, grade, learner

UNIT = "l28_ddp_buckets"
assign_buckets = learner(UNIT, "ddp", "assign_buckets")
ddp_backward_timeline = learner(UNIT, "ddp", "ddp_backward_timeline")
BucketedReducer = learner(UNIT, "ddp", "BucketedReducer", audited=True)

MiB = 1 << 20
L19 = [1 * MiB, 5 * MiB, 1 * MiB, 8 * MiB, 1 * MiB, 6 * MiB]  # lecture 19 §2.3, parameters 0..5


def reference_buckets(sizes: list[int], cap: int, first: int | None = None) -> list[list[int]]:
    """The grader's rule: last parameter first, whole tensors, a bucket closes once it reaches its cap."""
    buckets: list[list[int]] = [[]]
    filled = 0
    for i in reversed(range(len(sizes))):
        buckets[-1].append(i)
        filled += sizes[i]
        if filled >= (cap if len(buckets) > 1 or first is None else first):
            buckets.append([])
            filled = 0
    return [b for b in buckets if b]


def show(buckets: list[list[int]], sizes: list[int]) -> str:
    return ", ".join(f"{b} ({sum(sizes[i] for i in b) / MiB:g} MiB)" for b in buckets)


# ---- assign_buckets --------------------------------------------------------------------------------------------


@grade(assign_buckets, "correctness", points=3,
       hint="Which gradient does the backward produce first, and does a bucket ever hold part of a tensor?")
def test_assign_buckets_lecture_19_walk():
    """Lecture 19 §2.3's six parameters (1, 5, 1, 8, 1, 6 MiB), checked against torch 2.13's own DDP."""
    cases = [
        ((L19, 10 * MiB), [[5, 4, 3], [2, 1, 0]], "cap 10 MiB: 15 + 7 MiB, parameter 3 is not split"),
        ((L19, 25 * MiB, 1 * MiB), [[5], [4, 3, 2, 1, 0]], "DDP's default: a 1 MiB first bucket, then 25 MiB"),
        ((L19, 25 * MiB), [[5, 4, 3, 2, 1, 0]], "cap 25 MiB everywhere: one bucket"),
        ((L19, 2 * MiB), [[5], [4, 3], [2, 1], [0]], "cap 2 MiB"),
        (([5, 5, 5, 5], 10), [[3, 2], [1, 0]], "a bucket closes when it REACHES its cap"),
        (([], 10), [], "no parameters"),
    ]
    for args, want, why in cases:
        got = assign_buckets(*args)
        assert got == want, (f"assign_buckets({', '.join(map(repr, args))}) = {got}, expected {want} ({why}); "
                             "walk from the last parameter to the first and close a bucket once it reaches its cap")


@grade(assign_buckets, "correctness", points=3,
       hint="Is every bucket but the last at its cap, and would it be below it without its last tensor?")
@given(sizes=st.lists(st.integers(0, 64), max_size=40), cap=st.integers(1, 200),
       first=st.none() | st.integers(1, 200))
def test_assign_buckets_rule_on_any_sizes(sizes, cap, first):
    """The buckets partition the parameters in reverse order; closed ones reach their cap with their last tensor."""
    got = assign_buckets(sizes, cap, first)
    call = f"assign_buckets({sizes}, {cap}, {first})"
    flat = [i for b in got for i in b]
    assert flat == list(reversed(range(len(sizes)))), (
        f"{call} = {got}: concatenated, the buckets must be {len(sizes) - 1} … 0 (gradient-ready order), each "
        "parameter exactly once")
    assert all(got), f"{call} = {got} holds an empty bucket"
    assert got == reference_buckets(sizes, cap, first), (
        f"{call} = {got}, expected {reference_buckets(sizes, cap, first)}: every bucket but the last must reach its "
        f"cap (the first bucket's cap is first_cap_bytes) and close with the tensor that made it reach it")


@grade(assign_buckets, "correctness", points=1, validation=True,
       hint="Raise ValueError naming the argument: a negative size (with its index), a zero cap, a float.")
def test_assign_buckets_rejects_bad_arguments():
    assert_rejects_all(assign_buckets, [
        (([1, -2, 3], 10), "param_bytes[1]"),
        (([1, 2.5], 10), "param_bytes[1]"),
        (([1, 2], 0), "cap_bytes"),
        (([1, 2], 10, 0), "first_cap_bytes"),
        (([1, 2], 1.5), "cap_bytes"),
        (("12", 10), "param_bytes"),
    ])


# ---- ddp_backward_timeline ---------------------------------------------------------------------------------------


def reference_timeline(ready_s, sizes, cap, world, alpha, beta, first=None) -> dict:
    buckets = reference_buckets(sizes, cap, first)
    nbytes = [sum(sizes[i] for i in b) for b in buckets]
    ready = [max(ready_s[i] for i in b) for b in buckets]
    start, end, t = [], [], 0.0
    for b, n in enumerate(nbytes):
        s = max(ready[b], t) if b else ready[b]
        t = s + (0.0 if world == 1 else 2 * (world - 1) * alpha + 2 * (world - 1) / world * n / beta)
        start.append(s)
        end.append(t)
    backward = max(ready_s, default=0.0)
    exposed = max(0.0, end[-1] - backward) if end else 0.0
    return {"buckets": buckets, "bucket_bytes": nbytes, "ready_s": ready, "start_s": start, "end_s": end,
            "backward_s": backward, "exposed_s": exposed, "step_s": backward + exposed}


def assert_timeline(got: dict, want: dict, call: str, rel: float = 1e-12) -> None:
    assert isinstance(got, dict) and set(want) <= set(got), (
        f"{call} returned keys {sorted(got) if isinstance(got, dict) else got!r}, expected {sorted(want)}")
    assert got["buckets"] == want["buckets"], f"{call}['buckets'] = {got['buckets']}, expected {want['buckets']}"
    for b, n in enumerate(want["bucket_bytes"]):
        assert_exact(got["bucket_bytes"][b], n, f"{call}['bucket_bytes'][{b}]", unit="B")
    for key in ("ready_s", "start_s", "end_s"):
        assert len(got[key]) == len(want[key]), f"{call}['{key}'] has {len(got[key])} entries, expected one per bucket"
        for b, t in enumerate(want[key]):
            assert_number(got[key][b], t, f"{call}['{key}'][{b}] (bucket {want['buckets'][b]})", rel=rel, abs_tol=1e-15)
    for key in ("backward_s", "exposed_s", "step_s"):
        assert_number(got[key], want[key], f"{call}['{key}']", rel=rel, abs_tol=1e-15)


@grade(ddp_backward_timeline, "correctness", points=2,
       hint="When can bucket b's all-reduce start if bucket b−1's is still on the stream?")
def test_timeline_worked_examples():
    """Four one-parameter buckets ready at 10/20/30/40 ms, 12 ms each → ends 22, 34, 46, 58 ms, 18 ms exposed.

    Lecture 19's rule T = T_comp + max(0, T_comm − T_overlap) is the one-bucket case: 50 ms of backward and a
    30 ms all-reduce hidden behind it → 50 ms; a 70 ms all-reduce that can only start at 0 → 70 ms.
    """
    # P = 2, α = 6 ms, β huge: each all-reduce lasts 2(P−1)α = 12 ms.
    got = ddp_backward_timeline([0.040, 0.030, 0.020, 0.010], [1, 1, 1, 1], 1, 2, 0.006, 1e30)
    call = "ddp_backward_timeline([40, 30, 20, 10] ms, [1, 1, 1, 1] B, cap 1 B, P=2, α=6 ms)"
    for b, t in enumerate([0.022, 0.034, 0.046, 0.058]):
        assert_number(got["end_s"][b], t, f"{call}['end_s'][{b}]", rel=1e-12)
    assert_number(got["exposed_s"], 0.018, f"{call}['exposed_s']", rel=1e-12)
    assert_number(got["step_s"], 0.058, f"{call}['step_s']", rel=1e-12)
    # one bucket: 30 ms of communication starting at 0 (β = 1 B/s: 2(P−1)/P · 0.03 B), behind a 50 ms backward
    one = ddp_backward_timeline([0.0, 0.050], [0, 0], 1, 2, 0.0, 1.0)
    assert_number(one["exposed_s"], 0.0, "one idle bucket behind 50 ms of backward: exposed", abs_tol=1e-15)
    late = ddp_backward_timeline([0.0], [70], 10**9, 2, 0.0, 1000.0)
    assert_number(late["step_s"], 0.070, "one 70 ms all-reduce after a 0 ms backward: step", rel=1e-12)


@grade(ddp_backward_timeline, "correctness", points=3,
       hint="What happens to 2(P−1)·α when 24 small buckets each pay it, and to the overlap with one big bucket?")
def test_timeline_bucket_cap_sweep_lab_5_2():
    """Lecture 28 lab 5.2's model: 24 × Linear(2048, 2048) + Linear(2048, 100), fp32, 1.5 ms of backward per
    layer, P = 8, α = 100 µs, β = 50 GB/s. Exposed communication: 13.228 ms at 1 and 5 MiB (latency-bound),
    2.575 ms at 25 MiB (the optimum), 15.528 ms with one 400 MiB bucket (no overlap)."""
    sizes, ready = [], []
    for layer in range(25):
        out = 100 if layer == 24 else 2048
        sizes += [out * 2048 * 4, out * 4]
        ready += [(25 - layer) * 1.5e-3] * 2
    exposed = {}
    for cap_mib in (1, 5, 25, 50, 100, 200, 400):
        call = f"ddp_backward_timeline(lab 5.2, cap {cap_mib} MiB, P=8, α=100 µs, β=50 GB/s)"
        got = ddp_backward_timeline(ready, sizes, cap_mib * MiB, 8, 100e-6, 50e9)
        assert_timeline(got, reference_timeline(ready, sizes, cap_mib * MiB, 8, 100e-6, 50e9), call)
        exposed[cap_mib] = got["exposed_s"]
    for cap_mib, ms in ((1, 13.228428720), (25, 2.574978560), (400, 15.528428720)):
        assert_number(exposed[cap_mib] * 1e3, ms, f"exposed ms at {cap_mib} MiB", rel=1e-9)
    assert min(exposed, key=exposed.get) == 25, f"the sweep's optimum should be 25 MiB, got exposed {exposed}"


@grade(ddp_backward_timeline, "correctness", points=2,
       hint="Does a bucket become ready with its first gradient or its last one?")
@given(data=st.data(), n=st.integers(1, 12), world=st.integers(1, 8))
def test_timeline_any_order_of_gradients(data, n, world):
    """Gradient times in any order (not only reverse registration), any cap, any first cap."""
    sizes = data.draw(st.lists(st.integers(0, 10**6), min_size=n, max_size=n))
    ready = data.draw(st.lists(st.floats(0, 1.0, allow_nan=False), min_size=n, max_size=n))
    cap = data.draw(st.integers(1, 3 * 10**6))
    first = data.draw(st.none() | st.integers(1, 3 * 10**6))
    alpha, beta = data.draw(st.floats(0, 1e-3)), data.draw(st.floats(1e6, 1e12))
    got = ddp_backward_timeline(ready, sizes, cap, world, alpha, beta, first)
    call = f"ddp_backward_timeline({ready}, {sizes}, {cap}, {world}, {alpha}, {beta}, {first})"
    assert_timeline(got, reference_timeline(ready, sizes, cap, world, alpha, beta, first), call, rel=1e-9)


@grade(ddp_backward_timeline, "correctness", points=1, validation=True,
       hint="Raise ValueError naming the argument: lengths that differ, a negative time, a zero bandwidth.")
def test_timeline_rejects_bad_arguments():
    assert_rejects(ddp_backward_timeline, ([0.1], [1, 2], 10, 2, 0.0, 1e9), "grad_ready_s")
    assert_rejects(ddp_backward_timeline, ([0.1, -0.1], [1, 2], 10, 2, 0.0, 1e9), "grad_ready_s[1]")
    assert_rejects(ddp_backward_timeline, ([0.1], [1], 10, 2, 0.0, 0.0), "bytes_per_s")
    assert_rejects(ddp_backward_timeline, ([0.1], [1], 10, 0, 0.0, 1e9), "world_size")
    assert_rejects(ddp_backward_timeline, ([0.1], [1], 10, 2, -1.0, 1e9), "alpha_s")


# ---- BucketedReducer on gloo -------------------------------------------------------------------------------------

DIMS = (32, 64, 64, 48, 10)  # 4-layer fp64 MLP: 8 parameters, 9,274 of them
CONFIGS = ((4096, 1), (4096, 3), (30_000, 2), (10**9, 3))  # (cap, micro-batches): caps give 4, 2, 1 buckets
BATCH = 6
STEPS = 2


def _mlp(seed: int):
    import torch

    g = torch.Generator().manual_seed(seed)
    params = []
    for fan_in, fan_out in zip(DIMS, DIMS[1:], strict=False):
        params += [torch.randn(fan_out, fan_in, generator=g, dtype=torch.float64) / fan_in**0.5,
                   torch.randn(fan_out, generator=g, dtype=torch.float64) * 0.1]
    return params


def _forward(params, x):
    import torch
    import torch.nn.functional as F

    for i in range(0, len(params), 2):
        x = F.linear(x, params[i], params[i + 1])
        if i < len(params) - 2:
            x = torch.tanh(x)
    return x


def _batch(step: int, seed: int, micro: int):
    """A rank's micro-batch, from its secret seed for the check (rank_seed()): no rank can rebuild another's."""
    import torch

    g = torch.Generator().manual_seed(seed + 100 * step + micro)
    return torch.randn(BATCH, DIMS[0], generator=g, dtype=torch.float64), torch.randint(0, DIMS[-1], (BATCH,),
                                                                                          generator=g)


def _train(rank: int, world_size: int, cap: int, k: int, probe: list | None = None) -> dict:
    """STEPS steps of k micro-batches (the first k−1 under no_sync), SGD (lr 0.1) between steps: the grads."""
    import torch
    import torch.nn.functional as F

    from grader.kit import rank_seed

    seed = rank_seed()
    params = [torch.nn.Parameter(p) for p in _mlp(28)]
    if probe is not None:  # registered BEFORE the reducer's hooks: runs first when parameter 0's gradient lands
        params[0].register_post_accumulate_grad_hook(lambda p: probe.append(len(_LAUNCHES)))
    reducer = BucketedReducer(params, cap)
    out = {"buckets": [list(b) for b in reducer.buckets], "steps": []}
    for step in range(STEPS):
        for j in range(k):
            x, y = _batch(step, seed, j)
            if j < k - 1:
                with reducer.no_sync():
                    F.cross_entropy(_forward(params, x), y).backward()
                    reducer.finish()
            else:
                F.cross_entropy(_forward(params, x), y).backward()
                reducer.finish()
        out["steps"].append([p.grad.detach().clone() if p.grad is not None else None for p in params])
        with torch.no_grad():
            for p in params:
                p -= 0.1 * (p.grad if p.grad is not None else 0)
                p.grad = None
    return out


@functools.cache
def _reference(world_size: int, k: int, seeds: tuple[int, ...]) -> list:
    """Single process (the grader's, in the test): per step the gradient of Σ_r Σ_j CE(r, j) / P, then the same
    SGD step as the ranks take; rank r's micro-batches from its seed."""
    import torch
    import torch.nn.functional as F

    params = [p.clone().requires_grad_() for p in _mlp(28)]
    steps = []
    for step in range(STEPS):
        loss = sum(F.cross_entropy(_forward(params, x), y) for r in range(world_size)
                   for x, y in (_batch(step, seeds[r], j) for j in range(k))) / world_size
        grads = torch.autograd.grad(loss, params)
        steps.append(grads)
        with torch.no_grad():
            for p, g in zip(params, grads, strict=True):
                p -= 0.1 * g
    return steps


_LAUNCHES: list = []  # all_reduce calls seen by the overlap probe (inside a rank only)


def check_reducer(rank: int, world_size: int) -> dict:
    """Caps giving 4, 2 and 1 buckets, with 1 to 3 micro-batches (k − 1 of them under no_sync)."""
    return {(cap, k): _train(rank, world_size, cap, k) for cap, k in CONFIGS}


def check_comm(rank: int, world_size: int) -> dict:
    """One configuration alone (its communication log is this check's): cap 4096 B, 3 micro-batches."""
    return _train(rank, world_size, 4096, 3)


def check_overlap(rank: int, world_size: int) -> dict:
    """The probe on parameter 0 counts the all-reduces launched before the backward's last gradient."""
    import torch.distributed as dist
    from torch.distributed import distributed_c10d as c10d

    original = c10d.all_reduce

    def counted(*args, **kwargs):
        _LAUNCHES.append(1)
        return original(*args, **kwargs)

    _LAUNCHES.clear()
    probe: list = []
    dist.all_reduce = c10d.all_reduce = counted  # one object in both namespaces
    try:
        out = _train(rank, world_size, 4096, 1, probe)
    finally:
        dist.all_reduce = c10d.all_reduce = original
    return {"probe": probe, "launched": len(_LAUNCHES), "buckets": out["buckets"]}


@functools.cache
def _runs(world_size: int):
    from grader.kit import run_ranks

    checks = {"reducer": check_reducer, "comm": check_comm, "overlap": check_overlap}
    wanted = {2: checks, 3: ("reducer", "overlap"), 4: ("reducer", "comm")}[world_size]  # what the tests read
    return run_ranks({name: checks[name] for name in wanted}, world_size, timeout_s=60.0)


@functools.cache
def _unused():
    """In a run of its own: what a reducer sends before it finds the unused parameters is its own business, and
    would count against the wire of the runs above."""
    from grader.kit import run_ranks

    return run_ranks(check_unused, 2, timeout_s=60.0)


def _sizes() -> list[int]:
    return [p.numel() * 8 for p in _mlp(28)]


def _bucket_calls(configs) -> list[tuple[str, int]]:
    """A right reducer's calls over training runs of (cap, micro-batches): one all_reduce per bucket per step."""
    sizes = _sizes()
    return [("all_reduce", sum(sizes[i] for i in b)) for cap, _ in configs
            for _ in range(STEPS) for b in reference_buckets(sizes, cap)]


def _assert_wire(world_size: int) -> None:
    """Batch grading: the bytes on the loopback, counted by the judge, are what a right reducer sends in every check
    of the run (the test's own account of the calls, not the ranks' logs)."""
    calls = {"reducer": _bucket_calls(CONFIGS), "comm": _bucket_calls([(4096, 3)]),
             "overlap": _bucket_calls([(4096, 1)])}
    _runs(world_size).assert_wire("BucketedReducer", {n: [c] * world_size for n, c in calls.items()})


@grade(BucketedReducer, "correctness", points=4,
       hint="Which gradient does your hook see after a no_sync micro-batch, and what do you divide the sum by?")
@pytest.mark.parametrize("world_size", [2, 3, 4])
def test_reducer_equals_single_process_gradient(world_size):
    """Every .grad equals the single-process gradient of the mean over ranks of the micro-batch losses."""
    import torch

    run = _runs(world_size)["reducer"]
    for rank in range(world_size):
        for (cap, k), out in run.results[rank].items():
            want_buckets = reference_buckets(_sizes(), cap)
            assert out["buckets"] == want_buckets, (
                f"BucketedReducer(params, {cap}).buckets = {out['buckets']} on rank {rank}, expected {want_buckets} "
                "(assign_buckets of the parameters' byte sizes)")
            for step, (grads, wants) in enumerate(zip(out["steps"], _reference(world_size, k, tuple(run.seeds)),
                                                          strict=True)):
                for i, (got, want) in enumerate(zip(grads, wants, strict=True)):
                    where = (f"P={world_size}, rank {rank}, cap {cap} B ({len(want_buckets)} buckets), "
                             f"{k} micro-batches ({k - 1} under no_sync), step {step}, parameter {i}")
                    assert got is not None, f"{where}: .grad is None after finish()"
                    err = (got - want).abs().max().item()
                    assert torch.allclose(got, want, rtol=1e-12, atol=1e-15), (
                        f"{where}: .grad differs from the single-process gradient of Σ_r Σ_j CE / P by up to {err:.3g} "
                        f"(ratio got/want ≈ {(got.flatten()[0] / want.flatten()[0]).item():.4g}); average over the "
                        "ranks, and reduce the gradient accumulated over all micro-batches")


def check_unused(rank: int, world_size: int) -> str:
    """finish() after a backward that never reached the last layer (parameters 6 and 7)."""
    import torch

    from grader.kit import rank_seed

    params = [torch.nn.Parameter(p) for p in _mlp(28)]
    reducer = BucketedReducer(params, 10**9)
    x, _ = _batch(0, rank_seed(), 0)
    _forward(params[:6], x).sum().backward()
    try:
        reducer.finish()
    except RuntimeError as exc:
        return str(exc)
    return ""


@grade(BucketedReducer, "correctness", points=1,
       hint="What should finish() say about a parameter that got no gradient?")
def test_reducer_names_an_unused_parameter():
    run = _unused()
    for rank in range(2):
        msg = run.results[rank]
        assert msg and "6" in msg and "7" in msg, (
            f"rank {rank}: finish() after a backward that never reached parameters 6 and 7 (the last layer) "
            f"should raise RuntimeError naming them; got {msg!r}")


@grade(BucketedReducer, "efficiency", points=3,
       hint="How many all-reduces does one step need, and how many does a micro-batch under no_sync need?")
@pytest.mark.parametrize("world_size", [2, 4])
def test_reducer_one_all_reduce_per_bucket(world_size):
    """Cap 4096 B, 3 micro-batches (2 under no_sync), 2 steps: one all_reduce per bucket of the reducer's own
    ``buckets`` per step, the b-th carrying bucket b's bytes; nothing else (none inside no_sync)."""
    run = _runs(world_size)["comm"]
    sizes = _sizes()
    for rank in range(world_size):
        want = [("all_reduce", sum(sizes[i] for i in b)) for b in run.results[rank]["buckets"]] * STEPS
        got = run.comm[rank]
        assert got == want, (
            f"P={world_size}, rank {rank}: 2 steps of 3 micro-batches (2 under no_sync) called {got}; expected one "
            f"all_reduce per bucket per step: {want} (none inside no_sync, no per-parameter all-reduce, no other call)")
    _assert_wire(world_size)


@grade(BucketedReducer, "efficiency", points=3,
       hint="Is a bucket's all-reduce launched from the hook, while the backward still runs, or after it?")
@pytest.mark.parametrize("world_size", [2, 3])
def test_reducer_overlaps_the_backward(world_size):
    """When parameter 0's gradient (the backward's last) arrives, every bucket but the last is already launched."""
    run = _runs(world_size)["overlap"]
    for rank in range(world_size):
        r = run.results[rank]
        n = len(r["buckets"])
        assert r["probe"] and r["probe"][0] >= n - 1, (
            f"P={world_size}, rank {rank}: when the backward delivered parameter 0's gradient (its last), "
            f"{r['probe'][:1]} all-reduces had been launched; expected {n - 1} of the {n} buckets: launch each "
            "bucket from the gradient hook as soon as it is complete (async_op=True), not after the backward")
