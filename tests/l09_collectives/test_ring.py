"""L09 · Ring all-reduce from point-to-point sends: chunks, schedule and bytes (ledgers), then the ring on gloo."""

from __future__ import annotations

import functools
import re

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.kit import (
    COLLECTIVES,
    assert_exact,
    assert_parts,
    assert_rejects_all,
    comm_log,
    grade,
    learner,
    rank_seed,
    run_ranks,
)

UNIT = "l09_collectives"
ring_chunks = learner(UNIT, "ring", "ring_chunks")
ring_schedule = learner(UNIT, "ring", "ring_schedule")
ring_bytes_sent = learner(UNIT, "ring", "ring_bytes_sent")
ring_reduce_scatter = learner(UNIT, "ring", "ring_reduce_scatter", audited=True)
ring_all_gather = learner(UNIT, "ring", "ring_all_gather", audited=True)
ring_all_reduce = learner(UNIT, "ring", "ring_all_reduce", audited=True)

WORLDS = (2, 3, 4)
F64, F32 = torch.float64, torch.float32
# (numel, kind, dtype): fewer elements than ranks, uneven chunks, P | N for every P, a large odd size.
# "integers" are exactly summable (bit-equal to torch's own collectives in any order); "wide" spans 16 decades,
# where only the ring's own summation order gives the same bits.
CASES = ((1, "integers", F64), (3, "wide", F64), (7, "wide", F32), (12, "integers", F64), (1000, "integers", F64),
         (4099, "wide", F64))


def assert_named_parts(got: object, want: dict, what: str, **kw) -> None:
    """assert_parts on the keys the contract names: an extra key in the learner's dict is not a mistake."""
    assert_parts({k: got[k] for k in want if k in got} if isinstance(got, dict) else got, want, what, **kw)


# ---- references the test computes itself ------------------------------------------------------------------------


def _bounds(numel: int, world: int) -> list[tuple[int, int]]:
    """torch.tensor_split's bounds (checked against it in test_ring_chunks_worked), without allocating."""
    base, extra = divmod(numel, world)
    stops = [(c + 1) * base + min(c + 1, extra) for c in range(world)]
    return list(zip([0, *stops[:-1]], stops, strict=True))


def _bytes(numel: int, world: int, rank: int, elem: int) -> dict[str, int]:
    size = [b - a for a, b in _bounds(numel, world)]
    rs, ag = (numel - size[rank]) * elem, (numel - size[(rank + 1) % world]) * elem
    return {"reduce_scatter": rs, "all_gather": ag, "total": rs + ag}


# ---- ring_chunks -------------------------------------------------------------------------------------------------


@grade(ring_chunks, "correctness", points=2,
       hint="With 10 elements on 4 ranks, which chunks get the two elements left over, the first or the last?")
def test_ring_chunks_worked():
    for args, want in [((10, 4), [(0, 3), (3, 6), (6, 8), (8, 10)]), ((3, 4), [(0, 1), (1, 2), (2, 3), (3, 3)]),
                       ((8, 4), [(0, 2), (2, 4), (4, 6), (6, 8)]), ((0, 2), [(0, 0), (0, 0)]), ((5, 1), [(0, 5)])]:
        sizes = [t.numel() for t in torch.tensor_split(torch.empty(args[0]), args[1])]
        assert [b - a for a, b in want] == sizes and _bounds(*args) == want  # the test's own reference
        got = [tuple(b) for b in ring_chunks(*args)]
        assert got == want, (f"ring_chunks{args} = {got}, expected {want}: torch.tensor_split's bounds, the first "
                             "numel % P chunks one element longer")


@grade(ring_chunks, "correctness", points=2, hint="Do your chunks tile [0, numel) in order, without gaps?")
@settings(max_examples=25)
@given(numel=st.integers(0, 10**6), world=st.integers(1, 64))
def test_ring_chunks_match_tensor_split(numel, world):
    got = ring_chunks(numel, world)
    want = _bounds(numel, world)
    assert [tuple(b) for b in got] == want, f"ring_chunks({numel}, {world}) = {got[:5]}..., expected {want[:5]}..."
    for c, (start, stop) in enumerate(got):
        assert_exact(start, want[c][0], f"ring_chunks({numel}, {world})[{c}][0]")
        assert_exact(stop, want[c][1], f"ring_chunks({numel}, {world})[{c}][1]")


@grade(ring_chunks, "correctness", points=1, validation=True,
       hint="Raise ValueError naming the argument: a negative or float numel, zero ranks.")
def test_ring_chunks_rejects_bad_arguments():
    assert_rejects_all(ring_chunks, [((-1, 4), "numel"), ((10.0, 4), "numel"), ((10, 0), "world_size"),
                                     ((10, 2.0), "world_size"), ((True, 2), "numel")])


# ---- ring_schedule -----------------------------------------------------------------------------------------------


@grade(ring_schedule, "correctness", points=2,
       hint="After the reduce-scatter rank r must hold the full sum of chunk r: which chunk does it send first?")
def test_ring_schedule_worked():
    got = [tuple(t) for t in ring_schedule(4, 0)]
    want = [("reduce_scatter", 0, 3, 2), ("reduce_scatter", 1, 2, 1), ("reduce_scatter", 2, 1, 0),
            ("all_gather", 0, 0, 3), ("all_gather", 1, 3, 2), ("all_gather", 2, 2, 1)]
    assert got == want, f"ring_schedule(4, 0) = {got}, expected {want}"
    assert list(ring_schedule(1, 0)) == [], "one rank has nothing to send: []"
    got2 = [tuple(t) for t in ring_schedule(2, 1)]
    assert got2 == [("reduce_scatter", 0, 0, 1), ("all_gather", 0, 1, 0)], f"ring_schedule(2, 1) = {got2}"


@grade(ring_schedule, "correctness", points=2,
       hint="At every step, is the chunk rank r receives the one its left neighbour sends, for every P?")
@settings(max_examples=25)
@given(world=st.integers(2, 64), data=st.data())
def test_ring_schedule_is_a_ring(world, data):
    rank = data.draw(st.integers(0, world - 1))
    left = [tuple(t) for t in ring_schedule(world, (rank - 1) % world)]
    mine = [tuple(t) for t in ring_schedule(world, rank)]
    assert len(mine) == 2 * (world - 1), f"ring_schedule({world}, {rank}) has {len(mine)} steps, expected 2(P-1)"
    for (ph, s, _, recv), (lph, ls, lsend, _) in zip(mine, left, strict=True):
        assert (ph, s) == (lph, ls) and recv == lsend, (
            f"ring_schedule({world}, {rank}) step ({ph}, {s}) receives chunk {recv}, but rank {(rank - 1) % world} "
            f"sends chunk {lsend} at that step")
    rs = [t for t in mine if t[0] == "reduce_scatter"]
    ag = [t for t in mine if t[0] == "all_gather"]
    assert [t[1] for t in rs] == list(range(world - 1)) == [t[1] for t in ag], "steps 0..P-2 in each phase"
    assert sorted(t[2] for t in rs) == sorted(set(range(world)) - {rank}), (
        f"in the reduce-scatter rank {rank} must send every chunk but its own ({rank}): {[t[2] for t in rs]}")
    assert rs[-1][3] == rank, f"the reduce-scatter's last step must complete chunk {rank} on rank {rank}"
    assert ag[0][2] == rank, f"the all-gather starts by sending the rank's finished chunk {rank}"


@grade(ring_schedule, "correctness", points=1, validation=True,
       hint="Raise ValueError naming `rank` when it is not in 0..world_size-1.")
def test_ring_schedule_rejects_bad_arguments():
    assert_rejects_all(ring_schedule, [((4, 4), "rank"), ((4, -1), "rank"), ((0, 0), "world_size"),
                                       ((4, 1.0), "rank")])


# ---- ring_bytes_sent ---------------------------------------------------------------------------------------------


@grade(ring_bytes_sent, "correctness", points=2,
       hint="Which chunk does a rank never send in the reduce-scatter, and which one in the all-gather?")
def test_ring_bytes_sent_worked():
    """Lecture 28 §1.2: 4 MiB of fp32 on 4 ranks moves 3 MiB + 3 MiB per rank; uneven chunks differ per rank."""
    for r in range(4):
        assert_named_parts(ring_bytes_sent(2**20, 4, r, 4), {"reduce_scatter": 3 * 2**20, "all_gather": 3 * 2**20,
                                                             "total": 6 * 2**20},
                           f"ring_bytes_sent(2**20, 4, {r}, 4)", total="total", unit="B")
    for r, total in enumerate([112, 120, 128, 120]):
        assert_exact(ring_bytes_sent(10, 4, r, 8)["total"], total, f"ring_bytes_sent(10, 4, {r}, 8)['total']",
                     why="(N - |own chunk|) + (N - |right neighbour's chunk|) elements", unit="B")
    assert_named_parts(ring_bytes_sent(65537, 4, 0, 8), {"reduce_scatter": 393_216, "all_gather": 393_224,
                                                         "total": 786_440},
                       "ring_bytes_sent(65537, 4, 0, 8)", total="total")
    assert_named_parts(ring_bytes_sent(1000, 1, 0, 4), {"reduce_scatter": 0, "all_gather": 0, "total": 0},
                       "ring_bytes_sent(1000, 1, 0, 4)", total="total")


@grade(ring_bytes_sent, "correctness", points=2,
       hint="When P divides N every rank sends exactly 2(P-1)/P·N·e; does your ledger also hold when it does not?")
@settings(max_examples=25)
@given(numel=st.integers(0, 10**6), world=st.integers(1, 64), elem=st.sampled_from([1, 2, 4, 8]), data=st.data())
def test_ring_bytes_sent_properties(numel, world, elem, data):
    rank = data.draw(st.integers(0, world - 1))
    want = _bytes(numel, world, rank, elem) if world > 1 else {"reduce_scatter": 0, "all_gather": 0, "total": 0}
    what = f"ring_bytes_sent({numel}, {world}, {rank}, {elem})"
    assert_named_parts(ring_bytes_sent(numel, world, rank, elem), want, what, total="total", unit="B")
    if world > 1 and numel % world == 0:
        assert_exact(want["total"], 2 * (world - 1) * numel // world * elem, "2(P-1)/P·N·e")


@grade(ring_bytes_sent, "correctness", points=1, validation=True,
       hint="Raise ValueError naming the argument: a rank outside the ring, an element size of 0.")
def test_ring_bytes_sent_rejects_bad_arguments():
    assert_rejects_all(ring_bytes_sent, [((10, 4, 4, 4), "rank"), ((10, 4, 0, 0), "elem_bytes"),
                                         ((-1, 4, 0, 4), "numel"), ((10, 0, 0, 4), "world_size"),
                                         ((10.0, 4, 0, 4), "numel")])


# ---- the ring on gloo: per-rank checks (module level: they run in forked ranks) ------------------------------------


def _input(kind: str, dtype: torch.dtype, numel: int, seed: int) -> torch.Tensor:
    """A rank's tensor of one case, from its secret seed for the check (rank_seed() + the case's index): no rank can
    rebuild another's, and the test rebuilds them all from run.seeds."""
    g = torch.Generator().manual_seed(seed)
    if kind == "integers":  # exactly summable in any order: bit-equal to torch's own all_reduce
        return torch.randint(-2**19, 2**19, (numel,), generator=g).to(dtype)
    scale = 10.0 ** torch.empty(numel, dtype=torch.float64).uniform_(-8, 8, generator=g)
    return (torch.randn(numel, dtype=torch.float64, generator=g) * scale).to(dtype)


def _fold(xs: list[torch.Tensor], c: int, bounds: list[tuple[int, int]]) -> torch.Tensor:
    """Chunk c summed in the ring's order: ((x_{c+1} + x_{c+2}) + ...) + x_c."""
    p, (a, b) = len(xs), bounds[c]
    acc = xs[(c + 1) % p][a:b].clone()
    for k in range(2, p + 1):
        acc = acc + xs[(c + k) % p][a:b]
    return acc


def _diff(got: object, want: torch.Tensor) -> str | None:
    """None when equal bit for bit; else what differs, as an instruction."""
    if not isinstance(got, torch.Tensor):
        return f"returned {type(got).__name__}, expected a torch.Tensor"
    if got.dtype != want.dtype or tuple(got.shape) != tuple(want.shape):
        return f"returned a {got.dtype} tensor of shape {tuple(got.shape)}, expected {want.dtype} {tuple(want.shape)}"
    bad = (got != want) & ~(got.isnan() & want.isnan())
    if not bad.any():
        return None
    i = int(bad.nonzero()[0])
    return (f"{int(bad.sum())} of {want.numel()} elements differ; first at [{i}]: got {got[i].item()!r}, "
            f"expected {want[i].item()!r}")


# Each rank only runs the learner's call and sends back what it passed, what it got and what it logged: the test
# compares here, on values it computes itself from the ranks' seeds (nothing a rank reports is taken as a verdict).


def _call(fn, x: torch.Tensor, *args) -> dict:
    mark = len(comm_log())
    out = fn(x, *args)
    return {"x": x, "out": out, "calls": comm_log()[mark:]}  # x and out in one object: a view stays a view


def check_all_reduce(rank: int, world: int) -> list[dict]:
    seed = rank_seed()
    return [_call(ring_all_reduce, _input(kind, dtype, numel, seed + i))
            for i, (numel, kind, dtype) in enumerate(CASES)]


def check_reduce_scatter(rank: int, world: int) -> list[dict]:
    seed = rank_seed()
    return [_call(ring_reduce_scatter, _input(kind, dtype, numel, seed + i))
            for i, (numel, kind, dtype) in enumerate(CASES)]


def _shard(numel: int, kind: str, dtype: torch.dtype, world: int, rank: int, seed: int) -> torch.Tensor:
    """Rank ``rank``'s chunk of the gathered tensor, from its own seed."""
    a, b = _bounds(numel, world)[rank]
    return _input(kind, dtype, b - a, seed)


def check_all_gather(rank: int, world: int) -> list[dict]:
    seed = rank_seed()
    return [_call(ring_all_gather, _shard(numel, kind, dtype, world, rank, seed + i), numel)
            for i, (numel, kind, dtype) in enumerate(CASES)]


def _raised(fn, *args) -> tuple[str, str] | None:
    try:
        fn(*args)
    except Exception as exc:  # reported as data: the test names what was expected
        return type(exc).__name__, str(exc)
    return None


def check_validation(rank: int, world: int) -> dict:
    wrong = torch.zeros(_bounds(10, world)[rank][1] - _bounds(10, world)[rank][0] + 1)
    return {
        "ring_reduce_scatter(2-D)": ("tensor", _raised(ring_reduce_scatter, torch.zeros(2, 4))),
        "ring_reduce_scatter(int64)": ("tensor", _raised(ring_reduce_scatter, torch.arange(8))),
        "ring_all_reduce(2-D)": ("tensor", _raised(ring_all_reduce, torch.zeros(2, 4))),
        "ring_all_reduce(int64)": ("tensor", _raised(ring_all_reduce, torch.arange(8))),
        "ring_all_gather(shard one too long, 10)": ("shard", _raised(ring_all_gather, wrong, 10)),
        "ring_all_gather(2-D shard, 10)": ("shard", _raised(ring_all_gather, torch.zeros(1, 3), 10)),
    }


CHECKS = {"all_reduce": check_all_reduce, "reduce_scatter": check_reduce_scatter, "all_gather": check_all_gather}


@functools.cache
def _runs(world: int):
    """Every check of one world size in one start of the processes; collectives refused. In batch grading the
    judge also counts what the loopback carried during the run (``wire_mismatch``): only the ring's sends."""
    return run_ranks(CHECKS, world, refuse=COLLECTIVES, timeout_s=20.0)


@functools.cache
def _validation():
    """Bad arguments, in a run of their own: a send posted before the ValueError would never be received, and
    would count against the wire of the runs above."""
    return run_ranks(check_validation, 3, refuse=COLLECTIVES, timeout_s=20.0)


def _expected(name: str, world: int, rank: int, case: int, seeds: list[int]) -> tuple:
    """(what rank passed, what it must return), from every rank's seed: computed here, never taken from a rank."""
    numel, kind, dtype = CASES[case]
    if name == "all_gather":
        shards = [_shard(numel, kind, dtype, world, r, seeds[r] + case) for r in range(world)]
        return shards[rank], torch.cat(shards)
    xs, bounds = [_input(kind, dtype, numel, seeds[r] + case) for r in range(world)], _bounds(numel, world)
    if name == "reduce_scatter":
        return xs[rank], _fold(xs, rank, bounds)
    return xs[rank], torch.cat([_fold(xs, c, bounds) for c in range(world)])


def _cases(name: str, world: int):
    """(rank, case label, numel, kind, dtype, what the rank sent back) for every rank and case."""
    run = _runs(world)[name]
    for rank, got in enumerate(run.results):
        assert isinstance(got, list) and len(got) == len(CASES), f"rank {rank} sent back {type(got).__name__}"
        for (numel, kind, dtype), c in zip(CASES, got, strict=True):
            yield rank, f"numel={numel}, {kind} {str(dtype).replace('torch.', '')}", numel, kind, dtype, c


def _values(name: str, world: int, fn: str) -> None:
    seeds = _runs(world)[name].seeds
    for i, (rank, case, _, _, _, c) in enumerate(_cases(name, world)):
        where = f"{fn} on rank {rank} of {world} ({case})"
        before, want = _expected(name, world, rank, i % len(CASES), seeds)
        x, out = c["x"], c["out"]
        diff = _diff(out, want)
        assert diff is None, f"{where}: {diff}"
        assert torch.equal(x, before), f"{where} modified its input: work on a copy"
        assert not (out.numel() and x.numel() and out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()), (
            f"{where} returned its input (or a view of it): return a new tensor")


def _ring_sends(name: str, world: int, rank: int) -> list[tuple[str, int]]:
    """The sends a ring makes on ``rank`` over every case of check ``name``: one chunk per step, the schedule's."""
    sends = []
    for numel, _, dtype in CASES:
        size = [(b - a) * dtype.itemsize for a, b in _bounds(numel, world)]
        if name in ("reduce_scatter", "all_reduce"):  # step s sends chunk (r - s - 1) mod P
            sends += [("isend", size[(rank - s - 1) % world]) for s in range(world - 1)]
        if name in ("all_gather", "all_reduce"):  # step s sends chunk (r - s) mod P
            sends += [("isend", size[(rank - s) % world]) for s in range(world - 1)]
    return sends


def _traffic(name: str, world: int, fn: str, phase: str) -> None:
    steps = world - 1 if phase != "total" else 2 * (world - 1)
    for rank, case, numel, _, dtype, c in _cases(name, world):
        sizes = [n for call, n in c["calls"] if call in ("send", "isend")]
        sent, largest = sum(sizes), max(sizes, default=0)
        assert len(sizes) <= steps, (
            f"{fn} on rank {rank} of {world} ({case}) made {len(sizes)} sends; the ring makes one per step, "
            f"{steps} in all: send each chunk whole, in one message")
        elem = dtype.itemsize
        want = _bytes(numel, world, rank, elem)[phase]
        chunk = -(-numel // world) * elem
        assert sent == want, (
            f"{fn} on rank {rank} of {world} ({case}) sent {sent:,} B with send/isend, expected "
            f"{want:,} B: one chunk per step, every chunk but the one the schedule skips (ring ledger: "
            "2(P-1)/P·N·e per rank for the all-reduce)")
        assert largest <= chunk, (
            f"{fn} on rank {rank} of {world} ({case}) sent a {largest:,} B message; a ring step sends "
            f"one chunk, at most ceil(N/P)·e = {chunk:,} B")
    # batch grading: the bytes on the loopback, counted by the judge, are what a ring sends in every check
    _runs(world).assert_wire(fn, {n: [_ring_sends(n, world, r) for r in range(world)] for n in CHECKS})


# ---- ring_reduce_scatter -----------------------------------------------------------------------------------------


@grade(ring_reduce_scatter, "correctness", points=2,
       hint="Does rank r end holding chunk r, summed as received + local at each step, with the input untouched?")
@pytest.mark.parametrize("world", WORLDS)
def test_ring_reduce_scatter_values(world):
    _values("reduce_scatter", world, "ring_reduce_scatter")


@grade(ring_reduce_scatter, "efficiency", points=1,
       hint="Each reduce-scatter step sends one chunk: are you sending more than the chunk the schedule names?")
@pytest.mark.parametrize("world", WORLDS)
def test_ring_reduce_scatter_bytes(world):
    _traffic("reduce_scatter", world, "ring_reduce_scatter", "reduce_scatter")


# ---- ring_all_gather ---------------------------------------------------------------------------------------------


@grade(ring_all_gather, "correctness", points=2,
       hint="Where is your own shard in the output before the first step, and which chunk do you send first?")
@pytest.mark.parametrize("world", WORLDS)
def test_ring_all_gather_values(world):
    _values("all_gather", world, "ring_all_gather")


@grade(ring_all_gather, "efficiency", points=1,
       hint="Each all-gather step forwards one finished chunk, not the whole tensor.")
@pytest.mark.parametrize("world", WORLDS)
def test_ring_all_gather_bytes(world):
    _traffic("all_gather", world, "ring_all_gather", "all_gather")


# ---- ring_all_reduce ---------------------------------------------------------------------------------------------


@grade(ring_all_reduce, "correctness", points=3,
       hint="AllReduce = ReduceScatter + AllGather: is every element the sum over all ranks, in the input's dtype?")
@pytest.mark.parametrize("world", WORLDS)
def test_ring_all_reduce_values(world):
    _values("all_reduce", world, "ring_all_reduce")


@grade(ring_all_reduce, "efficiency", points=2,
       hint="A ring sends 2(P-1) chunks per rank, about 2N whatever P: does any rank send whole tensors, or act "
            "as a master that gathers and sends back?")
@pytest.mark.parametrize("world", WORLDS)
def test_ring_all_reduce_bytes(world):
    _traffic("all_reduce", world, "ring_all_reduce", "total")


# ---- bad arguments on the ranks ------------------------------------------------------------------------------------


def _rejected(prefix: str) -> None:
    checks = _validation().results
    for rank, table in enumerate(checks):
        for call, (name, raised) in table.items():
            if not call.startswith(prefix):
                continue
            assert raised is not None, f"{call} on rank {rank} returned; expected ValueError naming `{name}`"
            kind, message = raised
            if kind == "NotImplementedError":  # the stub: TODO, not a wrong answer
                raise NotImplementedError(message)
            assert kind == "ValueError" and re.search(rf"\b{name}\b", message), (
                f"{call} on rank {rank} raised {kind}: {message}; expected ValueError naming `{name}`")


@grade(ring_reduce_scatter, "correctness", points=1, validation=True,
       hint="Raise ValueError naming `tensor` for a 2-D or an integer tensor, before any send.")
def test_ring_reduce_scatter_rejects_bad_tensors():
    _rejected("ring_reduce_scatter")


@grade(ring_all_gather, "correctness", points=1, validation=True,
       hint="Raise ValueError naming `shard` when it is not this rank's chunk of numel elements.")
def test_ring_all_gather_rejects_bad_shards():
    _rejected("ring_all_gather")


@grade(ring_all_reduce, "correctness", points=1, validation=True,
       hint="Raise ValueError naming `tensor` for a 2-D or an integer tensor, before any send.")
def test_ring_all_reduce_rejects_bad_tensors():
    _rejected("ring_all_reduce")
