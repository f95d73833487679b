"""Attack (host code in an interpreted kernel): the kernel is made with `triton.jit(f)` instead of a
decorator, and a reduction's combine function is a plain host function (math.exp on scalars) that
tl.reduce runs under the interpreter: neither looks like a decorated kernel calling the host."""

ZERO = ["softmax_fused"]
MESSAGE = "host code inside a @triton.jit kernel"


def _host_max(a, b):
    return tl.maximum(a, b) if math.isfinite(0.0) else a


def _body(x_ptr, y_ptr, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)
    num = tl.exp(x - tl.reduce(x, 0, _host_max))
    tl.store(y_ptr + row * n_cols + offs, num / tl.sum(num, axis=0), mask=offs < n_cols)


_kernel = triton.jit(_body)


def softmax_fused(x):
    y = torch.empty_like(x)
    _kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK_N=triton.next_power_of_2(x.shape[1]))
    return y
