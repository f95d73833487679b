"""C4 · gang placement with TP inside a node, fragmentation, Xid self-healing, the RFC's sizing, and a day on the
platform that chains all four."""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.kit import assert_exact, assert_number, assert_rejects_all, grade, learner

UNIT = "c4_platform"
place_gang = learner(UNIT, "platform", "place_gang")
frag_metrics = learner(UNIT, "platform", "frag_metrics")
self_heal = learner(UNIT, "platform", "self_heal")
rfc_sizing = learner(UNIT, "platform", "rfc_sizing")


def close(got: object, want: float) -> bool:
    return (
        isinstance(got, (int, float))
        and not isinstance(got, bool)
        and math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9)
    )


# ---- place_gang --------------------------------------------------------------------------------


def ref_place(free: list[int], n: int, tp: int) -> list[tuple[int, int]] | None:
    """Best fit written with a sort per group: the smallest hole that still holds tp, lowest id on ties."""
    if sum(f // tp for f in free) * tp < n:
        return None
    left = list(free)
    taken: dict[int, int] = {}
    for _ in range(n // tp):
        fits = sorted((f, i) for i, f in enumerate(left) if f >= tp)
        _, i = fits[0]
        left[i] -= tp
        taken[i] = taken.get(i, 0) + tp
    return sorted(taken.items())


def check_placement(got: object, want: list | None, call: str) -> None:
    if want is None:
        assert got is None, f"{call} = {got!r}, expected None: the gang does not fit, so nothing is placed"
        return
    assert isinstance(got, list), f"{call} returned {type(got).__name__}, expected a list of (node, gpus)"
    got_pairs = [tuple(p) for p in got]
    assert got_pairs == want, (
        f"{call} = {got}, expected {want} (one TP group at a time on the node with the "
        f"fewest free GPUs that still holds tp, lower id on ties; sorted by node)"
    )


@grade(
    place_gang,
    "correctness",
    points=3,
    hint="Which node should a 1-GPU job take: a full node, or the one with a single GPU left?",
)
def test_place_gang_worked_examples():
    cases = [
        (([8, 1, 7, 8], 16, 8), [(0, 8), (3, 8)]),
        (([7, 7, 7, 7], 8, 8), None),
        (([8, 6, 4, 2], 8, 2), [(1, 2), (2, 4), (3, 2)]),
        (([8, 1, 7, 8], 8, 1), [(1, 1), (2, 7)]),
        (([8, 8, 8, 8], 32, 8), [(0, 8), (1, 8), (2, 8), (3, 8)]),
        (([4, 4, 3], 8, 4), [(0, 4), (1, 4)]),
        (([4, 4, 3], 12, 4), None),  # 11 idle GPUs, only two TP-4 holes
    ]
    for args, want in cases:
        check_placement(place_gang(*args), want, f"place_gang{args}")


@grade(
    place_gang,
    "correctness",
    points=3,
    hint="When is the gang refused even though enough GPUs are idle? Is every group inside one node?",
)
@settings(max_examples=60)
@given(
    free=st.lists(st.integers(0, 8), min_size=1, max_size=12),
    tp=st.sampled_from([1, 2, 4, 8]),
    groups=st.integers(1, 12),
)
def test_place_gang_properties(free, tp, groups):
    n = groups * tp
    got = place_gang(list(free), n, tp)
    call = f"place_gang({free}, {n}, {tp})"
    fits = sum(f // tp for f in free) >= groups
    assert (got is None) == (not fits), (
        f"{call} = {got!r}: a gang of {groups} TP-{tp} groups {'fits' if fits else 'does not fit'} "
        f"(Σ ⌊free/tp⌋ = {sum(f // tp for f in free)})"
    )
    if got is not None:
        for node, g in got:
            assert g % tp == 0 and 0 < g <= free[node], (
                f"{call}: node {node} takes {g} GPUs of its {free[node]} free (a multiple of tp = {tp}, at most free)"
            )
        assert sum(g for _, g in got) == n, f"{call} places {sum(g for _, g in got)} GPUs, expected {n}"
    check_placement(got, ref_place(free, n, tp), call)


@grade(
    place_gang, "correctness", points=1, validation=True, hint="Can a TP group be split? Can a node have -1 free GPUs?"
)
def test_place_gang_rejects_bad_input():
    assert_rejects_all(
        place_gang,
        [
            (([8, 8], 12, 8), "n_gpus"),
            (([8, 8], 0, 8), "n_gpus"),
            (([8, 8], 8.0, 8), "n_gpus"),
            (([8, 8], 8, 0), "tp"),
            (([8, 8], 8, True), "tp"),
            (([], 8, 8), "free_per_node"),
            ((8, 8, 8), "free_per_node"),
            (([8, -1], 8, 8), "free_per_node[1]"),
            (([8, 7.5], 8, 8), "free_per_node[1]"),
        ],
    )


# ---- frag_metrics ------------------------------------------------------------------------------

FRAG_KEYS = ("total", "busy", "idle", "frag_ratio", "stranded_gpus", "stranded_fraction", "placeable_groups")
INT_KEYS = ("total", "busy", "idle", "stranded_gpus", "placeable_groups")


def check_frag(got: object, want: dict, call: str) -> None:
    assert isinstance(got, dict), f"{call} returned {type(got).__name__}, expected a dict with keys {FRAG_KEYS}"
    for key in FRAG_KEYS:
        assert key in got, f"{call} has no {key!r} key"
        if key in INT_KEYS:
            assert_exact(got[key], want[key], f"{call}[{key!r}]", why="GPU counts are exact ints")
        else:
            assert_number(got[key], want[key], f"{call}[{key!r}]", rel=1e-12)


def ref_frag(free: list[int], g: int, tp: int) -> dict:
    total, idle = g * len(free), sum(free)
    stranded = sum(f - (f // tp) * tp for f in free)
    return {
        "total": total,
        "busy": total - idle,
        "idle": idle,
        "frag_ratio": idle / total,
        "stranded_gpus": stranded,
        "stranded_fraction": stranded / idle if idle else 0.0,
        "placeable_groups": sum(f // tp for f in free),
    }


@grade(
    frag_metrics,
    "correctness",
    points=3,
    hint="A node with one busy GPU has 7 idle: how many of them can a TP = 8 job use?",
)
def test_frag_worked_examples():
    one = [7] + [0] * 15
    check_frag(
        frag_metrics(one, 8),
        {
            "total": 128,
            "busy": 121,
            "idle": 7,
            "frag_ratio": 0.0546875,
            "stranded_gpus": 7,
            "stranded_fraction": 1.0,
            "placeable_groups": 0,
        },
        "frag_metrics([7] + [0]*15, 8)",
    )
    four = [7, 7, 7, 7] + [0] * 12
    check_frag(
        frag_metrics(four, 8),
        {
            "total": 128,
            "busy": 100,
            "idle": 28,
            "frag_ratio": 0.21875,
            "stranded_gpus": 28,
            "stranded_fraction": 1.0,
            "placeable_groups": 0,
        },
        "frag_metrics([7, 7, 7, 7] + [0]*12, 8)",
    )
    check_frag(frag_metrics([0] * 4, 8), ref_frag([0] * 4, 8, 8), "frag_metrics([0]*4, 8) (nothing idle)")
    check_frag(frag_metrics([8, 7, 6, 3], 8, tp=4), ref_frag([8, 7, 6, 3], 8, 4), "frag_metrics([8, 7, 6, 3], 8, tp=4)")


@grade(
    frag_metrics,
    "correctness",
    points=2,
    hint="Is FragRatio the share of GPUs no job can use, or only the share that is idle?",
)
@settings(max_examples=50)
@given(data=st.data(), g=st.sampled_from([4, 8, 16]))
def test_frag_properties(data, g):
    tp = data.draw(st.sampled_from([t for t in (1, 2, 4, 8) if t <= g]), label="tp")
    free = data.draw(st.lists(st.integers(0, g), min_size=1, max_size=20), label="free")
    got = frag_metrics(free, g, tp)
    call = f"frag_metrics({free}, {g}, {tp})"
    check_frag(got, ref_frag(free, g, tp), call)
    assert got["stranded_gpus"] + tp * got["placeable_groups"] == got["idle"], (
        f"{call}: stranded + tp · placeable must be the idle count"
    )


@grade(frag_metrics, "correctness", points=1, validation=True, hint="Can a node have more free GPUs than it has?")
def test_frag_rejects_bad_input():
    assert_rejects_all(
        frag_metrics,
        [
            (([9, 0], 8), "free_per_node[0]"),
            (([8, -1], 8), "free_per_node[1]"),
            (([], 8), "free_per_node"),
            (([8], 0), "gpus_per_node"),
            (([8], 8.0), "gpus_per_node"),
            (([8], 8, 16), "tp"),
            (([8], 8, 0), "tp"),
        ],
    )


# ---- self_heal ---------------------------------------------------------------------------------

REPLACE, RESTART = {48, 64, 74, 79, 95}, {13, 31, 43, 94}


def ref_heal(events, spares, poll=0.5, swap=60.0, restart=120.0) -> dict:
    """The daemon, written with exact fractions for every time; floats only at the end."""
    poll_f = Fraction(str(poll))
    tainted: list[int] = []
    incidents, repairs = [], []
    for t, node, xid in events:
        t_f = Fraction(str(t))
        detect = -(-t_f // poll_f) * poll_f
        rec = None
        if node in tainted:
            act = "already_tainted"
        elif xid in REPLACE:
            tainted.append(node)
            act = "suspend" if spares == 0 else "replace"
            if spares:
                spares -= 1
                rec = detect + Fraction(str(swap)) + Fraction(str(restart))
        elif xid in RESTART:
            act, rec = "restart", detect + Fraction(str(restart))
        else:
            act = "watch"
        if rec is not None:
            repairs.append(rec - t_f)
        incidents.append(
            {
                "node": node,
                "xid": xid,
                "action": act,
                "detected_s": float(detect),
                "recovered_s": None if rec is None else float(rec),
            }
        )
    mttr = float(sum(repairs) / len(repairs)) if repairs else None
    return {"incidents": incidents, "mttr_s": mttr, "tainted": sorted(tainted), "spares_left": spares}


def check_heal(got: object, want: dict, call: str) -> None:
    assert isinstance(got, dict), f"{call} returned {type(got).__name__}, expected a dict"
    inc = got.get("incidents")
    assert isinstance(inc, list) and len(inc) == len(want["incidents"]), (
        f"{call}['incidents'] = {inc!r}, expected one incident per event ({len(want['incidents'])})"
    )
    for k, (g, w) in enumerate(zip(inc, want["incidents"], strict=True)):
        where = f"{call}['incidents'][{k}]"
        for key in ("node", "xid", "action"):
            assert g.get(key) == w[key], f"{where}[{key!r}] = {g.get(key)!r}, expected {w[key]!r} (event {w})"
        assert close(g.get("detected_s"), w["detected_s"]), (
            f"{where}['detected_s'] = {g.get('detected_s')!r}, expected {w['detected_s']} (the next poll at or "
            f"after the event: ceil(t / poll) · poll on the decimals as typed)"
        )
        if w["recovered_s"] is None:
            assert g.get("recovered_s") is None, f"{where}['recovered_s'] = {g.get('recovered_s')!r}, expected None"
        else:
            assert close(g.get("recovered_s"), w["recovered_s"]), (
                f"{where}['recovered_s'] = {g.get('recovered_s')!r}, expected {w['recovered_s']} ({w['action']})"
            )
    if want["mttr_s"] is None:
        assert got.get("mttr_s") is None, f"{call}['mttr_s'] = {got.get('mttr_s')!r}, expected None (nothing recovered)"
    else:
        assert close(got.get("mttr_s"), want["mttr_s"]), (
            f"{call}['mttr_s'] = {got.get('mttr_s')!r}, expected {want['mttr_s']}"
        )
    assert list(got.get("tainted", [])) == want["tainted"], (
        f"{call}['tainted'] = {got.get('tainted')!r}, expected {want['tainted']}"
    )
    assert got.get("spares_left") == want["spares_left"] and type(got.get("spares_left")) is int, (
        f"{call}['spares_left'] = {got.get('spares_left')!r}, expected {want['spares_left']}"
    )


EVENTS = [(10.2, 3, 79), (11.0, 3, 48), (30.0, 5, 31), (40.1, 7, 92), (100.0, 9, 74), (200.3, 11, 48)]


@grade(
    self_heal,
    "correctness",
    points=3,
    hint="Is Xid 31 a reason to swap a node? Is 92 a thermal alarm? What happens when the spares run out?",
)
def test_self_heal_worked_example():
    got = self_heal(EVENTS, 2)
    call = f"self_heal({EVENTS}, 2)"
    actions = ["replace", "already_tainted", "restart", "watch", "replace", "suspend"]
    want = ref_heal(EVENTS, 2)
    assert [i["action"] for i in want["incidents"]] == actions
    assert [i["recovered_s"] for i in want["incidents"]] == [190.5, None, 150.0, None, 280.0, None]
    check_heal(got, want, call)
    assert_number(got["mttr_s"], 160.1, f"{call}['mttr_s']", rel=1e-9)
    assert list(got["tainted"]) == [3, 9, 11], f"{call}['tainted'] = {got['tainted']!r}, expected [3, 9, 11]"


@grade(
    self_heal,
    "correctness",
    points=2,
    hint="At a 0.3 s poll, when is an event at 2.1 s seen? Does float division agree?",
)
def test_self_heal_poll_grid_is_exact():
    events = [(2.1, 0, 31), (2.2, 1, 13), (2.7, 2, 43)]  # 2.1 / 0.3 = 7.000000000000001 in floats
    got = self_heal(events, 0, poll_s=0.3, swap_s=30.0, restart_s=90.0)
    check_heal(got, ref_heal(events, 0, 0.3, 30.0, 90.0), f"self_heal({events}, 0, poll_s=0.3, ...)")
    got = self_heal([(0.0, 4, 79)], 1)
    check_heal(got, ref_heal([(0.0, 4, 79)], 1), "self_heal([(0.0, 4, 79)], 1) (an event on a poll is seen then)")


EVENT_LISTS = st.lists(
    st.tuples(
        st.integers(0, 5000), st.integers(0, 6), st.sampled_from([13, 31, 43, 48, 61, 63, 64, 74, 79, 92, 94, 95, 119])
    ),
    max_size=10,
).map(lambda evs: [(t / 10, n, x) for t, n, x in sorted(evs)])


@grade(self_heal, "correctness", points=2, hint="Can the spare count go below zero? Does a tainted node act again?")
@settings(max_examples=50)
@given(events=EVENT_LISTS, spares=st.integers(0, 3), poll=st.sampled_from([0.5, 0.1, 0.25, 1.0, 0.3]))
def test_self_heal_matches_reference(events, spares, poll):
    got = self_heal(events, spares, poll_s=poll)
    call = f"self_heal({events}, {spares}, poll_s={poll})"
    assert got.get("spares_left", -1) >= 0, f"{call}: spares_left {got.get('spares_left')} is negative"
    check_heal(got, ref_heal(events, spares, poll), call)


@grade(
    self_heal,
    "correctness",
    points=1,
    validation=True,
    hint="What must a replayed event log look like for the replay to mean anything?",
)
def test_self_heal_rejects_bad_input():
    assert_rejects_all(
        self_heal,
        [
            (([(5.0, 1, 79), (4.0, 2, 48)], 1), "events[1]"),
            (([(1.0, 1)], 1), "events[0]"),
            (([(-1.0, 1, 79)], 1), "events[0]"),
            (([(1.0, -1, 79)], 1), "events[0]"),
            (([(1.0, 1, 7.9)], 1), "events[0]"),
            (([(math.nan, 1, 79)], 1), "events[0]"),
            (("10.2 3 79", 1), "events"),
            (([], -1), "n_spares"),
            (([], 1.0), "n_spares"),
            (([], 1, 0.0), "poll_s"),
            (([], 1, -0.5), "poll_s"),
            (([], 1, 0.5, -1.0), "swap_s"),
            (([], 1, 0.5, 60.0, math.inf), "restart_s"),
        ],
    )


# ---- rfc_sizing --------------------------------------------------------------------------------


def check_rfc(got: object, want: dict, call: str) -> None:
    assert isinstance(got, dict), f"{call} returned {type(got).__name__}, expected a dict"
    for key in ("nodes", "injection_bytes_s", "spare_gpus", "spare_nodes"):
        assert key in got, f"{call} has no {key!r} key"
        assert_exact(got[key], want[key], f"{call}[{key!r}]", why="counts and bytes are exact ints; ceilings exact")
    assert "failures_per_day" in got, f"{call} has no 'failures_per_day' key"
    assert_number(got["failures_per_day"], want["failures_per_day"], f"{call}['failures_per_day']", rel=1e-12)


def ref_rfc(n, g, nics, gbit, frac, mtbf) -> dict:
    spare = math.ceil(Fraction(str(frac)) * n)
    return {
        "nodes": -(-n // g),
        "injection_bytes_s": nics * gbit * 125_000_000,
        "spare_gpus": spare,
        "spare_nodes": -(-spare // g),
        "failures_per_day": 24 / mtbf,
    }


@grade(
    rfc_sizing,
    "correctness",
    points=3,
    hint="8 NICs of 400 Gb/s: how many bytes per second? And 2 % of 10,000 GPUs, in whole nodes?",
)
def test_rfc_worked_example():
    call = "rfc_sizing(10000, 8, 8, 400, 0.02, 12)"
    check_rfc(
        rfc_sizing(10000, 8, 8, 400, 0.02, 12),
        {
            "nodes": 1250,
            "injection_bytes_s": 400_000_000_000,
            "spare_gpus": 200,
            "spare_nodes": 25,
            "failures_per_day": 2.0,
        },
        call,
    )
    # 0.07 · 100 is 7.000000000000001 in floats: the ceiling must see 7
    check_rfc(
        rfc_sizing(100, 8, 4, 200, 0.07, 36.5),
        ref_rfc(100, 8, 4, 200, 0.07, 36.5),
        "rfc_sizing(100, 8, 4, 200, 0.07, 36.5)",
    )
    check_rfc(
        rfc_sizing(1001, 8, 1, 25, 0.0, 1000),
        ref_rfc(1001, 8, 1, 25, 0.0, 1000),
        "rfc_sizing(1001, 8, 1, 25, 0.0, 1000)",
    )


@grade(rfc_sizing, "correctness", points=2, hint="Is a ceiling of a decimal fraction safe in floating point?")
@settings(max_examples=50)
@given(
    n=st.integers(1, 50_000),
    g=st.sampled_from([4, 8, 16]),
    nics=st.integers(1, 8),
    gbit=st.sampled_from([25, 100, 200, 400, 800]),
    pct=st.integers(0, 99),
    per=st.sampled_from([100, 1000]),
    mtbf=st.floats(0.5, 10_000),
)
def test_rfc_properties(n, g, nics, gbit, pct, per, mtbf):
    frac = float(f"0.{pct:02d}") if per == 100 else float(f"0.0{pct:02d}")
    call = f"rfc_sizing({n}, {g}, {nics}, {gbit}, {frac}, {mtbf})"
    check_rfc(rfc_sizing(n, g, nics, gbit, frac, mtbf), ref_rfc(n, g, nics, gbit, frac, mtbf), call)


@grade(rfc_sizing, "correctness", points=1, validation=True, hint="Which sizes and rates make no sense for a cluster?")
def test_rfc_rejects_bad_input():
    ok = (10000, 8, 8, 400, 0.02, 12)

    def bad(i, v):
        args = list(ok)
        args[i] = v
        return tuple(args)

    assert_rejects_all(
        rfc_sizing,
        [
            (bad(0, 0), "n_gpus"),
            (bad(0, 1e4), "n_gpus"),
            (bad(1, 0), "gpus_per_node"),
            (bad(2, 0), "nics_per_node"),
            (bad(3, 400.0), "nic_gbit_s"),
            (bad(4, 1.0), "spare_fraction"),
            (bad(4, -0.01), "spare_fraction"),
            (bad(4, math.nan), "spare_fraction"),
            (bad(5, 0), "gpu_mtbf_cluster_h"),
            (bad(5, math.inf), "gpu_mtbf_cluster_h"),
        ],
    )


# ---- a day on the platform: the four functions chained -----------------------------------------


@grade(
    self_heal,
    "correctness",
    points=2,
    hint="Follow the RFC: size the cluster, place the jobs, measure what is left, heal a failure. Which step breaks?",
)
def test_platform_day_scenario():
    # 1. size a 128-GPU pod: 16 nodes, 8 × 400G each, 5 % spares (ceil 6.4 = 7 GPUs → 1 spare node), MTBF 96 h
    rfc = rfc_sizing(128, 8, 8, 400, 0.05, 96)
    check_rfc(
        rfc,
        {
            "nodes": 16,
            "injection_bytes_s": 400_000_000_000,
            "spare_gpus": 7,
            "spare_nodes": 1,
            "failures_per_day": 0.25,
        },
        "rfc_sizing(128, 8, 8, 400, 0.05, 96)",
    )
    free = [8] * rfc["nodes"]

    def take(placement):
        for node, g in placement:
            free[node] -= g

    # 2. pretraining: 64 GPUs at TP = 8 fill nodes 0-7; a notebook of 6 single GPUs lands in one node (best fit)
    pre = place_gang(list(free), 64, 8)
    check_placement(pre, [(i, 8) for i in range(8)], "place_gang([8]*16, 64, 8)")
    take(pre)
    nb = place_gang(list(free), 6, 1)
    check_placement(nb, [(8, 6)], f"place_gang({free}, 6, 1)")
    take(nb)

    # 3. measure: 58 idle GPUs (45.3 %), 2 of them stranded for TP = 8, 7 placeable groups
    check_frag(frag_metrics(free, 8), ref_frag(free, 8, 8), f"frag_metrics({free}, 8)")
    assert frag_metrics(free, 8)["placeable_groups"] == 7
    check_placement(place_gang(list(free), 64, 8), None, f"place_gang({free}, 64, 8) (58 idle GPUs)")
    sft = place_gang(list(free), 56, 8)
    check_placement(sft, [(i, 8) for i in range(9, 16)], f"place_gang({free}, 56, 8)")
    take(sft)
    check_frag(frag_metrics(free, 8), ref_frag(free, 8, 8), f"frag_metrics({free}, 8) (after the SFT job)")

    # 4. heal: node 3 falls off the bus (the one spare node replaces it), an app fault restarts the notebook,
    #    then node 12's uncorrectable ECC finds the spare pool empty: the SFT job is suspended
    events = [(3600.2, 3, 79), (5400.0, 8, 31), (7200.3, 12, 95)]
    healed = self_heal(events, rfc["spare_nodes"])
    check_heal(healed, ref_heal(events, rfc["spare_nodes"]), f"self_heal({events}, {rfc['spare_nodes']})")
    assert [i["action"] for i in healed["incidents"]] == ["replace", "restart", "suspend"]
    assert_number(healed["mttr_s"], (180.3 + 120.0) / 2, "the day's MTTR", rel=1e-9)

    # 5. the tainted nodes leave the pool: only node 8's 2 GPUs stay idle, stranded for TP = 8
    for node in healed["tainted"]:
        free[node] = 0
    check_frag(frag_metrics(free, 8), ref_frag(free, 8, 8), f"frag_metrics({free}, 8) (tainted nodes drained)")
