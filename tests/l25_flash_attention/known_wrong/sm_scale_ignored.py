"""Classic bug: the launcher always uses 1/sqrt(d), ignoring the caller's sm_scale."""

MODULE = "attention"
REJECTED_BY = {"flash_attention_fwd": ["correctness"]}


def flash_attention_fwd(q, k, v, causal=False, sm_scale=None, *, block_m=64, block_n=64):
    batch, heads, n, d = _check_qkv(q, k, v)
    _check_blocks(block_m=block_m, block_n=block_n)
    o = torch.empty((batch, heads, n, d), dtype=q.dtype, device=q.device)
    lse = torch.empty((batch, heads, n), dtype=torch.float32, device=q.device)
    _flash_fwd_kernel[(triton.cdiv(n, block_m), batch * heads)](
        q, k, v, o, lse, 1.0 / math.sqrt(d), n, heads,
        *q.stride(), *k.stride(), *v.stride(), *o.stride(), *lse.stride(),
        HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=bool(causal),
        DOT_PRECISION="ieee" if q.dtype == torch.float32 else "tf32",
    )
    return o, lse
