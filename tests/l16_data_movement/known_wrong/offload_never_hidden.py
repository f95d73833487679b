"""Classic bug (the course's lab 4 model): both transfers counted in full, as if nothing ran beside them."""

MODULE = "movement"
REJECTED_BY = {"offload_or_recompute": ["correctness"]}


def offload_or_recompute(act_bytes, pcie_bytes_per_s, recompute_flops, peak_flops, mfu, window_s):
    nbytes, flops = check_int("act_bytes", act_bytes), check_int("recompute_flops", recompute_flops)
    bw = _check_real("pcie_bytes_per_s", pcie_bytes_per_s, above=True)
    peak, util = _check_real("peak_flops", peak_flops, above=True), _check_real("mfu", mfu, above=True)
    if util > 1:
        raise ValueError("mfu must be in (0, 1]")
    _check_real("window_s", window_s)
    offload_s = nbytes / bw
    exposed = 2 * offload_s
    recompute_s = flops / (peak * util)
    return {"offload_s": offload_s, "exposed_offload_s": exposed, "recompute_s": recompute_s,
            "choice": "offload" if exposed <= recompute_s else "recompute"}
