"""Classic bug: a hit on a free cached block bumps its count but leaves it in the free queue, so a later request
pops (and overwrites) a block a running request still reads."""

MODULE = "prefix_cache"
REJECTED_BY = {"PrefixCache": ["correctness"]}

_Cache = PrefixCache


class PrefixCache(_Cache):
    def allocate(self, req_id, tokens):
        before = OrderedDict(self.free_queue)
        hit = super().allocate(req_id, tokens)
        table = self.tables[req_id]
        for b in table[: hit // self.block_size]:
            if b in before and b not in self.free_queue:
                self.free_queue[b] = None
                self.free_queue.move_to_end(b, last=False)
        return hit

    def free(self, req_id):
        for b in reversed(self.tables.pop(req_id)):
            self.refs[b] = max(0, self.refs[b] - 1)
            if self.refs[b] == 0:
                self.free_queue[b] = None
