"""Classic bug: a 32 × 32 tile without padding: the column read hits one bank 32 times (efficiency only)."""

MODULE = "cuda_transpose"
REJECTED_BY = {"transpose_smem": ["efficiency"]}


@cuda.jit
def _transpose_tile_kernel(x, y):
    tile = cuda.shared.array((TILE, TILE), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0, col0 = cuda.blockIdx.y * TILE, cuda.blockIdx.x * TILE
    for k in range(0, TILE, BLOCK_ROWS):
        r, c = row0 + ty + k, col0 + tx
        if r < x.shape[0] and c < x.shape[1]:
            tile[ty + k, tx] = x[r, c]
    cuda.syncthreads()
    for k in range(0, TILE, BLOCK_ROWS):
        r, c = col0 + ty + k, row0 + tx
        if r < y.shape[0] and c < y.shape[1]:
            y[r, c] = tile[tx, ty + k]
