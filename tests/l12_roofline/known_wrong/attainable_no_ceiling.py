"""Classic bug: attainable = bandwidth × intensity with no compute ceiling (a GEMM "reaches" 4.5 PFLOP/s)."""

MODULE = "roofline"
REJECTED_BY = {"attainable_flops": ["correctness"]}


def attainable_flops(intensity, peak_flops, mem_bw):
    i = _check_positive("intensity", intensity, allow_zero=True)
    _check_positive("peak_flops", peak_flops)
    return _check_positive("mem_bw", mem_bw) * i
