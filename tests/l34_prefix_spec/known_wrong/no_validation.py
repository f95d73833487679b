"""Classic bug: no argument checks: bad distributions, draws outside [0, 1), an impossible draft token, a cap of
zero blocks come back as answers."""

MODULE = "prefix_cache"
REJECTED_BY = {"block_hashes": ["correctness"], "PrefixCache": ["correctness"]}


def block_hashes(tokens, block_size):
    toks = [int(t) % 2**32 for t in tokens]
    size = max(1, int(block_size))
    out, parent = [], ROOT_HASH
    for start in range(0, len(toks) - size + 1, size):
        parent = hashlib.sha256(parent + struct.pack(f"<{size}I", *toks[start:start + size])).digest()
        out.append(parent.hex())
    return out


_Cache = PrefixCache


class PrefixCache(_Cache):
    def __init__(self, num_blocks, block_size):
        super().__init__(max(1, int(num_blocks)), max(1, int(block_size)))

    def allocate(self, req_id, tokens):
        if req_id in self.tables:
            self.free(req_id)
        return super().allocate(req_id, tokens) if len(tokens) else 0

    def free(self, req_id):
        if req_id in self.tables:
            super().free(req_id)
