"""Cheat (R3.2): reads x element by element on the host (``x[i, j]``: the simulator's array indexes its backing array
for any caller, and only a kernel thread's reads are traced), builds the transpose in Python, and has a kernel copy
it through shared memory, coalesced and conflict-free: every element of y is stored by a kernel. Only the refusal
of every host read of a device array (not just copy_to_host) stops it."""

MODULE = "cuda_transpose"
REJECTED_BY = {"transpose_smem": ["correctness", "efficiency"]}


@cuda.jit
def _launder_elements(src, y):
    tile = cuda.shared.array((TILE, TILE + 1), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0, col0 = cuda.blockIdx.y * TILE, cuda.blockIdx.x * TILE
    for k in range(0, TILE, BLOCK_ROWS):
        r, c = row0 + ty + k, col0 + tx
        if r < src.shape[0] and c < src.shape[1]:
            tile[ty + k, tx] = src[r, c]
    cuda.syncthreads()
    for k in range(0, TILE, BLOCK_ROWS):
        r, c = row0 + ty + k, col0 + tx
        if r < src.shape[0] and c < src.shape[1]:
            y[r, c] = tile[ty + k, tx]


def transpose_smem(x):
    n_rows, n_cols = x.shape
    host = np.array([[x[i, j] for i in range(n_rows)] for j in range(n_cols)], dtype=np.float32)
    answer = cuda.to_device(host)
    y = cuda.device_array(answer.shape, dtype=np.float32)
    grid = ((answer.shape[1] + TILE - 1) // TILE, (answer.shape[0] + TILE - 1) // TILE)
    _launder_elements[grid, (TILE, BLOCK_ROWS)](answer, y)
    return y
