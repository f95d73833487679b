"""Not FlashAttention: each Q tile computes its full block_r × n strip of scores at once (exact, but O(n) per row
of working memory instead of tiles; efficiency only)."""

MODULE = "attention"
REJECTED_BY = {"flash_attention_numpy": ["efficiency"]}


def flash_attention_numpy(q, k, v, *, causal=False, sm_scale=None, block_r=16, block_c=16):
    n, d = _check_numpy_qkv(q, k, v)
    scale = _softmax_scale(d, sm_scale)
    o, lse = np.empty((n, d)), np.empty(n)
    for r0 in range(0, n, block_r):
        r1 = min(n, r0 + block_r)
        s = q[r0:r1] @ k.T * scale
        if causal:
            s = np.where(np.arange(r0, r1)[:, None] >= np.arange(n)[None, :], s, -np.inf)
        m = s.max(axis=1)
        np.exp(s - m[:, None], out=s)
        l_i = s.sum(axis=1)
        o[r0:r1] = s @ v / l_i[:, None]
        lse[r0:r1] = m + np.log(l_i)
    return o, lse
