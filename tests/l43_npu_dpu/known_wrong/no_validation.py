"""Classic bug: no argument checks: out-of-range indices, ragged rows, short buffers, int flags go through."""

MODULE = "npu"
REJECTED_BY = {
    "nz_offset": ["correctness"],
    "nd_to_nz": ["correctness"],
    "nz_to_nd": ["correctness"],
    "layout_conversion_cost": ["correctness"],
    "detect_backend": ["correctness"],
    "device_string": ["correctness"],
}


def nz_offset(r, c, h, w, h0=16, w0=16):
    h1 = -(-h // h0) if h0 else 1
    return ((c // w0) * h1 + r // h0) * h0 * w0 + (r % h0) * w0 + c % w0 if h0 and w0 else 0


def nd_to_nz(matrix, h0=16, w0=16, pad_value=0.0):
    h = len(matrix) if isinstance(matrix, list) else 0
    w = len(matrix[0]) if h and isinstance(matrix[0], list) else 0
    h0, w0 = max(int(h0), 1), max(int(w0), 1)
    h1, w1 = -(-h // h0), -(-w // w0)
    flat = []
    for bc in range(w1):
        for br in range(h1):
            for i in range(h0):
                for j in range(w0):
                    r, c = br * h0 + i, bc * w0 + j
                    row = matrix[r] if r < h and isinstance(matrix[r], list) else []
                    flat.append(row[c] if c < len(row) else pad_value)
    return flat, h1 * h0, w1 * w0


def nz_to_nd(flat, h, w, h0=16, w0=16):
    h, w, h0, w0 = int(h), int(w), max(int(h0), 1), max(int(w0), 1)
    h1 = -(-h // h0)
    flat = list(flat or [])
    out = []
    for r in range(h):
        row = []
        for c in range(w):
            k = ((c // w0) * h1 + r // h0) * h0 * w0 + (r % h0) * w0 + c % w0
            row.append(flat[k] if k < len(flat) else 0.0)
        out.append(row)
    return out


def layout_conversion_cost(shape, elem_bytes, hbm_bytes_per_s, n_conversions=1, compute_s=0.0, h0=16, w0=16):
    dims = list(shape) if isinstance(shape, list | tuple) else [1, 1]
    if len(dims) < 2:
        dims = [1, *dims]
    batch, h, w = math.prod(dims[:-2]), dims[-2], dims[-1]
    h0, w0 = h0 or 1, w0 or 1
    nd = int(batch * h * w * elem_bytes)
    nz = int(batch * (-(-h // h0) * h0) * (-(-w // w0) * w0) * elem_bytes)
    t_one = (nd + nz) / hbm_bytes_per_s if hbm_bytes_per_s else 0.0
    total = n_conversions * t_one
    step = compute_s + total
    return {"nd_bytes": nd, "nz_bytes": nz, "bytes_per_conversion": nd + nz, "t_conversion_s": t_one,
            "t_total_s": total, "step_s": step, "waste_fraction": total / step if step else 0.0}


def detect_backend(torch_npu_importable, npu_available, cuda_available, hip_version):
    if torch_npu_importable and npu_available:
        return "npu"
    if cuda_available:
        return "rocm" if hip_version is not None else "cuda"
    return "cpu"


def device_string(backend, index=0):
    if backend == "cpu":
        return "cpu"
    return f"{'npu' if backend == 'npu' else 'cuda'}:{index}"
