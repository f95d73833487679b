"""Cheat: the launcher calls torch's scaled_dot_product_attention instead of writing the kernel."""

MODULE = "attention"
REJECTED_BY = {"flash_attention_fwd": ["correctness", "efficiency"]}


def flash_attention_fwd(q, k, v, causal=False, sm_scale=None, *, block_m=64, block_n=64):
    _check_qkv(q, k, v)
    o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=sm_scale)
    s = (q.float() @ k.float().transpose(-1, -2)) * (sm_scale or q.shape[-1] ** -0.5)
    return o, torch.logsumexp(s, dim=-1)
