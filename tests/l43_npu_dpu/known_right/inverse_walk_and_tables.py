"""Correct alternatives: offsets by divmod of the block index; nd_to_nz filling a preallocated buffer at each
element's offset; nz_to_nd walking the buffer and inverting each offset; cost from padded counts; the probe and
device strings as lookup tables."""

MODULE = "npu"
ACCEPTED = ["nz_offset", "nd_to_nz", "nz_to_nd", "layout_conversion_cost", "detect_backend", "device_string"]


def nz_offset(r, c, h, w, h0=16, w0=16):
    h, w = check_int("h", h, 1), check_int("w", w, 1)
    h0, w0 = check_int("h0", h0, 1), check_int("w0", w0, 1)
    if not check_int("r", r) < h:
        raise ValueError(f"r = {r} is outside 0..{h - 1}")
    if not check_int("c", c) < w:
        raise ValueError(f"c = {c} is outside 0..{w - 1}")
    br, i = divmod(r, h0)
    bc, j = divmod(c, w0)
    blocks_per_column = (h + h0 - 1) // h0
    return (bc * blocks_per_column + br) * (h0 * w0) + i * w0 + j


def nd_to_nz(matrix, h0=16, w0=16, pad_value=0.0):
    h, w = _check_matrix(matrix)
    h0, w0 = check_int("h0", h0, 1), check_int("w0", w0, 1)
    hp, wp = (h + h0 - 1) // h0 * h0, (w + w0 - 1) // w0 * w0
    flat = [pad_value] * (hp * wp)
    for r, row in enumerate(matrix):
        for c, value in enumerate(row):
            flat[nz_offset(r, c, hp, wp, h0, w0)] = value
    return flat, hp, wp


def nz_to_nd(flat, h, w, h0=16, w0=16):
    h, w = check_int("h", h, 1), check_int("w", w, 1)
    h0, w0 = check_int("h0", h0, 1), check_int("w0", w0, 1)
    if isinstance(flat, str | bytes) or not isinstance(flat, Sequence):
        raise ValueError("flat must be a sequence")
    h1, w1 = (h + h0 - 1) // h0, (w + w0 - 1) // w0
    if len(flat) != h1 * w1 * h0 * w0:
        raise ValueError(f"flat: expected {h1 * w1 * h0 * w0} entries, got {len(flat)}")
    out = [[None] * w for _ in range(h)]
    for k, value in enumerate(flat):
        block, inside = divmod(k, h0 * w0)
        bc, br = divmod(block, h1)
        i, j = divmod(inside, w0)
        r, c = br * h0 + i, bc * w0 + j
        if r < h and c < w:
            out[r][c] = value
    return out


def layout_conversion_cost(shape, elem_bytes, hbm_bytes_per_s, n_conversions=1, compute_s=0.0, h0=16, w0=16):
    if not isinstance(shape, list | tuple) or len(shape) < 2:
        raise ValueError(f"shape needs at least two dims, got {shape!r}")
    dims = [check_int(f"shape[{i}]", d, 1) for i, d in enumerate(shape)]
    b = check_int("elem_bytes", elem_bytes, 1)
    bw = _check_real("hbm_bytes_per_s", hbm_bytes_per_s, above_zero=True)
    n = check_int("n_conversions", n_conversions)
    compute = _check_real("compute_s", compute_s)
    h0, w0 = check_int("h0", h0, 1), check_int("w0", w0, 1)
    padded = [*dims[:-2], (dims[-2] + h0 - 1) // h0 * h0, (dims[-1] + w0 - 1) // w0 * w0]
    nd, nz = math.prod(dims) * b, math.prod(padded) * b
    total = n * (nd + nz) / bw
    step = total + compute
    return {"waste_fraction": 0.0 if step == 0 else total / step, "step_s": step, "t_total_s": total,
            "t_conversion_s": (nd + nz) / bw, "bytes_per_conversion": nd + nz, "nz_bytes": nz, "nd_bytes": nd}


def detect_backend(torch_npu_importable, npu_available, cuda_available, hip_version):
    flags = {"torch_npu_importable": torch_npu_importable, "npu_available": npu_available,
             "cuda_available": cuda_available}
    for name, value in flags.items():
        if type(value) is not bool:
            raise ValueError(f"{name} must be True or False, got {value!r}")
    if not (hip_version is None or isinstance(hip_version, str)):
        raise ValueError(f"hip_version must be None or a string, got {hip_version!r}")
    probes = [("npu", torch_npu_importable and npu_available), ("rocm", cuda_available and hip_version is not None),
              ("cuda", cuda_available), ("cpu", True)]
    return next(name for name, ok in probes if ok)


def device_string(backend, index=0):
    prefix = {"npu": "npu:", "cuda": "cuda:", "rocm": "cuda:", "cpu": None}
    if not isinstance(backend, str) or backend not in prefix:
        raise ValueError(f"backend {backend!r} is not one of {sorted(prefix)}")
    check_int("index", index)
    return "cpu" if prefix[backend] is None else f"{prefix[backend]}{index}"
