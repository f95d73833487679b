"""Classic bug (the lecture's 2 × size): read and write of the same ND size, the padded NZ write forgotten."""

MODULE = "npu"
REJECTED_BY = {"layout_conversion_cost": ["correctness"]}


def layout_conversion_cost(shape, elem_bytes, hbm_bytes_per_s, n_conversions=1, compute_s=0.0, h0=16, w0=16):
    if isinstance(shape, str | bytes) or not isinstance(shape, Sequence) or len(shape) < 2:
        raise ValueError("shape must have at least 2 dims")
    dims = [check_int(f"shape[{i}]", d, 1) for i, d in enumerate(shape)]
    b = check_int("elem_bytes", elem_bytes, 1)
    bw = _check_real("hbm_bytes_per_s", hbm_bytes_per_s, above_zero=True)
    n = check_int("n_conversions", n_conversions)
    compute = _check_real("compute_s", compute_s)
    check_int("h0", h0, 1), check_int("w0", w0, 1)
    nd = math.prod(dims) * b
    per = 2 * nd
    t_one = per / bw
    step = compute + n * t_one
    return {"nd_bytes": nd, "nz_bytes": nd, "bytes_per_conversion": per, "t_conversion_s": t_one,
            "t_total_s": n * t_one, "step_s": step, "waste_fraction": n * t_one / step if step else 0.0}
