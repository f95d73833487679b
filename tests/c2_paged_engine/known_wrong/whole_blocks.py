"""Classic bug (the lecture's kernel sketch): attend over every slot of the table's blocks, not the first
context_len: the slots past the context are read (masked by position, but 0 × NaN is NaN)."""

MODULE = "engine"
REJECTED_BY = {"paged_attention": ["correctness"]}


def paged_attention(q, k_cache, v_cache, block_table, context_len, q_start):
    t, b = int(q.shape[0]), int(k_cache.shape[1])
    if context_len != q_start + t:
        raise ValueError(f"context_len {context_len} must equal q_start + T")
    blocks = torch.as_tensor(list(block_table)[: -(-context_len // b)], dtype=torch.long)
    keys, values = k_cache[blocks].flatten(0, 1), v_cache[blocks].flatten(0, 1)
    pos = torch.arange(keys.shape[0])
    scores = torch.einsum("thd,chd->htc", q, keys) / math.sqrt(q.shape[-1])
    future = pos.unsqueeze(0) > (torch.arange(t) + q_start).unsqueeze(1)
    scores = scores.masked_fill(future.unsqueeze(0), float("-inf"))
    return torch.einsum("htc,chd->thd", torch.softmax(scores, dim=-1), values)
