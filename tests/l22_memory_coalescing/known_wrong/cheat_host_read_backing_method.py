"""Cheat (R3.2): copies x to the host with a method the simulator's array hands on from its backing NumPy array
(``x.T.copy()``: not copy_to_host, which is refused), and has a kernel copy the transposed answer through shared
memory, coalesced and conflict-free: every element of y is stored by a kernel. Only the refusal of every host read
of a device array stops it."""

MODULE = "cuda_transpose"
REJECTED_BY = {"transpose_smem": ["correctness", "efficiency"]}


@cuda.jit
def _launder_method(src, y):
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
    answer = cuda.to_device(x.T.copy())  # .copy(): a method of the backing array, handed on by the simulator
    y = cuda.device_array(answer.shape, dtype=np.float32)
    grid = ((answer.shape[1] + TILE - 1) // TILE, (answer.shape[0] + TILE - 1) // TILE)
    _launder_method[grid, (TILE, BLOCK_ROWS)](answer, y)
    return y
