"""Attack (R3.3, a standard-library function that imports by string): ``pydoc.locate`` imports and walks a dotted
name given as text, so torch's C module is reached with no ``torch._C`` attribute and no getattr in the source; its
DisableTorchFunction switches the guard off for torch.softmax, and a Triton copy kernel stores every element of the
output (one read, one write: the fused ledger). The allowlist refuses pydoc (not among what a kernel imports)."""

ZERO = ["softmax_fused"]
MESSAGE = "not among what a graded module may import"


@triton.jit
def _launder_pydoc(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=offs < n), mask=offs < n)


def softmax_fused(x):
    import pydoc

    off = pydoc.locate("torch." + "_C.DisableTorchFunction")
    with off():
        y = torch.softmax(x.float(), dim=-1).to(x.dtype)
    out = torch.empty_like(x)
    _launder_pydoc[(triton.cdiv(x.numel(), 1024),)](y, out, x.numel(), BLOCK=1024)
    return out
