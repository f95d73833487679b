"""Correct alternative: FlashAttention-1's loop order (K/V tiles outer, Q tiles inner), o used as the accumulator."""

MODULE = "attention"
ACCEPTED = ["flash_attention_numpy"]


def flash_attention_numpy(q, k, v, *, causal=False, sm_scale=None, block_r=16, block_c=16):
    n, d = _check_numpy_qkv(q, k, v)
    scale = _softmax_scale(d, sm_scale)
    o, m, l_i = np.zeros((n, d)), np.full(n, -np.inf), np.zeros(n)
    for c0 in range(0, n, block_c):
        c1 = min(n, c0 + block_c)
        first = c0 - c0 % block_r if causal else 0  # causal: Q tiles above this K/V tile see none of it
        for r0 in range(first, n, block_r):
            r1 = min(n, r0 + block_r)
            s = q[r0:r1] @ k[c0:c1].T * scale
            if causal:
                s = np.where(np.arange(r0, r1)[:, None] >= np.arange(c0, c1)[None, :], s, -np.inf)
            m_new = np.maximum(m[r0:r1], s.max(axis=1))
            safe = np.where(np.isinf(m_new), 0.0, m_new)  # a row that has seen only masked keys
            alpha = np.exp(m[r0:r1] - safe)
            p = np.exp(s - safe[:, None])
            l_i[r0:r1] = l_i[r0:r1] * alpha + p.sum(axis=1)
            o[r0:r1] = o[r0:r1] * alpha[:, None] + p @ v[c0:c1]
            m[r0:r1] = m_new
    o /= l_i[:, None]
    return o, m + np.log(l_i)
