"""L38 · greedy vs gang pod binding, a Kueue cohort with borrowing and reclaim, HAMi's memory limit."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from grader.kit import assert_exact, assert_rejects, assert_rejects_all, grade, learner

UNIT = "l38_scheduling"
schedule_pods = learner(UNIT, "scheduling", "schedule_pods")
kueue_simulate = learner(UNIT, "scheduling", "kueue_simulate")
hami_memory = learner(UNIT, "scheduling", "hami_memory")

MiB, GiB = 2**20, 2**30


def check_dict(got: object, want: dict, call: str) -> None:
    assert isinstance(got, dict), f"{call} returned {type(got).__name__}, expected a dict with keys {sorted(want)}"
    assert set(want) <= set(got), f"{call} has keys {sorted(got)}, missing {sorted(set(want) - set(got))}"
    for key, value in want.items():
        assert got[key] == value, f"{call}[{key!r}] = {got[key]!r}, expected {value!r}"


# ---- schedule_pods -----------------------------------------------------------------------------


def sched(bound: dict, pending: dict, free: int, deadlocked: bool) -> dict:
    return {"bound": bound, "pending": pending, "free": free, "deadlocked": deadlocked}


@grade(schedule_pods, "correctness", points=3,
       hint="Two jobs each hold part of the GPUs and wait for the rest: can either one ever start?")
def test_schedule_pods_worked_examples():
    """6 GPUs, A and B of 4 pods: interleaved greedy deadlocks (3 + 3), gang binds A whole; in order no deadlock."""
    jobs = {"A": 4, "B": 4}
    cases = [
        (6, jobs, "ABABABAB", False, sched({"A": 3, "B": 3}, {"A": 1, "B": 1}, 0, True)),
        (6, jobs, "ABABABAB", True, sched({"A": 4, "B": 0}, {"A": 0, "B": 4}, 2, False)),
        (6, jobs, "AAAABBBB", False, sched({"A": 4, "B": 2}, {"A": 0, "B": 2}, 0, False)),  # A runs, then frees 4
        (6, jobs, "BABABABA", True, sched({"A": 0, "B": 4}, {"A": 4, "B": 0}, 2, False)),
        # C (2 pods) runs whole; when it finishes A or B can complete: not a deadlock
        (8, {"A": 4, "B": 4, "C": 2}, "CCABABABAB", False,
         sched({"A": 3, "B": 3, "C": 2}, {"A": 1, "B": 1, "C": 0}, 0, False)),
        # the lecture's §6.1 demo: 8 GPUs, two jobs of 8, four pods of each bound alternately
        (8, {"A": 8, "B": 8}, "ABABABAB", False, sched({"A": 4, "B": 4}, {"A": 0, "B": 0}, 0, True)),
        (8, {"A": 8, "B": 8}, "ABABABAB", True, sched({"A": 0, "B": 0}, {"A": 4, "B": 4}, 8, False)),
        # half of each job arrived: A 2, B 2 bound, 0 free, nothing runs whole → deadlock already
        (4, jobs, "ABAB", False, sched({"A": 2, "B": 2}, {"A": 0, "B": 0}, 0, True)),
        # the same with 6 GPUs: 2 still free, enough for either job to complete
        (6, jobs, "ABAB", False, sched({"A": 2, "B": 2}, {"A": 0, "B": 0}, 2, False)),
    ]
    for capacity, sizes, order, gang, want in cases:
        call = f"schedule_pods({capacity}, {sizes}, {list(order)}, gang={gang})"
        check_dict(schedule_pods(capacity, sizes, list(order), gang), want, call)


def oracle_schedule(capacity: int, sizes: dict[str, int], arrivals: list[str], gang: bool) -> dict:
    """Greedy: the first `capacity` pods to arrive are the bound ones. Gang: jobs in the order they complete."""
    arrived = {job: arrivals.count(job) for job in sizes}
    if gang:
        bound, free = dict.fromkeys(sizes, 0), capacity
        complete = sorted((job for job in sizes if arrived[job] == sizes[job]),
                          key=lambda job: max(i for i, a in enumerate(arrivals) if a == job))
        for job in complete:
            if sizes[job] <= free:
                bound[job], free = sizes[job], free - sizes[job]
    else:
        bound = {job: arrivals[:capacity].count(job) for job in sizes}
        free = capacity - sum(bound.values())
    whole = sum(n for job, n in bound.items() if n == sizes[job])
    stuck = [sizes[job] - n for job, n in bound.items() if 0 < n < sizes[job]]
    deadlocked = bool(stuck) and min(stuck) > free + whole
    return sched(bound, {job: arrived[job] - bound[job] for job in sizes}, free, deadlocked)


@st.composite
def clusters(draw):
    names = draw(st.lists(st.sampled_from("ABCDEF"), min_size=1, max_size=4, unique=True))
    sizes = {job: draw(st.integers(1, 6)) for job in names}
    pods = [job for job in names for _ in range(draw(st.integers(0, sizes[job])))]
    arrivals = draw(st.permutations(pods))
    return draw(st.integers(0, 16)), sizes, list(arrivals)


@grade(schedule_pods, "correctness", points=3,
       hint="A greedy scheduler binds whichever pod comes next while GPUs last; a gang binds whole jobs or nothing.")
@given(cluster=clusters(), gang=st.booleans())
def test_schedule_pods_any_arrival_order(cluster, gang):
    """Random clusters: against an oracle; greedy binds min(capacity, pods); a gang scheduler never deadlocks."""
    capacity, sizes, arrivals = cluster
    call = f"schedule_pods({capacity}, {sizes}, {arrivals}, gang={gang})"
    got = schedule_pods(capacity, sizes, arrivals, gang)
    check_dict(got, oracle_schedule(capacity, sizes, arrivals, gang), call)
    if gang:
        assert got["deadlocked"] is False, f"{call}: a gang scheduler never holds part of a job"
    else:
        assert sum(got["bound"].values()) == min(capacity, len(arrivals)), f"{call}: greedy binds while GPUs last"


@grade(schedule_pods, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_schedule_pods_rejects_bad_arguments():
    jobs = {"A": 4, "B": 4}
    assert_rejects_all(schedule_pods, [
        ((-1, jobs, ["A"], False), "capacity"),
        ((6.0, jobs, ["A"], False), "capacity"),
        ((6, {}, [], False), "job_sizes"),
        ((6, {"A": 0}, [], False), "job_sizes"),
        ((6, jobs, ["A", "C"], False), "arrivals[1]"),
        ((6, jobs, ["A"] * 5, True), "arrivals[4]"),
        ((6, jobs, ["A"], "yes"), "gang"),
    ])


# ---- kueue_simulate ----------------------------------------------------------------------------

NOMINAL = {"cq-a": 8, "cq-b": 8}
B_WORKLOADS = [("submit", f"b{i}", "cq-b", 2) for i in range(7)]


def kueue(usage_a: int, usage_b: int, admitted: list, pending: list, preempted: list) -> dict:
    return {"usage": {"cq-a": usage_a, "cq-b": usage_b}, "admitted": admitted, "pending": pending,
            "preempted": preempted}


@grade(kueue_simulate, "correctness", points=3,
       hint="When cq-a wants its own 8 GPUs back, whose workloads go, and in which order?")
def test_kueue_borrow_and_reclaim():
    """16 GPUs: cq-b borrows up to 14; a0 (8, within cq-a's quota) reclaims by preempting b6, b5, b4."""
    first4 = ["b0", "b1", "b2", "b3"]
    cases = [
        (B_WORKLOADS, kueue(0, 14, first4 + ["b4", "b5", "b6"], [], [])),
        (B_WORKLOADS + [("submit", "a0", "cq-a", 8)],
         kueue(8, 8, first4 + ["a0"], ["b6", "b5", "b4"], ["b6", "b5", "b4"])),
        # a0 asks 10 > its nominal 8: it cannot reclaim, so nothing is preempted and it waits
        (B_WORKLOADS + [("submit", "a0", "cq-a", 10)], kueue(0, 14, first4 + ["b4", "b5", "b6"], ["a0"], [])),
        # after a0 finishes, the preempted workloads are readmitted in pending order
        (B_WORKLOADS + [("submit", "a0", "cq-a", 8), ("finish", "a0")],
         kueue(0, 14, first4 + ["b6", "b5", "b4"], [], ["b6", "b5", "b4"])),
        # a0 of 2 fits the cohort's 2 idle GPUs: no preemption needed
        (B_WORKLOADS + [("submit", "a0", "cq-a", 2)], kueue(2, 14, first4 + ["b4", "b5", "b6", "a0"], [], [])),
        # a0 of 4: one victim is not enough (14 − 2 + 4 = 16 fits): only b6 goes
        (B_WORKLOADS + [("submit", "a0", "cq-a", 4)], kueue(4, 12, first4 + ["b4", "b5", "a0"], ["b6"], ["b6"])),
    ]
    for events, want in cases:
        check_dict(kueue_simulate(dict(NOMINAL), list(events)), want, f"kueue_simulate({NOMINAL}, {events})")


@grade(kueue_simulate, "correctness", points=2,
       hint="A queue at or below its nominal quota is not borrowing: may anyone preempt its workloads?")
def test_kueue_three_queues():
    """cq-c (nominal 0) borrows 4; cq-a (4) borrows 4 more; cq-b reclaims its 8 from both, newest first."""
    nominal = {"cq-a": 4, "cq-b": 8, "cq-c": 0}
    events = [("submit", "c0", "cq-c", 4), ("submit", "a0", "cq-a", 4), ("submit", "a1", "cq-a", 4),
              ("submit", "b0", "cq-b", 6)]
    # before b0: a 8, c 4 (12 = capacity). b0 needs 6 within its nominal 8: a1 (newest, cq-a above 4) goes → a 4,
    # 8 + 6 = 14 > 12; then a0 is skipped (cq-a no longer above nominal); c0 goes → 4 + 6 = 10 fits.
    want = {"usage": {"cq-a": 4, "cq-b": 6, "cq-c": 0}, "admitted": ["a0", "b0"], "pending": ["a1", "c0"],
            "preempted": ["a1", "c0"]}
    check_dict(kueue_simulate(nominal, events), want, f"kueue_simulate({nominal}, {events})")


@st.composite
def kueue_runs(draw):
    queues = draw(st.lists(st.sampled_from(["cq-a", "cq-b", "cq-c"]), min_size=1, max_size=3, unique=True))
    nominal = {q: draw(st.integers(0, 8)) for q in queues}
    events, live, n = [], [], 0
    for _ in range(draw(st.integers(1, 14))):
        if live and draw(st.integers(0, 3)) == 0:
            events.append(("finish", live.pop(draw(st.integers(0, len(live) - 1)))))
        else:
            events.append(("submit", f"w{n}", draw(st.sampled_from(queues)), draw(st.integers(1, 6))))
            live.append(f"w{n}")
            n += 1
    return nominal, events


def _admitted_prefix(nominal: dict, events: list) -> list:
    """Drop finish events of workloads that are not admitted at that point (they are not valid events)."""
    kept = []
    for event in events:
        if event[0] == "finish" and event[1] not in kueue_simulate(nominal, kept)["admitted"]:
            continue
        kept.append(event)
    return kept


@grade(kueue_simulate, "correctness", points=3,
       hint="After every event: is the cohort within its capacity, and was anyone preempted who was not borrowing?")
@given(run=kueue_runs())
def test_kueue_invariants_after_every_event(run):
    nominal, events = run
    events = _admitted_prefix(nominal, events)
    sizes = {e[1]: (e[2], e[3]) for e in events if e[0] == "submit"}
    before = kueue_simulate(nominal, [])
    for k in range(1, len(events) + 1):
        call = f"kueue_simulate({nominal}, {events[:k]})"
        now = kueue_simulate(nominal, events[:k])
        finished = {e[1] for e in events[:k] if e[0] == "finish"}
        submitted = [e[1] for e in events[:k] if e[0] == "submit"]
        assert sorted(now["admitted"] + now["pending"]) == sorted(set(submitted) - finished), (
            f"{call}: admitted {now['admitted']} + pending {now['pending']} should be every live workload once"
        )
        for q in nominal:
            want = sum(sizes[w][1] for w in now["admitted"] if sizes[w][0] == q)
            assert now["usage"][q] == want, f"{call}: usage[{q!r}] = {now['usage'][q]}, its admitted ask {want}"
        assert sum(now["usage"].values()) <= sum(nominal.values()), f"{call}: the cohort is over its capacity {now}"
        new = now["preempted"][len(before["preempted"]):]
        assert now["preempted"][: len(before["preempted"])] == before["preempted"], f"{call}: preempted is a history"
        if new:
            fresh = [w for w in now["admitted"] if w not in before["admitted"]]
            assert any(sizes[w][0] not in {sizes[v][0] for v in new} for w in fresh), (
                f"{call}: {new} preempted but no workload of another queue was admitted in the same event"
            )
            for v in new:
                q = sizes[v][0]
                assert before["usage"][q] > nominal[q], (
                    f"{call}: {v} of {q} preempted while {q} used {before['usage'][q]} <= its nominal {nominal[q]}"
                )
        before = now


@grade(kueue_simulate, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_kueue_rejects_bad_arguments():
    assert_rejects(kueue_simulate, ({}, []), "nominal")
    assert_rejects(kueue_simulate, ({"cq-a": -1}, []), "nominal")
    assert_rejects_all(kueue_simulate, [
        ((NOMINAL, [("submit", "a0", "cq-x", 2)]), "events[0]"),
        ((NOMINAL, [("submit", "a0", "cq-a", 2), ("submit", "a0", "cq-a", 2)]), "events[1]"),
        ((NOMINAL, [("submit", "a0", "cq-a", 0)]), "events[0]"),
        ((NOMINAL, [("submit", "a0", "cq-a", 2.0)]), "events[0]"),
        ((NOMINAL, [("finish", "a0")]), "events[0]"),
        ((NOMINAL, [("submit", "a0", "cq-a", 2), ("evict", "a0")]), "events[1]"),
    ])


# ---- hami_memory -------------------------------------------------------------------------------


@grade(hami_memory, "correctness", points=3,
       hint="What does HAMi charge for a 1-byte cuMemAlloc, and what happens to a call that would pass the limit?")
def test_hami_worked_example():
    """Limit 1 GiB: 511 × 1 B → 511 × 2 MiB; 3 MiB refused (charged 4); 2 MiB lands exactly on the limit."""
    ops = [("alloc", 1)] * 511 + [("alloc", 3 * MiB), ("alloc", 2 * MiB), ("free", 0), ("alloc", 3 * MiB)]
    got = hami_memory(GiB, ops)
    assert isinstance(got, list | tuple) and len(got) == len(ops), (
        f"hami_memory: one (status, used) per op, got {got!r:.200}")
    assert_exact(got[510][1], 1_071_644_672, "hami_memory(1 GiB, 511 × ('alloc', 1))[510] used", unit="B",
                 why="each 1-B allocation is charged 2 MiB")
    tail = [("oom", 1_071_644_672), ("ok", 1_073_741_824), ("ok", 1_071_644_672), ("oom", 1_071_644_672)]
    assert [tuple(x) for x in got[511:]] == tail, f"hami_memory(1 GiB, …)[511:] = {got[511:]}, expected {tail}"
    assert [tuple(x) for x in hami_memory(2 * MiB, [("alloc", 2 * MiB + 1)])] == [("oom", 0)], "2 MiB + 1 B costs 4 MiB"
    assert [tuple(x) for x in hami_memory(0, [("alloc", 1)])] == [("oom", 0)], "limit 0 refuses everything"


@st.composite
def hami_runs(draw):
    """A limit and ops whose frees name live allocations (the oracle below decides which allocs succeed)."""
    limit = draw(st.integers(0, 64)) * MiB + draw(st.sampled_from([0, 1, MiB]))
    ops, live, used, want = [], {}, 0, []
    for i in range(draw(st.integers(1, 30))):
        if live and draw(st.booleans()):
            k = draw(st.sampled_from(sorted(live)))
            ops.append(("free", k))
            used -= live.pop(k)
            want.append(("ok", used))
            continue
        size = draw(st.sampled_from([1, MiB, 2 * MiB - 1, 2 * MiB, 2 * MiB + 1, 5 * MiB])) + draw(st.integers(0, 3))
        ops.append(("alloc", size))
        charge = (size + 2 * MiB - 1) // (2 * MiB) * (2 * MiB)
        if used + charge <= limit:
            live[i], used = charge, used + charge
            want.append(("ok", used))
        else:
            want.append(("oom", used))
    return limit, ops, want


@grade(hami_memory, "correctness", points=3,
       hint="Keep the charge of each live allocation: what must freeing it give back?")
@given(run=hami_runs())
def test_hami_accounting(run):
    """used = Σ live charges, a multiple of 2 MiB, never above the limit; against a replayed ledger."""
    limit, ops, want = run
    got = [tuple(x) for x in hami_memory(limit, ops)]
    assert got == want, f"hami_memory({limit}, {ops}) = {got}, expected {want}"
    for status, used in got:
        assert used % (2 * MiB) == 0 and used <= limit, f"hami_memory({limit}, …): used {used} after a {status}"


@grade(hami_memory, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_hami_rejects_bad_arguments():
    assert_rejects_all(hami_memory, [
        ((-1, []), "limit_bytes"),
        ((1.0 * GiB, []), "limit_bytes"),
        ((GiB, [("alloc", 0)]), "ops[0]"),
        ((GiB, [("alloc", 1), ("alloc", 1.5)]), "ops[1]"),
        ((GiB, [("free", 0)]), "ops[0]"),
        ((GiB, [("alloc", 1), ("free", 0), ("free", 0)]), "ops[2]"),
        ((0, [("alloc", 1), ("free", 0)]), "ops[1]"),
        ((GiB, [("malloc", 1)]), "ops[0]"),
    ])
