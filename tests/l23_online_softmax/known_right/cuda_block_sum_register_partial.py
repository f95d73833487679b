"""Correct alternative: each thread keeps its partial in a register (one shared load and one store per step)."""

MODULE = "cuda_reduce"
ACCEPTED = ["block_sum"]


@cuda.jit
def _block_sum_kernel(x, partials):
    buf = cuda.shared.array(BLOCK, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * 2 * BLOCK + t
    v = numba.float32(0.0)
    if i < x.shape[0]:
        v = x[i]
    if i + BLOCK < x.shape[0]:
        v += x[i + BLOCK]
    buf[t] = v
    cuda.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if t < s:
            v += buf[t + s]
            buf[t] = v
        cuda.syncthreads()
        s //= 2
    if t == 0:
        partials[cuda.blockIdx.x] = v
