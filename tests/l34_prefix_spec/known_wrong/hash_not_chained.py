"""Classic bug: each block hashed alone (no parent): equal blocks at different positions collide, so block 25 of
the course's system prompt maps to block 0's KV."""

MODULE = "prefix_cache"
REJECTED_BY = {"block_hashes": ["correctness"], "PrefixCache": ["correctness"]}


def block_hashes(tokens, block_size):
    size = check_int("block_size", block_size, 1)
    toks = check_tokens(tokens)
    return [hashlib.sha256(ROOT_HASH + struct.pack(f"<{size}I", *toks[i:i + size])).hexdigest()
            for i in range(0, len(toks) - size + 1, size)]
