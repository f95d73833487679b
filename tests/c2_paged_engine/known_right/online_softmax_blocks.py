"""Correct alternatives: write_kv with index_copy_; attention block by block with an online softmax (FlashAttention's
recurrence, as a paged kernel streams blocks) that stops at context_len."""

MODULE = "engine"
ACCEPTED = ["write_kv", "paged_attention", "PagedEngine"]


def write_kv(k_cache, v_cache, k, v, slots):
    k_cache.view(-1, *k_cache.shape[2:]).index_copy_(0, slots, k.to(k_cache.dtype))
    v_cache.view(-1, *v_cache.shape[2:]).index_copy_(0, slots, v.to(v_cache.dtype))


def paged_attention(q, k_cache, v_cache, block_table, context_len, q_start):
    t, h, d = q.shape
    b = int(k_cache.shape[1])
    if context_len != q_start + t:
        raise ValueError(f"context_len {context_len} must equal q_start + T")
    qpos = torch.arange(t) + q_start
    m = torch.full((h, t), float("-inf"), dtype=q.dtype)
    s = torch.zeros((h, t), dtype=q.dtype)
    acc = torch.zeros((h, t, d), dtype=q.dtype)
    for i in range(-(-context_len // b)):
        valid = min(b, context_len - i * b)
        keys, values = k_cache[block_table[i], :valid], v_cache[block_table[i], :valid]
        scores = torch.einsum("thd,chd->htc", q, keys) / math.sqrt(d)
        kpos = torch.arange(valid) + i * b
        scores = scores.masked_fill((kpos.unsqueeze(0) > qpos.unsqueeze(1)).unsqueeze(0), float("-inf"))
        m_new = torch.maximum(m, scores.amax(-1))
        alpha = torch.exp(m - m_new).nan_to_num(0.0)
        p = torch.exp(scores - m_new.unsqueeze(-1)).nan_to_num(0.0)
        s = s * alpha + p.sum(-1)
        acc = acc * alpha.unsqueeze(-1) + torch.einsum("htc,chd->htd", p, values)
        m = m_new
    return (acc / s.unsqueeze(-1)).permute(1, 0, 2)
