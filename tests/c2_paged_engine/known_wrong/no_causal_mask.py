"""Classic bug: no causal mask inside a chunk: every query of a prefill chunk sees the whole context."""

MODULE = "engine"
REJECTED_BY = {"paged_attention": ["correctness"], "PagedEngine": ["correctness"]}


def paged_attention(q, k_cache, v_cache, block_table, context_len, q_start):
    t, b = int(q.shape[0]), int(k_cache.shape[1])
    if context_len != q_start + t:
        raise ValueError(f"context_len {context_len} must equal q_start + T")
    pos = torch.arange(context_len)
    slots = torch.as_tensor(list(block_table), dtype=torch.long)[pos // b] * b + pos % b
    keys = k_cache.view(-1, *k_cache.shape[2:])[slots]
    values = v_cache.view(-1, *v_cache.shape[2:])[slots]
    scores = torch.einsum("thd,chd->htc", q, keys) / math.sqrt(q.shape[-1])
    return torch.einsum("htc,chd->thd", torch.softmax(scores, dim=-1), values)
