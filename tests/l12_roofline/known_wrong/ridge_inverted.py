"""Classic bug: ridge point = bandwidth / peak (bytes per FLOP) instead of peak / bandwidth (FLOP per byte)."""

MODULE = "roofline"
REJECTED_BY = {"ridge_point": ["correctness"]}


def ridge_point(peak_flops, mem_bw):
    return _check_positive("mem_bw", mem_bw) / _check_positive("peak_flops", peak_flops)
