"""Classic bug: waste measured against the compute time alone (143/300 = 47.7 %), not the lengthened step."""

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
    h0, w0 = check_int("h0", h0, 1), check_int("w0", w0, 1)
    batch, h, w = math.prod(dims[:-2]), dims[-2], dims[-1]
    nd = batch * h * w * b
    nz = batch * (-(-h // h0) * h0) * (-(-w // w0) * w0) * b
    t_one = (nd + nz) / bw
    total = n * t_one
    return {"nd_bytes": nd, "nz_bytes": nz, "bytes_per_conversion": nd + nz, "t_conversion_s": t_one,
            "t_total_s": total, "step_s": compute + total,
            "waste_fraction": total / compute if compute else (1.0 if total else 0.0)}
