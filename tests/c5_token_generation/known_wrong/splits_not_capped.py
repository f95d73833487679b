"""Classic bug: more splits than blocks: a 100-token context cut into 17 splits leaves splits with no block at all."""

MODULE = "tokengen"
REJECTED_BY = {"flashdecoding_splits": ["correctness"]}


def flashdecoding_splits(n_kv_heads, batch, n_sms, seq_len, block_size=1):
    n_blocks = -(-seq_len // block_size)
    splits = max(1, -(-n_sms // (n_kv_heads * batch)))
    ctas = n_kv_heads * batch * splits
    return {"n_blocks": n_blocks, "splits": splits, "chunk_tokens": -(-n_blocks // splits) * block_size, "ctas": ctas,
            "waves": -(-ctas // n_sms)}
