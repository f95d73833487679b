"""The capacity check counts the free queue's cached hit blocks as free blocks for the new ones: a request that
needs exactly one block more than is left crashes half-way (popping an empty queue) instead of raising
NoFreeBlocks with nothing changed."""

MODULE = "prefix_cache"
REJECTED_BY = {"PrefixCache": ["correctness"]}

_Cache = PrefixCache


class PrefixCache(_Cache):
    def allocate(self, req_id, tokens):
        check_int("req_id", req_id)
        if req_id in self.tables:
            raise ValueError(f"req_id {req_id} is already allocated")
        toks = check_tokens(tokens, empty_ok=False)
        size = self.block_size
        hashes = block_hashes(toks, size)
        hits: list[int] = []
        for h in hashes[: (len(toks) - 1) // size]:
            if h not in self.block_of:
                break
            hits.append(self.block_of[h])
        need = -(-len(toks) // size) - len(hits)
        revived = sum(1 for b in hits if self.refs[b] == 0)
        if len(self.free_queue) < need:
            raise NoFreeBlocks(f"request {req_id} needs {need} new blocks, {len(self.free_queue) - revived} are free")
        for b in hits:
            if self.refs[b] == 0:
                del self.free_queue[b]
            self.refs[b] += 1
        table = list(hits)
        for _ in range(need):
            b, _ = self.free_queue.popitem(last=False)
            old = self.hash_of.pop(b, None)
            if old is not None:
                del self.block_of[old]
                self.evictions += 1
            self.refs[b] = 1
            table.append(b)
        for i in range(len(hits), len(hashes)):
            if hashes[i] not in self.block_of:
                self.block_of[hashes[i]] = table[i]
                self.hash_of[table[i]] = hashes[i]
        self.tables[req_id] = table
        self.query_tokens += len(toks)
        self.hit_tokens += len(hits) * size
        return len(hits) * size
