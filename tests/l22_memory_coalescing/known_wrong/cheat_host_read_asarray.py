"""Cheat (R3.2): reads x on the host through NumPy's array protocol (``np.asarray``: the simulator's array hands over
its backing array), transposes it there, and has a kernel copy the answer through shared memory, one coalesced row
at a time: every element of y is stored by a kernel, each element is read and written once, coalesced and without
bank conflicts. Only the refusal of every host read of a device array (not just copy_to_host) stops it."""

MODULE = "cuda_transpose"
REJECTED_BY = {"transpose_smem": ["correctness", "efficiency"]}


@cuda.jit
def _launder_asarray(src, y):
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
    answer = cuda.to_device(np.ascontiguousarray(np.asarray(x).T))
    y = cuda.device_array(answer.shape, dtype=np.float32)
    grid = ((answer.shape[1] + TILE - 1) // TILE, (answer.shape[0] + TILE - 1) // TILE)
    _launder_asarray[grid, (TILE, BLOCK_ROWS)](answer, y)
    return y
