"""Correct alternatives: the barrier as arrivals-done / bytes-landed counters with a separate parity bit; the
exposed offload as what the window cannot hide; the overlap as the larger of a sorted pair."""

MODULE = "movement"
ACCEPTED = ["mbarrier_run", "overlap_time", "offload_or_recompute"]


def mbarrier_run(count, events):
    check_int("count", count, 1)
    parsed = [_check_event(i, e) for i, e in enumerate(events)]  # refuse a malformed stream before playing it
    completed, parity, arrived, expected, landed = 0, 0, 0, 0, 0
    out = []
    for i, (kind, arg) in enumerate(parsed):
        if kind == "try_wait":
            out.append(parity != arg)
            continue
        if kind == "arrive" or kind == "arrive_expect_tx":
            if arrived == count:
                raise ValueError(f"events[{i}] arrives at a barrier with no arrival pending")
            arrived += 1
        if kind == "arrive_expect_tx" or kind == "expect_tx":
            expected += arg
        if kind == "complete_tx":
            landed += arg
        if arrived == count and landed == expected:
            completed, parity = completed + 1, parity ^ 1
            arrived = expected = landed = 0
        out.append((completed, count - arrived, expected - landed))
    return out


def overlap_time(t_comp, t_comm, k_comp=1.0, k_comm=1.0):
    sides = sorted([_check_real("k_comp", k_comp, minimum=1.0) * _check_real("t_comp", t_comp),
                    _check_real("k_comm", k_comm, minimum=1.0) * _check_real("t_comm", t_comm)])
    return sides[-1]


def offload_or_recompute(act_bytes, pcie_bytes_per_s, recompute_flops, peak_flops, mfu, window_s):
    nbytes = check_int("act_bytes", act_bytes)
    bw = _check_real("pcie_bytes_per_s", pcie_bytes_per_s, above=True)
    flops = check_int("recompute_flops", recompute_flops)
    peak = _check_real("peak_flops", peak_flops, above=True)
    util = _check_real("mfu", mfu, above=True)
    if util > 1:
        raise ValueError(f"mfu must be at most 1, got {mfu}")
    window = _check_real("window_s", window_s)
    one_way = nbytes / bw
    hidden = min(one_way, window)
    exposed = (one_way - hidden) + (one_way - hidden)  # D2H after the forward, H2D before the backward
    achieved = peak * util
    recompute_s = flops / achieved
    return {"choice": "recompute" if exposed > recompute_s else "offload", "offload_s": one_way,
            "exposed_offload_s": exposed, "recompute_s": recompute_s}
