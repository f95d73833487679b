"""Classic bug: floor(n_sms / (kv heads · batch)) splits: 16 CTAs short of 132 SMs leave SMs idle (the fewest that
FILL them is the ceiling)."""

MODULE = "tokengen"
REJECTED_BY = {"flashdecoding_splits": ["correctness"]}


def flashdecoding_splits(n_kv_heads, batch, n_sms, seq_len, block_size=1):
    n_blocks = -(-seq_len // block_size)
    splits = min(max(1, n_sms // (n_kv_heads * batch)), n_blocks)
    ctas = n_kv_heads * batch * splits
    return {"n_blocks": n_blocks, "splits": splits, "chunk_tokens": -(-n_blocks // splits) * block_size, "ctas": ctas,
            "waves": -(-ctas // n_sms)}
