"""Classic bug: stages a[row, k0 + tx] and b[k0 + ty, col] without checking k: the last k-step reads past K."""

MODULE = "cuda_sgemm"
REJECTED_BY = {"sgemm_tiled": ["correctness"]}


@cuda.jit
def _sgemm_tiled_kernel(a, b, c):
    a_tile = cuda.shared.array((TILE, TILE), numba.float32)
    b_tile = cuda.shared.array((TILE, TILE), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * TILE + ty, cuda.blockIdx.x * TILE + tx
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    acc = numba.float32(0.0)
    for k0 in range(0, k, TILE):
        a_tile[ty, tx] = a[row, k0 + tx] if row < m else numba.float32(0.0)
        b_tile[ty, tx] = b[k0 + ty, col] if col < n else numba.float32(0.0)
        cuda.syncthreads()
        for kk in range(TILE):
            acc += a_tile[ty, kk] * b_tile[kk, tx]
        cuda.syncthreads()
    if row < m and col < n:
        c[row, col] = acc
