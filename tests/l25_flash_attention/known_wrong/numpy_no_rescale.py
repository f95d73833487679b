"""Classic bug: the NumPy tiles update m and l_i but add P·V to acc without rescaling it by e^(m_old - m_new)."""

MODULE = "attention"
REJECTED_BY = {"flash_attention_numpy": ["correctness", "efficiency"]}


def flash_attention_numpy(q, k, v, *, causal=False, sm_scale=None, block_r=16, block_c=16):
    n, d = _check_numpy_qkv(q, k, v)
    scale = _softmax_scale(d, sm_scale)
    o, lse = np.empty((n, d)), np.empty(n)
    for r0 in range(0, n, block_r):
        r1 = min(n, r0 + block_r)
        m, l_i, acc = np.full(r1 - r0, -np.inf), np.zeros(r1 - r0), np.zeros((r1 - r0, d))
        kv_end = r1 if causal else n
        for c0 in range(0, kv_end, block_c):
            c1 = min(kv_end, c0 + block_c)
            s = q[r0:r1] @ k[c0:c1].T * scale
            if causal:
                s = np.where(np.arange(r0, r1)[:, None] >= np.arange(c0, c1)[None, :], s, -np.inf)
            m_new = np.maximum(m, s.max(axis=1))
            p = np.exp(s - m_new[:, None])
            l_i = l_i * np.exp(m - m_new) + p.sum(axis=1)
            acc = acc + p @ v[c0:c1]
            m = m_new
        o[r0:r1] = acc / l_i[:, None]
        lse[r0:r1] = m + np.log(l_i)
    return o, lse
