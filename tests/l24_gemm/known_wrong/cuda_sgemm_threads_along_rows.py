"""Classic bug: threadIdx.x walks the rows of C, so every warp request strides by a whole row (efficiency)."""

MODULE = "cuda_sgemm"
REJECTED_BY = {"sgemm_tiled": ["efficiency"]}


@cuda.jit
def _sgemm_tiled_kernel(a, b, c):
    a_tile = cuda.shared.array((TILE, TILE), numba.float32)
    b_tile = cuda.shared.array((TILE, TILE), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * TILE + tx, cuda.blockIdx.x * TILE + ty
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    acc = numba.float32(0.0)
    for k0 in range(0, k, TILE):
        a_tile[tx, ty] = a[row, k0 + ty] if row < m and k0 + ty < k else numba.float32(0.0)
        b_tile[tx, ty] = b[k0 + tx, col] if k0 + tx < k and col < n else numba.float32(0.0)
        cuda.syncthreads()
        for kk in range(TILE):
            acc += a_tile[tx, kk] * b_tile[kk, ty]
        cuda.syncthreads()
    if row < m and col < n:
        c[row, col] = acc
