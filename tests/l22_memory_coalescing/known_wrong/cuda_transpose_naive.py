"""Classic first try: no shared memory, y[c, r] = x[r, c] from global: the writes stride by a row (efficiency)."""

MODULE = "cuda_transpose"
REJECTED_BY = {"transpose_smem": ["efficiency"]}


@cuda.jit
def _transpose_tile_kernel(x, y):
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0, col0 = cuda.blockIdx.y * TILE, cuda.blockIdx.x * TILE
    for k in range(0, TILE, BLOCK_ROWS):
        r, c = row0 + ty + k, col0 + tx
        if r < x.shape[0] and c < x.shape[1]:
            y[c, r] = x[r, c]
