"""Another correct design: vLLM's free queue as a doubly linked list with O(1) removal from the middle (a dict of
prev/next links and sentinels), hashes built with hashlib's update() per token and the cache kept in its own maps."""

MODULE = "prefix_cache"
ACCEPTED = ["block_hashes", "PrefixCache"]


def block_hashes(tokens, block_size):
    size = check_int("block_size", block_size, 1)
    toks = check_tokens(tokens)
    out, parent = [], bytes(32)
    for i in range(len(toks) // size):
        m = hashlib.sha256()
        m.update(parent)
        for t in toks[i * size:(i + 1) * size]:
            m.update(t.to_bytes(4, "little"))
        parent = m.digest()
        out.append(m.hexdigest())
    return out


class PrefixCache:
    HEAD, TAIL = -1, -2

    def __init__(self, num_blocks, block_size):
        self.n = check_int("num_blocks", num_blocks, 1)
        self.b = check_int("block_size", block_size, 1)
        order = [self.HEAD, *range(self.n), self.TAIL]
        self.nxt = {a: c for a, c in zip(order, order[1:], strict=False)}
        self.prv = {c: a for a, c in zip(order, order[1:], strict=False)}
        self.count = self.n
        self.refs = {}
        self.key = {}
        self.where = {}
        self.tables = {}
        self.query_tokens = self.hit_tokens = self.evictions = 0

    def _unlink(self, blk):
        a, c = self.prv.pop(blk), self.nxt.pop(blk)
        self.nxt[a], self.prv[c] = c, a
        self.count -= 1

    def _push_back(self, blk):
        last = self.prv[self.TAIL]
        self.nxt[last], self.prv[blk], self.nxt[blk], self.prv[self.TAIL] = blk, last, self.TAIL, blk
        self.count += 1

    def num_free_blocks(self):
        return self.count

    def ref_count(self, block):
        b = check_int("block", block)
        if b >= self.n:
            raise ValueError(f"block must be below {self.n}")
        return self.refs.get(b, 0)

    def block_table(self, req_id):
        if req_id not in self.tables:
            raise ValueError(f"req_id {req_id!r} is not allocated")
        return list(self.tables[req_id])

    def cached_blocks(self):
        return dict(self.where)

    def hit_rate(self):
        return self.hit_tokens / self.query_tokens if self.query_tokens else 0.0

    def allocate(self, req_id, tokens):
        check_int("req_id", req_id)
        if req_id in self.tables:
            raise ValueError(f"req_id {req_id} is already allocated")
        toks = check_tokens(tokens, empty_ok=False)
        hashes = block_hashes(toks, self.b)
        hits = []
        while len(hits) < (len(toks) - 1) // self.b and hashes[len(hits)] in self.where:
            hits.append(self.where[hashes[len(hits)]])
        fresh = -(-len(toks) // self.b) - len(hits)
        if self.count - sum(1 for h in hits if not self.refs.get(h)) < fresh:
            raise NoFreeBlocks("out of blocks")
        for h in hits:
            if not self.refs.get(h):
                self._unlink(h)
            self.refs[h] = self.refs.get(h, 0) + 1
        table = list(hits)
        while len(table) < len(hits) + fresh:
            blk = self.nxt[self.HEAD]
            self._unlink(blk)
            if blk in self.key:
                del self.where[self.key.pop(blk)]
                self.evictions += 1
            self.refs[blk] = 1
            table.append(blk)
        for i, h in enumerate(hashes):
            if i >= len(hits) and h not in self.where:
                self.where[h], self.key[table[i]] = table[i], h
        self.tables[req_id] = table
        self.query_tokens += len(toks)
        self.hit_tokens += self.b * len(hits)
        return self.b * len(hits)

    def free(self, req_id):
        if req_id not in self.tables:
            raise ValueError(f"req_id {req_id!r} is not allocated")
        table = self.tables.pop(req_id)
        for blk in table[::-1]:
            self.refs[blk] -= 1
            if self.refs[blk] == 0:
                self._push_back(blk)
