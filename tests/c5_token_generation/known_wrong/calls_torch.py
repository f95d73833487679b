"""Classic bug: the attention computed with torch ops on the host (gather, softmax, einsum) instead of a kernel."""

MODULE = "flash_decode"
REJECTED_BY = {'flash_decode': ['correctness', 'efficiency']}


def flash_decode(q, k_cache, v_cache, block_table, context_lens, num_splits=4, *, sm_scale=None):
    batch, n_heads, d, block_size, n_kv, splits = _check_decode_args(q, k_cache, v_cache, block_table, context_lens,
                                                                     num_splits)
    scale = float(sm_scale) if sm_scale is not None else 1.0 / math.sqrt(d)
    out = torch.empty_like(q)
    for b in range(batch):
        n = int(context_lens[b])
        pos = torch.arange(n)
        phys = block_table[b].long()[pos // block_size]
        k = k_cache[phys, pos % block_size].float().repeat_interleave(n_heads // n_kv, dim=1)
        v = v_cache[phys, pos % block_size].float().repeat_interleave(n_heads // n_kv, dim=1)
        s = torch.einsum("hd,nhd->hn", q[b].float(), k) * scale
        out[b] = torch.einsum("hn,nhd->hd", torch.softmax(s, -1), v).to(q.dtype)
    return out
