"""Happens-before from direct edges only: a → b → c through two events does not order a before c."""

MODULE = "async_exec"
REJECTED_BY = {"simulate_streams": ["correctness"]}


def simulate_streams(ops: Sequence[tuple], launch_us: float = 0.0) -> dict:
    launch = _check_real("launch_us", launch_us, positive=False)
    if isinstance(ops, str | bytes) or not isinstance(ops, Sequence):
        raise ValueError(f"ops must be a sequence of op tuples, got {ops!r}")
    host = 0.0
    names: list[str] = []
    times: dict[str, tuple[float, float]] = {}
    access: list[tuple[str, set[str], set[str]]] = []  # (stream, reads, writes) per kernel
    before: list[int] = []  # bit j of before[i]: kernel j happens before kernel i
    frontier: dict[str, tuple[int, float]] = {}  # stream -> (kernels its next kernel follows, their end)
    events: dict[str, tuple[int, float]] = {}
    synced, latest_end = 0, 0.0
    for i, raw in enumerate(ops):
        op = _check_op(i, raw, set(names), set(events))
        if op[0] == "kernel":
            _, stream, name, dur, reads, writes = op
            host += launch
            mask, ready = frontier.get(stream, (0, 0.0))
            start = max(host, ready)
            end = start + dur
            j = len(names)
            names.append(name)
            times[name] = (start, end)
            access.append((stream, set(reads), set(writes)))
            before.append(mask | synced)
            frontier[stream] = ((1 << j), end)
            latest_end = max(latest_end, end)
        elif op[0] == "record":
            events[op[2]] = frontier.get(op[1], (0, 0.0))
        elif op[0] == "wait":
            mask, ready = frontier.get(op[1], (0, 0.0))
            e_mask, e_ready = events[op[2]]
            frontier[op[1]] = (mask | e_mask, max(ready, e_ready))
        else:
            host = max(host, latest_end)
            synced = (1 << len(names)) - 1
    hazards = []
    for later in range(len(names)):
        s_l, r_l, w_l = access[later]
        for earlier in range(later):
            s_e, r_e, w_e = access[earlier]
            if s_e == s_l or before[later] >> earlier & 1:
                continue
            shared = (w_e & (r_l | w_l)) | (r_e & w_l)
            hazards.extend((names[earlier], names[later], buf) for buf in sorted(shared))
    return {"times": times, "hazards": hazards}
