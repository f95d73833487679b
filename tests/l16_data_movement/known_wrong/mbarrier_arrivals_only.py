"""Classic bug: the phase completes when the last thread arrives, whether or not the bytes have landed."""

MODULE = "movement"
REJECTED_BY = {"mbarrier_run": ["correctness"]}


def mbarrier_run(count, events):
    check_int("count", count, 1)
    phase, pending, tx, out = 0, count, 0, []
    for i, event in enumerate(events):
        kind, arg = _check_event(i, event)
        if kind == "try_wait":
            out.append((phase & 1) != arg)
            continue
        tx += arg if kind in ("arrive_expect_tx", "expect_tx") else -arg if kind == "complete_tx" else 0
        if kind in ("arrive", "arrive_expect_tx"):
            if pending == 0:
                raise ValueError(f"events[{i}]: no arrival pending")
            pending -= 1
        if pending == 0:
            phase, pending, tx = phase + 1, count, 0
        out.append((phase, pending, tx))
    return out
