"""Classic bug: no bounds check on the partial tiles at the edges: reads and writes past the matrix."""

MODULE = "cuda_transpose"
REJECTED_BY = {"transpose_smem": ["correctness"]}


@cuda.jit
def _transpose_tile_kernel(x, y):
    tile = cuda.shared.array((TILE, TILE + 1), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0, col0 = cuda.blockIdx.y * TILE, cuda.blockIdx.x * TILE
    for k in range(0, TILE, BLOCK_ROWS):
        tile[ty + k, tx] = x[row0 + ty + k, col0 + tx]
    cuda.syncthreads()
    for k in range(0, TILE, BLOCK_ROWS):
        y[col0 + ty + k, row0 + tx] = tile[tx, ty + k]
