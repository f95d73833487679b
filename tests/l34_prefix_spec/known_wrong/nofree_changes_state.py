"""NoFreeBlocks raised half-way: the hits are already taken and some blocks popped (and their hashes evicted)
when the queue runs dry, so a refused request leaks blocks and evicts cached ones."""

MODULE = "prefix_cache"
REJECTED_BY = {"PrefixCache": ["correctness"]}

_Cache = PrefixCache


class PrefixCache(_Cache):
    def allocate(self, req_id, tokens):
        toks = list(tokens)
        need = -(-len(toks) // self.block_size)
        if len(self.free_queue) < need:
            for _ in range(len(self.free_queue)):  # take what there is, then give up
                b, _ = self.free_queue.popitem(last=False)
                if b in self.hash_of:
                    del self.block_of[self.hash_of.pop(b)]
                    self.evictions += 1
            raise NoFreeBlocks(f"request {req_id} does not fit")
        return super().allocate(req_id, tokens)
