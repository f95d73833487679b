"""Classic bug: a two-pass merge: the lse values loaded once for the max and again for the weights."""

MODULE = "flash_decode"
REJECTED_BY = {'merge_splits': ['efficiency']}


@triton.jit
def _merge_kernel(o_part_ptr, lse_part_ptr, o_ptr, n_heads, num_splits, head_dim,
                  stride_pb, stride_ph, stride_ps, stride_pd,
                  stride_lb, stride_lh, stride_ls,
                  stride_ob, stride_oh, stride_od,
                  BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    """One (sequence, head): every split's (o_s, lse_s) loaded once, weighed by e^(lse_s − max)."""
    row = tl.program_id(0)
    b, h = (row // n_heads).to(tl.int64), (row % n_heads).to(tl.int64)
    offs_s, offs_d = tl.arange(0, BLOCK_S), tl.arange(0, BLOCK_D)
    s_ok, d_ok = offs_s < num_splits, offs_d < head_dim
    lse = tl.load(lse_part_ptr + b * stride_lb + h * stride_lh + offs_s * stride_ls, mask=s_ok,
                  other=-float("inf"))
    o_s = tl.load(o_part_ptr + b * stride_pb + h * stride_ph + offs_s[:, None] * stride_ps
                  + offs_d[None, :] * stride_pd, mask=s_ok[:, None] & d_ok[None, :], other=0.0)
    m = tl.max(lse, axis=0)
    lse = tl.load(lse_part_ptr + b * stride_lb + h * stride_lh + offs_s * stride_ls, mask=s_ok,
                  other=-float("inf"))
    w = tl.where(lse == -float("inf"), 0.0, tl.exp(lse - m))
    o = tl.sum(w[:, None] * o_s, axis=0) / tl.sum(w, axis=0)
    tl.store(o_ptr + b * stride_ob + h * stride_oh + offs_d * stride_od, o.to(o_ptr.dtype.element_ty), mask=d_ok)


def merge_splits(o_part: torch.Tensor, lse_part: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    if not isinstance(o_part, torch.Tensor) or o_part.dim() != 4 or o_part.dtype != torch.float32:
        raise ValueError("o_part must be a float32 tensor [batch, n_heads, num_splits, d]")
    if not isinstance(lse_part, torch.Tensor) or tuple(lse_part.shape) != tuple(o_part.shape[:3]) \
            or lse_part.dtype != torch.float32:
        raise ValueError(f"lse_part must be a float32 tensor {tuple(o_part.shape[:3])} (o_part's first three dims)")
    batch, n_heads, splits, d = o_part.shape
    o = torch.empty((batch, n_heads, d), dtype=dtype, device=o_part.device)
    _merge_kernel[(batch * n_heads,)](o_part, lse_part, o, n_heads, splits, d, *o_part.stride(), *lse_part.stride(),
                                      *o.stride(), BLOCK_S=triton.next_power_of_2(splits),
                                      BLOCK_D=triton.next_power_of_2(d))
    return o
