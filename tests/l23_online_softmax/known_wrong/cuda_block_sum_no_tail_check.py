"""Classic bug: loads x[i] and x[i + BLOCK] without checking them against n: past the end of x or of the partials."""

MODULE = "cuda_reduce"
REJECTED_BY = {"block_sum": ["correctness", "efficiency"]}


@cuda.jit
def _block_sum_kernel(x, partials):
    buf = cuda.shared.array(BLOCK, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * 2 * BLOCK + t
    buf[t] = x[i] + x[i + BLOCK]
    cuda.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        partials[cuda.blockIdx.x] = buf[0]
