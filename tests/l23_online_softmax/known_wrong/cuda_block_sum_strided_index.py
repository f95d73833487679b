"""The ladder's second rung: packed threads, index 2·s·t: lanes hit words 2s apart, bank conflicts (efficiency)."""

MODULE = "cuda_reduce"
REJECTED_BY = {"block_sum": ["efficiency"]}


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
    s = 1
    while s < BLOCK:
        j = 2 * s * t
        if j < BLOCK:
            buf[j] += buf[j + s]
        cuda.syncthreads()
        s *= 2
    if t == 0:
        partials[cuda.blockIdx.x] = buf[0]
