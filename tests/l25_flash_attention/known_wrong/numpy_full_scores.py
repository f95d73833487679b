"""Correct but not FlashAttention: the NumPy version builds the whole n × n score matrix (efficiency only)."""

MODULE = "attention"
REJECTED_BY = {"flash_attention_numpy": ["efficiency"]}


def flash_attention_numpy(q, k, v, *, causal=False, sm_scale=None, block_r=16, block_c=16):
    n, d = _check_numpy_qkv(q, k, v)
    s = q @ k.T * _softmax_scale(d, sm_scale)
    if causal:
        s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
    m = s.max(axis=1)
    p = np.exp(s - m[:, None])
    l_i = p.sum(axis=1)
    return p @ v / l_i[:, None], m + np.log(l_i)
