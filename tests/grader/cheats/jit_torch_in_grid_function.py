"""Attack (host code during a launch): torch.softmax runs inside the grid function of a launch, where
the guard used to let every torch op through (the interpreter copies arguments with torch), and a
copy kernel then stores the result, so every output element is written by a kernel. Nothing in the
source is refused by the audit: the guard must see that the torch call comes from learner code."""

ZERO = ["softmax_fused"]
MESSAGE = "must compute in its Triton kernel"


@triton.jit
def _touch(x_ptr):
    tl.program_id(0)


@triton.jit
def _copy_rows(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=offs < n), mask=offs < n)


def softmax_fused(x):
    box = []
    _touch[lambda meta: box.append(torch.softmax(x.float(), dim=-1).to(x.dtype)) or (1,)](x)
    out = torch.empty_like(x)
    _copy_rows[(triton.cdiv(x.numel(), 1024),)](box[0], out, x.numel(), BLOCK=1024)
    return out
