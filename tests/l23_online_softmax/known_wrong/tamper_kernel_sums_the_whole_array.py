"""Tamper (R3.2): one thread of a @cuda.jit kernel asks the device array for ``x.sum()``, which the simulator's array
hands on to its backing NumPy array: the whole input is read untraced, and the one stored partial is the only
traced access. The audit now reads numba kernels (a kernel body uses numba.cuda, math, numba's types and elements,
not an array's methods), and at run time a kernel may ask a device array only for its shape, size and dtype."""

MODULE = "cuda_reduce"
REJECTED_BY = {"block_sum": ["correctness", "efficiency"]}


@cuda.jit
def _sum_untraced(x, out):
    if cuda.threadIdx.x == 0 and cuda.blockIdx.x == 0:
        out[0] = x.sum()


def block_sum(x):
    out = cuda.device_array(1, dtype=np.float32)
    _sum_untraced[1, 32](x, out)
    return out
