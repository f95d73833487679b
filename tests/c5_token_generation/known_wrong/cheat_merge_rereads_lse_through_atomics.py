"""Cheat (atomics as free loads): a two-pass merge whose second read of the lse values is an atomic add of 0 (it
returns the element); the atomic was counted apart from the loads, so the loads matched the partials once."""

MODULE = "flash_decode"
REJECTED_BY = {"merge_splits": ["efficiency"]}


@triton.jit
def _merge_kernel(o_part_ptr, lse_part_ptr, o_ptr, n_heads, num_splits, head_dim,
                  stride_pb, stride_ph, stride_ps, stride_pd,
                  stride_lb, stride_lh, stride_ls,
                  stride_ob, stride_oh, stride_od,
                  BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    b, h = (row // n_heads).to(tl.int64), (row % n_heads).to(tl.int64)
    offs_s, offs_d = tl.arange(0, BLOCK_S), tl.arange(0, BLOCK_D)
    s_ok, d_ok = offs_s < num_splits, offs_d < head_dim
    lse_ptrs = lse_part_ptr + b * stride_lb + h * stride_lh + offs_s * stride_ls
    m = tl.max(tl.load(lse_ptrs, mask=s_ok, other=-float("inf")), axis=0)
    o_s = tl.load(o_part_ptr + b * stride_pb + h * stride_ph + offs_s[:, None] * stride_ps
                  + offs_d[None, :] * stride_pd, mask=s_ok[:, None] & d_ok[None, :], other=0.0)
    again = tl.atomic_add(lse_ptrs, tl.zeros((BLOCK_S,), dtype=tl.float32), mask=s_ok)  # the second read
    lse = tl.where(s_ok, again, -float("inf"))
    w = tl.where(lse == -float("inf"), 0.0, tl.exp(lse - m))
    o = tl.sum(w[:, None] * o_s, axis=0) / tl.sum(w, axis=0)
    tl.store(o_ptr + b * stride_ob + h * stride_oh + offs_d * stride_od, o.to(o_ptr.dtype.element_ty), mask=d_ok)
