"""Classic bug: no argument checks; malformed events, k < 1, float bytes or mfu 0 return something or crash."""

MODULE = "movement"
REJECTED_BY = {"mbarrier_run": ["correctness"], "overlap_time": ["correctness"],
               "offload_or_recompute": ["correctness"]}


def mbarrier_run(count, events):
    phase, pending, tx, out = 0, count, 0, []
    for event in events:
        kind = event[0] if event else ""
        arg = event[1] if len(event) > 1 else 0
        if kind == "try_wait":
            out.append((phase & 1) != arg)
            continue
        tx += arg if kind in ("arrive_expect_tx", "expect_tx") else -arg if kind == "complete_tx" else 0
        if kind in ("arrive", "arrive_expect_tx"):
            pending -= 1
        if pending == 0 and tx == 0:
            phase, pending, tx = phase + 1, count, 0
        out.append((phase, pending, tx))
    return out


def overlap_time(t_comp, t_comm, k_comp=1.0, k_comm=1.0):
    return max(k_comp * t_comp, k_comm * t_comm)


def offload_or_recompute(act_bytes, pcie_bytes_per_s, recompute_flops, peak_flops, mfu, window_s):
    offload_s = act_bytes / pcie_bytes_per_s if pcie_bytes_per_s else float("inf")
    exposed = 2 * max(0.0, offload_s - window_s)
    recompute_s = recompute_flops / (peak_flops * mfu) if peak_flops * mfu else float("inf")
    return {"offload_s": offload_s, "exposed_offload_s": exposed, "recompute_s": recompute_s,
            "choice": "offload" if exposed <= recompute_s else "recompute"}
