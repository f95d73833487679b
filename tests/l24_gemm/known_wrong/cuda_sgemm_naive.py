"""The naive kernel: no shared memory, every thread reads a row of A and a column of B from global (efficiency)."""

MODULE = "cuda_sgemm"
REJECTED_BY = {"sgemm_tiled": ["efficiency"]}


@cuda.jit
def _sgemm_tiled_kernel(a, b, c):
    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    if row < c.shape[0] and col < c.shape[1]:
        acc = numba.float32(0.0)
        for kk in range(a.shape[1]):
            acc += a[row, kk] * b[kk, col]
        c[row, col] = acc
