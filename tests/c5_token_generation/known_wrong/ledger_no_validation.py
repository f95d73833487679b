"""Classic bug: no argument checks: a GB float, a bool batch or a zero split input is accepted."""

MODULE = "tokengen"
REJECTED_BY = {"decode_floor_ledger": ["correctness"], "flashdecoding_splits": ["correctness"]}


def decode_floor_ledger(weight_bytes, kv_bytes, hbm_bytes_per_s, peak_flops, flops_per_token, batch=1):
    total = weight_bytes + kv_bytes
    flops = batch * flops_per_token
    t_min = total / hbm_bytes_per_s if total else 1.0
    return {"bytes": total, "flops": flops, "t_min_s": t_min, "arith_intensity": flops / max(total, 1),
            "mfu": flops / t_min / peak_flops, "tokens_per_s_max": batch / t_min}


def flashdecoding_splits(n_kv_heads, batch, n_sms, seq_len, block_size=1):
    n_blocks = -(-seq_len // max(block_size, 1))
    splits = max(1, min(max(1, -(-n_sms // max(n_kv_heads * batch, 1))), n_blocks))
    ctas = n_kv_heads * batch * splits
    return {"n_blocks": n_blocks, "splits": splits, "chunk_tokens": -(-n_blocks // splits) * block_size, "ctas": ctas,
            "waves": -(-ctas // max(n_sms, 1))}
