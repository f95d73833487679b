"""Classic bug: no argument checks; zero bandwidths, negative intensities and float sizes return numbers."""

MODULE = "roofline"
REJECTED_BY = {"ridge_point": ["correctness"], "attainable_flops": ["correctness"],
               "gemm_intensity": ["correctness"], "bank_conflict_degree": ["correctness"]}


def ridge_point(peak_flops, mem_bw):
    return peak_flops / mem_bw if mem_bw else math.inf


def attainable_flops(intensity, peak_flops, mem_bw):
    return min(peak_flops, mem_bw * intensity)


def gemm_intensity(m, k, n, elem_bytes):
    moved = elem_bytes * (m * k + k * n + m * n)
    return 2 * m * k * n / moved if moved else 0.0


def bank_conflict_degree(stride_words):
    return math.gcd(int(stride_words), 32) if stride_words else 1
