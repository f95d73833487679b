"""Chained, but through the parent's hex text instead of its 32 raw bytes: every hash after the first differs
from the contract's (another cache could not share them)."""

MODULE = "prefix_cache"
REJECTED_BY = {"block_hashes": ["correctness"], "PrefixCache": ["correctness"]}


def block_hashes(tokens, block_size):
    size = check_int("block_size", block_size, 1)
    toks = check_tokens(tokens)
    out, parent = [], ROOT_HASH
    for start in range(0, len(toks) - size + 1, size):
        h = hashlib.sha256(parent + struct.pack(f"<{size}I", *toks[start:start + size])).hexdigest()
        out.append(h)
        parent = h.encode()
    return out
