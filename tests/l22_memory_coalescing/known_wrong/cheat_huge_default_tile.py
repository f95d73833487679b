"""Cheat (ledger trusts declared blocks): defaults of 65536 × 65536 declared, 32 × 32 tiles launched, each loaded twice;
the padded ledger on the declared blocks allowed anything. Explicit blocks: the honest kernel."""

MODULE = "transpose"
REJECTED_BY = {"transpose": ["efficiency"]}

_DECLARED = 1 << 16


@triton.jit
def _transpose_twice_kernel(x_ptr, y_ptr, n_rows, n_cols, stride_xm, stride_xn, stride_ym, stride_yn,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < n_rows) & (offs_n[None, :] < n_cols)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_n[None, :] * stride_xn
    tile = tl.load(x_ptrs, mask=mask) + tl.load(x_ptrs, mask=mask) * 0  # the tile loaded twice
    tl.store(y_ptr + offs_n[:, None] * stride_ym + offs_m[None, :] * stride_yn, tl.trans(tile), mask=tl.trans(mask))


def transpose(x: torch.Tensor, block_m: int = _DECLARED, block_n: int = _DECLARED) -> torch.Tensor:
    n_rows, n_cols = _check_input(x)
    y = torch.empty((n_cols, n_rows), dtype=x.dtype, device=x.device)
    kernel, bm, bn = _transpose_kernel, block_m, block_n
    if (block_m, block_n) == (_DECLARED, _DECLARED):
        kernel, bm, bn = _transpose_twice_kernel, 32, 32
    kernel[(triton.cdiv(n_rows, bm), triton.cdiv(n_cols, bn))](x, y, n_rows, n_cols, x.stride(0), x.stride(1),
                                                               y.stride(0), y.stride(1), BLOCK_M=bm, BLOCK_N=bn)
    return y
