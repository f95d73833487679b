"""L07 · launch-bound decode, CUDA Graphs and their buckets, streams/events as a happens-before graph, a sync lint."""

from __future__ import annotations

import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.kit import assert_number, assert_rejects_all, grade, learner

UNIT = "l07_async_execution"
launch_bound_utilization = learner(UNIT, "async_exec", "launch_bound_utilization")
eager_vs_graph = learner(UNIT, "async_exec", "eager_vs_graph")
vllm_capture_sizes = learner(UNIT, "async_exec", "vllm_capture_sizes")
graph_bucket = learner(UNIT, "async_exec", "graph_bucket")
simulate_streams = learner(UNIT, "async_exec", "simulate_streams")
find_implicit_syncs = learner(UNIT, "async_exec", "find_implicit_syncs")

TIME_TOL = dict(rel=1e-9, abs_tol=1e-9)
BAD_REALS = [-1.0, float("nan"), float("inf"), True, "1.5"]


# ---- launch_bound_utilization -------------------------------------------------------------------


@grade(launch_bound_utilization, "correctness", points=1,
       hint="Over one kernel plus the wait for the next launch, what share of the time does the GPU compute?")
def test_launch_bound_utilization_worked_example():
    """1.5 µs of work, 6.5 µs waiting for the CPU: 0.1875 ("under 20 %"); no gap: 1.0."""
    assert_number(launch_bound_utilization(1.5, 6.5), 0.1875, "launch_bound_utilization(1.5, 6.5)")
    assert_number(launch_bound_utilization(2, 0), 1.0, "launch_bound_utilization(2, 0): no gap")
    assert_number(launch_bound_utilization(1.2, 5.8), 1.2 / 7.0, "launch_bound_utilization(1.2, 5.8)")


@grade(launch_bound_utilization, "correctness", points=1,
       hint="Can a GPU be busy more than all of the time, or none of it while it runs a kernel?")
@settings(max_examples=40)
@given(k=st.floats(1e-3, 1e4), g=st.floats(0, 1e4))
def test_launch_bound_utilization_range(k, g):
    got = launch_bound_utilization(k, g)
    assert_number(got, k / (k + g), f"launch_bound_utilization({k!r}, {g!r})")
    assert 0 < got <= 1, f"launch_bound_utilization({k!r}, {g!r}) = {got!r}, outside (0, 1]"


@grade(launch_bound_utilization, "correctness", points=1, hint="Raise ValueError naming the argument.",
       validation=True)
def test_launch_bound_utilization_rejects():
    table = [((0, 6.5), "kernel_us"), ((1.5, -0.1), "gap_us")]
    table += [((bad, 6.5), "kernel_us") for bad in BAD_REALS] + [((1.5, bad), "gap_us") for bad in BAD_REALS]
    assert_rejects_all(launch_bound_utilization, table)


# ---- eager_vs_graph ------------------------------------------------------------------------------

KEYS = ("eager_us", "graph_us", "gpu_busy_us", "eager_util", "graph_util", "speedup")


def check_graph_dict(got: object, want: dict[str, float], call: str) -> None:
    assert isinstance(got, dict), f"{call} returned {type(got).__name__}, expected a dict with keys {list(KEYS)}"
    missing = [key for key in KEYS if key not in got]
    assert not missing, f"{call} has no key(s) {missing}"
    for key in KEYS:
        assert_number(got[key], want[key], f"{call}[{key!r}]", **TIME_TOL)


def pipeline(n: int, k: float, launch: float, graph_launch: float) -> dict[str, float]:
    """The eager model played kernel by kernel: issue at (i+1)·L, start at max(issue, previous end)."""
    end = 0.0
    for i in range(n):
        end = max((i + 1) * launch, end) + k
    busy = n * k
    graph = graph_launch + busy
    return {"eager_us": end, "graph_us": graph, "gpu_busy_us": busy, "eager_util": busy / end,
            "graph_util": busy / graph, "speedup": end / graph}


@grade(eager_vs_graph, "correctness", points=2,
       hint="When each launch takes longer than each kernel, when does the last kernel start, and when does it end?")
def test_eager_vs_graph_worked_examples():
    """The 70B decode step, 1440 kernels of 1.2 µs at 7 µs a launch: 10,081.2 µs eager, 1731 µs as a graph."""
    want = {"eager_us": 10_081.2, "graph_us": 1731.0, "gpu_busy_us": 1728.0, "eager_util": 1728.0 / 10_081.2,
            "graph_util": 1728.0 / 1731.0, "speedup": 10_081.2 / 1731.0}
    check_graph_dict(eager_vs_graph(1440, 1.2, 7.0, 3.0), want, "eager_vs_graph(1440, 1.2, 7.0, 3.0)")
    got = eager_vs_graph(1440, 1.2, 7.0, 3.0)
    assert_number(got["eager_util"], 0.171408, "eager_util (the lecture's 17.1 %)", rel=1e-5)
    assert_number(got["speedup"], 5.823917, "speedup (the lecture's 5.83x)", rel=1e-6)
    # GPU-bound: launches (0.5 µs) are faster than kernels (1.2 µs), the queue never drains
    want = {"eager_us": 1728.5, "graph_us": 1731.0, "gpu_busy_us": 1728.0, "eager_util": 1728.0 / 1728.5,
            "graph_util": 1728.0 / 1731.0, "speedup": 1728.5 / 1731.0}
    check_graph_dict(eager_vs_graph(1440, 1.2, 0.5, 3.0), want, "eager_vs_graph(1440, 1.2, 0.5, 3.0)")
    check_graph_dict(eager_vs_graph(1, 4.0, 6.0, 2.0), pipeline(1, 4.0, 6.0, 2.0), "eager_vs_graph(1, 4.0, 6.0, 2.0)")


@grade(eager_vs_graph, "correctness", points=2,
       hint="Play the pipeline kernel by kernel: a kernel starts when it is issued and its predecessor is done.")
@settings(max_examples=50)
@given(n=st.integers(1, 400), k=st.floats(0.05, 50), launch=st.floats(0, 50), graph_launch=st.floats(0, 20))
def test_eager_vs_graph_matches_the_pipeline(n, k, launch, graph_launch):
    call = f"eager_vs_graph({n}, {k!r}, {launch!r}, {graph_launch!r})"
    got = eager_vs_graph(n, k, launch, graph_launch)
    check_graph_dict(got, pipeline(n, k, launch, graph_launch), call)
    assert 0 < got["eager_util"] <= 1 + 1e-12 and 0 < got["graph_util"] <= 1 + 1e-12, f"{call}: utilization > 1"


@grade(eager_vs_graph, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_eager_vs_graph_rejects():
    table = [((0, 1.2, 7.0, 3.0), "n_kernels"), ((1440.0, 1.2, 7.0, 3.0), "n_kernels"),
             ((True, 1.2, 7.0, 3.0), "n_kernels"), ((1440, 0, 7.0, 3.0), "kernel_us"),
             ((1440, 1.2, -7.0, 3.0), "launch_us"), ((1440, 1.2, 7.0, -3.0), "graph_launch_us"),
             ((1440, float("nan"), 7.0, 3.0), "kernel_us"), ((1440, 1.2, float("inf"), 3.0), "launch_us")]
    assert_rejects_all(eager_vs_graph, table)


# ---- vllm_capture_sizes ---------------------------------------------------------------------------


@grade(vllm_capture_sizes, "correctness", points=2,
       hint="Which small sizes come before the multiples of 8, and is max_size itself captured?")
def test_vllm_capture_sizes_values():
    """67 sizes for 512: 1, 2, 4, 8, 16, ..., 504, 512; small maxima keep only the sizes that fit."""
    got = vllm_capture_sizes()
    assert isinstance(got, list | tuple), f"vllm_capture_sizes() returned {type(got).__name__}, expected a list"
    got = list(got)
    want = [1, 2, 4] + [8 * i for i in range(1, 65)]
    assert len(got) == 67, f"vllm_capture_sizes() has {len(got)} sizes, expected 67 (1, 2, 4 and 64 multiples of 8)"
    assert got == want, f"vllm_capture_sizes() = {got}, expected {want}"
    cases = {1: [1], 3: [1, 2], 4: [1, 2, 4], 6: [1, 2, 4], 8: [1, 2, 4, 8], 20: [1, 2, 4, 8, 16],
             256: [1, 2, 4] + [8 * i for i in range(1, 33)]}
    for m, want in cases.items():
        assert list(vllm_capture_sizes(m)) == want, (
            f"vllm_capture_sizes({m}) = {vllm_capture_sizes(m)}, expected {want}")


@grade(vllm_capture_sizes, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_vllm_capture_sizes_rejects():
    assert_rejects_all(vllm_capture_sizes, [((0,), "max_size"), ((512.0,), "max_size"), ((True,), "max_size")])


# ---- graph_bucket -----------------------------------------------------------------------------------

LECTURE_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256]


@grade(graph_bucket, "correctness", points=2,
       hint="13 requests and graphs of 8 and 16: which graph can hold them, and how many slots are padding?")
def test_graph_bucket_worked_examples():
    vllm = [1, 2, 4] + [8 * i for i in range(1, 65)]
    cases = [(13, vllm, (16, 3)), (257, vllm, (264, 7)), (3, vllm, (4, 1)), (512, vllm, (512, 0)), (1, vllm, (1, 0)),
             (513, vllm, None), (13, LECTURE_BUCKETS, (16, 3)), (129, LECTURE_BUCKETS, (256, 127)),
             (257, LECTURE_BUCKETS, None),
             # not sorted, with a duplicate
             (5, [16, 8, 1, 8, 4], (8, 3)), (9, (32, 16, 8), (16, 7)), (17, [16], None)]
    for batch, sizes, want in cases:
        got = graph_bucket(batch, sizes)
        shown = "vllm_capture_sizes()" if sizes is vllm else repr(sizes)
        pair = tuple(got) if isinstance(got, list | tuple) else got
        assert pair == want, (
            f"graph_bucket({batch}, {shown}) = {got!r}, expected {want!r}")


@grade(graph_bucket, "correctness", points=1,
       hint="Among the sizes at least as large as the batch, which one wastes the fewest slots?")
@settings(max_examples=50)
@given(batch=st.integers(1, 600), sizes=st.lists(st.integers(1, 600), min_size=1, max_size=12))
def test_graph_bucket_is_the_smallest_that_fits(batch, sizes):
    got = graph_bucket(batch, sizes)
    call = f"graph_bucket({batch}, {sizes})"
    if batch > max(sizes):
        assert got is None, f"{call} = {got!r}, expected None: no captured graph holds {batch} (eager fallback)"
        return
    assert got is not None, f"{call} = None, but {max(sizes)} >= {batch} is captured"
    size, pad = got
    assert size in sizes and size >= batch, f"{call} = {got!r}: {size} is not a captured size >= {batch}"
    assert size == min(s for s in sizes if s >= batch), f"{call} = {got!r}: a smaller captured size also fits"
    assert pad == size - batch, f"{call} = {got!r}: padding is size - batch = {size - batch}"


@grade(graph_bucket, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_graph_bucket_rejects():
    table = [((0, [1, 2]), "batch"), ((2.0, [1, 2]), "batch"), ((3, []), "capture_sizes"),
             ((3, 8), "capture_sizes"), ((3, "8"), "capture_sizes"), ((3, [4, 8.0]), "capture_sizes[1]"),
             ((3, [0, 8]), "capture_sizes[0]"), ((3, [4, True]), "capture_sizes[1]")]
    assert_rejects_all(graph_bucket, table)


# ---- simulate_streams -------------------------------------------------------------------------------


def reference_streams(ops: list[tuple], launch_us: float) -> dict:
    """Every op is a node of a DAG: each follows the previous op of its stream; a wait also follows the
    event's latest record; a sync follows every op before it and precedes every op after it. A kernel
    starts at max(issue time, its predecessors' completion); happens-before = reachability."""
    preds: list[set[int]] = []
    finish: list[float] = []
    last_of_stream: dict[str, int] = {}
    last_record: dict[str, int] = {}
    last_sync = None
    kernels: list[int] = []  # node index of each kernel, in issue order
    host = 0.0
    for node, op in enumerate(ops):
        p: set[int] = set() if last_sync is None else {last_sync}
        if op[0] == "sync":
            p |= set(range(node))
            host = max([host] + [finish[n] for n in range(node)])
            done = host
        else:
            if op[1] in last_of_stream:
                p.add(last_of_stream[op[1]])
            last_of_stream[op[1]] = node
            if op[0] == "wait":
                p.add(last_record[op[2]])
            elif op[0] == "record":
                last_record[op[2]] = node
            ready = max([0.0] + [finish[n] for n in p])
            if op[0] == "kernel":
                host += launch_us
                done = max(host, ready) + op[3]
                kernels.append(node)
            else:
                done = ready
        preds.append(p)
        finish.append(done)
        if op[0] == "sync":
            last_sync = node

    def ancestors(node: int) -> set[int]:
        seen, todo = set(), list(preds[node])
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo.extend(preds[n])
        return seen

    times = {ops[n][2]: (finish[n] - ops[n][3], finish[n]) for n in kernels}
    hazards = []
    for j, later in enumerate(kernels):
        before = ancestors(later)
        for earlier in kernels[:j]:
            a, b = ops[earlier], ops[later]
            if a[1] == b[1] or earlier in before:
                continue
            shared = (set(a[5]) & (set(b[4]) | set(b[5]))) | (set(a[4]) & set(b[5]))
            hazards += [(a[2], b[2], buf) for buf in sorted(shared)]
    return {"times": times, "hazards": hazards}


def run_streams(ops: list[tuple], launch_us: float = 0.0) -> dict:
    call = f"simulate_streams({ops!r}, launch_us={launch_us!r})"
    got = simulate_streams(ops, launch_us)
    assert isinstance(got, dict) and "times" in got and "hazards" in got, (
        f"{call} returned {got!r}, expected a dict with keys 'times' and 'hazards'")
    return {"times": {name: tuple(t) for name, t in got["times"].items()},
            "hazards": [tuple(h) for h in got["hazards"]], "call": call}


def check_streams(ops: list[tuple], launch_us: float, want: dict) -> dict:
    got = run_streams(ops, launch_us)
    call = got["call"]
    assert set(got["times"]) == set(want["times"]), (
        f"{call}['times'] has kernels {sorted(got['times'])}, expected {sorted(want['times'])}")
    for name, (start, end) in want["times"].items():
        pair = got["times"][name]
        assert len(pair) == 2, f"{call}['times'][{name!r}] = {pair!r}, expected (start, end)"
        assert_number(got["times"][name][0], start, f"{call}['times'][{name!r}] start", **TIME_TOL)
        assert_number(got["times"][name][1], end, f"{call}['times'][{name!r}] end", **TIME_TOL)
    assert got["hazards"] == want["hazards"], f"{call}['hazards'] = {got['hazards']!r}, expected {want['hazards']!r}"
    return got


H2D = ("kernel", "s0", "h2d", 10, [], ["x"])
GEMM = ("kernel", "s1", "gemm", 20, ["x"], ["y"])
USE_X = ("kernel", "side", "use_x", 50, ["x"], ["z"])
REALLOC_X = ("kernel", "main", "realloc_x", 5, [], ["x"])


@grade(simulate_streams, "correctness", points=3,
       hint="Two streams, one buffer, no event between them: what orders the copy before the GEMM that reads it?")
def test_simulate_streams_worked_examples():
    check_streams([H2D, GEMM], 0.0, {"times": {"h2d": (0, 10), "gemm": (0, 20)}, "hazards": [("h2d", "gemm", "x")]})
    check_streams([H2D, ("record", "s0", "e"), ("wait", "s1", "e"), GEMM], 0.0,
                  {"times": {"h2d": (0, 10), "gemm": (10, 30)}, "hazards": []})
    # record_stream: the side stream still reads x when the allocator hands x's block to the main stream
    check_streams([USE_X, REALLOC_X], 1.0,
                  {"times": {"use_x": (1, 51), "realloc_x": (2, 7)}, "hazards": [("use_x", "realloc_x", "x")]})
    check_streams([USE_X, ("sync",), REALLOC_X], 1.0,
                  {"times": {"use_x": (1, 51), "realloc_x": (52, 57)}, "hazards": []})
    # the intervals no longer overlap, and still nothing orders the two kernels: a race all the same
    check_streams([USE_X, REALLOC_X], 60.0,
                  {"times": {"use_x": (60, 110), "realloc_x": (120, 125)}, "hazards": [("use_x", "realloc_x", "x")]})


@grade(simulate_streams, "correctness", points=2,
       hint="If A is ordered before B and B before C, is A ordered before C? And what exactly does an event capture?")
def test_simulate_streams_orderings():
    """Chains of events are transitive; a wait does not stop the host; an event recorded after a wait carries
    that wait; waits see the record made before them; same-stream kernels never race; reads never race."""
    chain = [("kernel", "s0", "a", 5, [], ["x"]), ("record", "s0", "e0"), ("wait", "s1", "e0"),
             ("kernel", "s1", "b", 5, [], ["y"]), ("record", "s1", "e1"), ("wait", "s2", "e1"),
             ("kernel", "s2", "c", 5, ["x", "y"], [])]
    check_streams(chain, 0.0, {"times": {"a": (0, 5), "b": (5, 10), "c": (10, 15)}, "hazards": []})
    # a wait holds back its stream on the GPU, never the host: the third stream's kernel starts at once
    side = [H2D, ("record", "s0", "e"), ("wait", "s1", "e"), ("kernel", "s2", "other", 5, [], ["z"]), GEMM]
    check_streams(side, 0.0, {"times": {"h2d": (0, 10), "other": (0, 5), "gemm": (10, 30)}, "hazards": []})
    # s1 has no kernel of its own: its record still completes only after what s1 waited for
    relay = [("kernel", "s0", "a", 5, [], ["x"]), ("record", "s0", "e0"), ("wait", "s1", "e0"),
             ("record", "s1", "e1"), ("wait", "s2", "e1"), ("kernel", "s2", "c", 5, ["x"], [])]
    check_streams(relay, 0.0, {"times": {"a": (0, 5), "c": (5, 10)}, "hazards": []})
    # the wait sees the record made before it: recording e again later does not order k1 after a2
    rerecord = [("kernel", "s0", "a1", 4, [], ["p"]), ("record", "s0", "e"), ("wait", "s1", "e"),
                ("kernel", "s0", "a2", 4, [], ["q"]), ("record", "s0", "e"), ("kernel", "s1", "k1", 1, ["p", "q"], [])]
    check_streams(rerecord, 0.0, {"times": {"a1": (0, 4), "a2": (4, 8), "k1": (4, 5)}, "hazards": [("a2", "k1", "q")]})
    # an empty event orders nothing; one stream is FIFO; two reads never race; W-W and R-W do
    misc = [("record", "s1", "empty"), ("kernel", "s0", "w1", 3, ["r"], ["x"]), ("kernel", "s0", "w2", 3, [], ["x"]),
            ("wait", "s1", "empty"), ("kernel", "s1", "k", 2, ["r", "v"], ["x", "v"]),
            ("kernel", "s2", "m", 1, ["r"], ["v"])]
    check_streams(misc, 0.0, {
        "times": {"w1": (0, 3), "w2": (3, 6), "k": (0, 2), "m": (0, 1)},
        "hazards": [("w1", "k", "x"), ("w2", "k", "x"), ("k", "m", "v")]})


STREAMS, EVENTS, BUFFERS = ("s0", "s1", "s2"), ("e0", "e1"), ("a", "b", "c")


@st.composite
def programs(draw) -> list[tuple]:
    ops: list[tuple] = []
    recorded: list[str] = []
    for i in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["kernel", "kernel", "kernel", "record", "record", "wait", "wait", "sync"]))
        if kind == "wait" and not recorded:
            kind = "record"
        stream = draw(st.sampled_from(STREAMS))
        if kind == "kernel":
            reads = draw(st.lists(st.sampled_from(BUFFERS), max_size=2, unique=True))
            writes = draw(st.lists(st.sampled_from(BUFFERS), max_size=2, unique=True))
            ops.append(("kernel", stream, f"k{i}", draw(st.integers(1, 30)), reads, writes))
        elif kind == "record":
            event = draw(st.sampled_from(EVENTS))
            recorded.append(event)
            ops.append(("record", stream, event))
        elif kind == "wait":
            ops.append(("wait", stream, draw(st.sampled_from(recorded))))
        else:
            ops.append(("sync",))
    return ops


LAUNCHES = st.sampled_from([0.0, 0.5, 1.0, 3.0, 7.0])


@grade(simulate_streams, "correctness", points=3,
       hint="Model every op as a node that follows the previous op of its stream; what else does a wait follow?")
@settings(max_examples=60)
@given(ops=programs(), launch_us=LAUNCHES)
def test_simulate_streams_matches_the_reference(ops, launch_us):
    check_streams(ops, launch_us, reference_streams(ops, launch_us))


@grade(simulate_streams, "correctness", points=2,
       hint="Can one more ordering edge create a race, or make anything start sooner? Can timing create a race?")
@settings(max_examples=40)
@given(ops=programs(), launch_us=LAUNCHES, data=st.data())
def test_simulate_streams_properties(ops, launch_us, data):
    base = run_streams(ops, launch_us)
    for hazard in base["hazards"]:
        streams = {op[2]: op[1] for op in ops if op[0] == "kernel"}
        assert streams[hazard[0]] != streams[hazard[1]], f"{base['call']}: hazard {hazard} on one stream (FIFO)"
    at = data.draw(st.integers(0, len(ops)), label="insert at")
    src = data.draw(st.sampled_from(STREAMS), label="record on")
    dst = data.draw(st.sampled_from(STREAMS), label="wait on")
    more = [ops[:at] + [("sync",)] + ops[at:],
            ops[:at] + [("record", src, "fresh"), ("wait", dst, "fresh")] + ops[at:]]
    for program in more:
        got = run_streams(program, launch_us)
        extra = set(got["hazards"]) - set(base["hazards"])
        assert not extra, f"{got['call']} adds the hazards {sorted(extra)}: one more ordering edge cannot make a race"
        for name, (start, _end) in base["times"].items():
            assert got["times"][name][0] >= start - 1e-9, (
                f"{got['call']}: {name} starts at {got['times'][name][0]!r}, before {start!r} without the extra edge")
    scale = data.draw(st.sampled_from([0.1, 3.0, 17.0]), label="durations ×")
    timed = [(*op[:3], op[3] * scale, *op[4:]) if op[0] == "kernel" else op for op in ops]
    for program, launch in ((ops, launch_us * 9 + 2), (timed, launch_us)):
        got = run_streams(program, launch)
        assert got["hazards"] == base["hazards"], (
            f"{got['call']} gives hazards {got['hazards']!r}, but with other timings {base['hazards']!r}: "
            "a race depends on ordering, never on timing")


@grade(simulate_streams, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_simulate_streams_rejects():
    table = [
        (([H2D], -1.0), "launch_us"),
        (([H2D], float("nan")), "launch_us"),
        (("kernel",), "ops"),
        (([H2D, ("kernel", "s0", "h2d", 3, [], [])],), "ops[1]"),  # duplicate name
        (([("kernel", "s0", "k", 0, [], ["x"])],), "ops[0]"),  # dur_us <= 0
        (([H2D, ("kernel", "s0", "k", -2.5, [], ["x"])],), "ops[1]"),
        (([H2D, ("wait", "s1", "never")],), "ops[1]"),  # never recorded
        (([("wait", "s1", "e"), ("record", "s0", "e")],), "ops[0]"),  # recorded only after the wait
        (([H2D, ("kernel", "s0", "k", 3, [])],), "ops[1]"),  # five fields
        (([H2D, ("launch", "s0", "k")],), "ops[1]"),
        (([H2D, ("sync", "s0")],), "ops[1]"),
        (([H2D, ("record", "s0")],), "ops[1]"),
        (([H2D, "sync"],), "ops[1]"),
        (([H2D, ("kernel", "s0", "k", 3, "x", [])],), "ops[1]"),  # reads must be a sequence of names
    ]
    assert_rejects_all(simulate_streams, table)


# ---- find_implicit_syncs ----------------------------------------------------------------------------

DECODE = '''\
import torch


def decode(model, tokens, steps):
    for step in range(steps):
        conf = model(tokens).softmax(-1).max().item()
        if bool(conf > 0.5):
            model.log(step, conf)
        done = torch.nonzero(tokens == 2)
        nxt = model(tokens).argmax(-1).cpu()
        def report():
            return conf.item()
        tokens = torch.cat([tokens, nxt], -1)
    return tokens.tolist()
'''

TRAIN = '''\
import numpy as np
import torch


def train(model, loader, opt, log_every=100):
    history = []
    step = 0
    while step < len(loader):
        for batch in loader:
            loss = model(batch).mean()
            loss.backward()
            opt.step()
            history.append(loss.detach().to("cpu"))
            norms = [p.grad.norm().item() for p in model.parameters()]
            hook = lambda g: g.sum().item()
            class Meter:
                total = loss.item()
            if step % log_every == 0:
                print(f"step {step}: loss {loss.item():.4f}")
                torch.cuda.synchronize()
            step += 1
        grads = model.weight.grad.cpu().numpy()
    while loss.item() > 0.1:
        loss = loss * 0.5
    return np.array(history)


def evaluate(model, batches):
    def run(batch):
        for row in batch:
            yield row.argmax().tolist()
    return [list(run(b)) for b in batches]
'''

CLEAN = '''\
import torch


def forward(model, x, ids):
    for layer in model.layers:
        x = layer(x)
        x = x.to("cuda", non_blocking=True)
        get = x.item
        if bool(1):
            x = x.relu()
        cb = lambda: x.cpu()
        def later():
            torch.cuda.synchronize()
    for i in ids.tolist():
        x = x + i
    else:
        print(x.sum().item())
    total = x.sum().item()
    return x.cpu(), total
'''


def check_lint(source: str, want: list[tuple[int, str]], label: str) -> None:
    got = find_implicit_syncs(source)
    call = f"find_implicit_syncs({label})"
    assert isinstance(got, list | tuple), f"{call} returned {type(got).__name__}, expected a list of (line, kind)"
    got = [tuple(hit) for hit in got]
    numbered = "\n".join(f"{n:3} | {line}" for n, line in enumerate(source.splitlines(), 1))
    assert got == want, f"{call} = {got!r}, expected {want!r}\n{numbered}"


@grade(find_implicit_syncs, "correctness", points=3,
       hint="Which lines run once per generated token, and which calls there make the CPU wait for the GPU?")
def test_find_implicit_syncs_decode_loop():
    """.item(), bool(tensor), torch.nonzero and .cpu() inside the loop; not the nested def, not the .tolist() after."""
    check_lint(DECODE, [(6, "item"), (7, "bool"), (9, "nonzero"), (10, "cpu")], "the decode loop")


@grade(find_implicit_syncs, "correctness", points=2,
       hint="A while loop re-checks its condition each iteration; does a lambda's body, defined in a loop, run there?")
def test_find_implicit_syncs_training_loop():
    """Nested loops, a comprehension and an f-string in the loop, .to("cpu"), a chain, a while test; not the
    lambda or class body; a loop inside a nested function counts again."""
    want = [(13, "cpu"), (14, "item"), (19, "item"), (20, "synchronize"), (22, "cpu"), (22, "numpy"), (23, "item"),
            (31, "tolist")]
    check_lint(TRAIN, want, "a training loop")


@grade(find_implicit_syncs, "correctness", points=1,
       hint="Which of these calls are outside any loop, run only once, or do not sync at all?")
def test_find_implicit_syncs_clean_code():
    """.to("cuda"), an attribute never called, bool(1), lambda/def bodies, a for's iterable, a loop's else and code
    after the loop: no hit."""
    check_lint(CLEAN, [], "code that does not sync in a loop")
    check_lint("", [], "''")
    one_liner = "for t in ts: v = t.numpy(); w = torch.cuda.synchronize()\n"
    check_lint(one_liner, [(1, "numpy"), (1, "synchronize")], repr(one_liner))
    src = textwrap.dedent("""\
        async def serve(q):
            async for req in q:
                out = await req.model(req.x)
                req.reply(out.tolist())
        """)
    check_lint(src, [(4, "tolist")], "an async for loop")


@grade(find_implicit_syncs, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_find_implicit_syncs_rejects():
    assert_rejects_all(find_implicit_syncs, [((b"for x in y: pass",), "source"), ((None,), "source"),
                                              (("for x in y\n    x.item()",), "source"), (("def f(:",), "source")])
