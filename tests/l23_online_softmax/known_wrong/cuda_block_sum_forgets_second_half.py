"""Classic bug: each block is launched for 2·BLOCK elements but its threads load only x[i], never x[i + BLOCK]."""

MODULE = "cuda_reduce"
REJECTED_BY = {"block_sum": ["correctness", "efficiency"]}


@cuda.jit
def _block_sum_kernel(x, partials):
    buf = cuda.shared.array(BLOCK, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * 2 * BLOCK + t
    buf[t] = x[i] if i < x.shape[0] else numba.float32(0.0)
    cuda.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        partials[cuda.blockIdx.x] = buf[0]
