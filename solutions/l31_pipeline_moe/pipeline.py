"""L31 · Pipeline schedules on a clock: GPipe and 1F1B orders, makespan, bubble, micro-batches in flight.

A model cut into p stages runs m micro-batches. Each stage runs its own list of operations, one at a
time: ("F", i) is the forward of micro-batch i, ("B", i) its backward. A forward needs the previous
stage's forward of the same micro-batch; a backward needs the next stage's backward (the last stage's
backward needs its own forward). Nothing else waits: communication is free here.

GPipe runs all forwards, then all backwards. 1F1B (PipeDream-flush, Megatron) runs a few warm-up
forwards, then alternates one forward and one backward. With equal stages both finish at
(m + p − 1)·(t_F + t_B), so the bubble, the share of stage time spent idle, is (p − 1)/(m + p − 1)
for both; what 1F1B saves is memory: a stage keeps the activations of every micro-batch whose forward
has started and whose backward has not ended, m of them in GPipe, at most p − s in 1F1B.

Conventions: times are integers (clock ticks); the timeline lists, for each tick t, the operations
running in [t, t + 1) as (stage, micro-batch, kind); invalid arguments raise ValueError naming the
argument.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

Op = tuple[str, int]
KINDS = ("gpipe", "1f1b")


# ---------------------------------------------------------------------------------------------
# 1. The orders each stage runs
# ---------------------------------------------------------------------------------------------


def pipeline_orders(p: int, m: int, kind: str) -> list[list[Op]]:
    """One list of operations per stage (stage 0 first) for ``p`` stages and ``m`` micro-batches.

    "gpipe": F0, F1, ..., F(m−1), then B0, ..., B(m−1) on every stage.
    "1f1b": stage s runs min(p − s − 1, m) warm-up forwards, then one forward and one backward in turn
    (forward first), then the backwards left. p=4, m=8, stage 0: F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7
    B4 B5 B6 B7; the last stage has no warm-up: F0 B0 F1 B1 ...
    ValueError naming ``kind`` for another kind, ``p`` or ``m`` for a count below 1.
    """
    p, m = check_int("p", p, 1), check_int("m", m, 1)
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    # TODO: GPipe's two phases; 1F1B's warm-up forwards, steady F/B pairs and cool-down backwards.
    ### BEGIN SOLUTION
    orders = []
    for s in range(p):
        if kind == "gpipe":
            orders.append([("F", i) for i in range(m)] + [("B", i) for i in range(m)])
            continue
        warmup = min(p - s - 1, m)
        ops: list[Op] = [("F", i) for i in range(warmup)]
        for i in range(m - warmup):
            ops += [("F", warmup + i), ("B", i)]
        ops += [("B", i) for i in range(m - warmup, m)]
        orders.append(ops)
    return orders
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 2. Running the orders on a clock
# ---------------------------------------------------------------------------------------------


def _check_times(name: str, value: object, p: int) -> list[int]:
    """``value`` as p ints >= 1 (one int means the same time on every stage), or ValueError naming ``name``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return [check_int(name, value, 1)] * p
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != p:
        raise ValueError(f"{name} must be an int >= 1 or a list of p = {p} of them, got {value!r}")
    return [check_int(name, t, 1) for t in value]


def _check_orders(orders: object) -> tuple[list[list[Op]], int]:
    """The orders as lists of (kind, micro-batch), and m; ValueError naming ``orders[s]`` when malformed."""
    if not isinstance(orders, Sequence) or isinstance(orders, str) or not orders:
        raise ValueError(f"orders must be a non-empty list with one list of operations per stage, got {orders!r}")
    clean: list[list[Op]] = []
    m = None
    for s, stage in enumerate(orders):
        if not isinstance(stage, Sequence) or isinstance(stage, str):
            raise ValueError(f"orders[{s}] must be a list of (kind, micro-batch) pairs, got {stage!r}")
        ops = [tuple(op) if isinstance(op, Sequence) and not isinstance(op, str) else op for op in stage]
        if any(not (isinstance(op, tuple) and len(op) == 2 and op[0] in ("F", "B") and isinstance(op[1], int)
                    and not isinstance(op[1], bool)) for op in ops):
            raise ValueError(f"orders[{s}] must hold (\"F\" or \"B\", int) pairs, got {list(stage)!r}")
        n = len(ops) // 2
        m = n if m is None else m
        want = {(k, i) for k in "FB" for i in range(m)}
        if len(ops) != 2 * m or set(ops) != want or m < 1:
            raise ValueError(f"orders[{s}] must hold F0..F{m - 1} and B0..B{m - 1} once each "
                             f"(m = {m} from orders[0]), got {list(stage)!r}")
        position = {op: j for j, op in enumerate(ops)}
        late = [i for i in range(m) if position[("B", i)] < position[("F", i)]]
        if late:
            raise ValueError(f"orders[{s}] runs B{late[0]} before F{late[0]}: a backward needs its forward")
        clean.append(ops)  # type: ignore[arg-type]
    assert m is not None
    return clean, m


def _dependency(op: Op, s: int, p: int) -> tuple[int, str, int] | None:
    """The operation of another stage (or the same stage's forward) that ``op`` on stage ``s`` waits for."""
    # TODO: a forward waits for the previous stage's forward; a backward for the next stage's backward (the
    #   last stage's backward for its own forward); the first stage's forward waits for nothing (None).
    ### BEGIN SOLUTION
    kind, i = op
    if kind == "F":
        return (s - 1, "F", i) if s > 0 else None
    return (s + 1, "B", i) if s < p - 1 else (s, "F", i)
    ### END SOLUTION


def _peak_in_flight(ops: Sequence[Op], start: dict, end: dict, s: int) -> int:
    """Most micro-batches of stage s whose F has started and whose B has not ended (a B ending at t frees first)."""
    # TODO: +1 when an F starts, −1 when a B ends, in time order with the ends first at equal times; the peak.
    ### BEGIN SOLUTION
    events = sorted((start[(s, "F", i)], 1) if k == "F" else (end[(s, "B", i)], -1) for k, i in ops)
    held = peak = 0
    for _, delta in events:  # at one time, -1 sorts before +1: the B that ends frees its slot first
        held += delta
        peak = max(peak, held)
    return peak
    ### END SOLUTION


def simulate_pipeline(orders: Sequence[Sequence[Op]], t_fwd: int | Sequence[int], t_bwd: int | Sequence[int]
                      ) -> dict:
    """Run each stage's ``orders`` on an integer clock; forward t_F,s and backward t_B,s ticks on stage s.

    Returns {"makespan": end of the last operation, "start": {(stage, kind, micro-batch): start tick},
    "busy": [m·(t_F,s + t_B,s) per stage], "bubble_fraction": 1 − Σbusy/(p·makespan), "peak_in_flight":
    [per stage: most micro-batches whose F has started and whose B has not ended; a B that ends at t frees
    its slot before an F that starts at t], "timeline": [for each tick t < makespan, the sorted list of
    (stage, micro-batch, kind) running in [t, t+1)]}.
    Each operation starts as soon as its stage is free and the operation it waits for has ended.
    Worked: p=4, m=8, t_F=1, t_B=2: makespan 33 for GPipe and 1F1B, bubble 9/33; peaks GPipe [8, 8, 8, 8],
    1F1B [4, 3, 2, 1]. p=2, m=2 GPipe, unit times: timeline [[(0,0,"F")], [(0,1,"F"), (1,0,"F")],
    [(1,1,"F")], [(1,0,"B")], [(0,0,"B"), (1,1,"B")], [(0,1,"B")]].
    ValueError naming ``orders[s]`` for a stage that does not hold F0..F(m−1), B0..B(m−1) once with each F
    before its B; "orders deadlock ..." when no stage can move; ``t_fwd``/``t_bwd`` for bad times.
    """
    clean, m = _check_orders(orders)
    p = len(clean)
    t_f, t_b = _check_times("t_fwd", t_fwd, p), _check_times("t_bwd", t_bwd, p)
    # TODO: advance every stage whose next operation's dependency (_dependency) has ended (start = max(stage
    #   free, dependency end)) until all have run; no stage can move = deadlock. Then busy, bubble, the peaks
    #   (_peak_in_flight) and the timeline.
    ### BEGIN SOLUTION
    start: dict[tuple[int, str, int], int] = {}
    end: dict[tuple[int, str, int], int] = {}
    nxt, free = [0] * p, [0] * p
    left = 2 * m * p
    while left:
        moved = False
        for s in range(p):
            while nxt[s] < 2 * m:
                kind, i = clean[s][nxt[s]]
                dep = _dependency((kind, i), s, p)
                if dep is not None and dep not in end:
                    break
                t0 = max(free[s], end[dep] if dep is not None else 0)
                start[(s, kind, i)] = t0
                free[s] = end[(s, kind, i)] = t0 + (t_f[s] if kind == "F" else t_b[s])
                nxt[s] += 1
                left -= 1
                moved = True
        if not moved:
            stuck = ", ".join(f"stage {s} at {clean[s][nxt[s]][0]}{clean[s][nxt[s]][1]}"
                              for s in range(p) if nxt[s] < 2 * m)
            raise ValueError(f"orders deadlock: every stage left waits on another ({stuck})")
    makespan = max(end.values())
    busy = [m * (t_f[s] + t_b[s]) for s in range(p)]
    timeline: list[list[tuple[int, int, str]]] = [[] for _ in range(makespan)]
    for (s, kind, i), t0 in start.items():
        for t in range(t0, end[(s, kind, i)]):
            timeline[t].append((s, i, kind))
    return {
        "makespan": makespan,
        "start": start,
        "busy": busy,
        "bubble_fraction": float(1 - Fraction(sum(busy), p * makespan)),
        "peak_in_flight": [_peak_in_flight(clean[s], start, end, s) for s in range(p)],
        "timeline": [sorted(ops) for ops in timeline],
    }
    ### END SOLUTION
