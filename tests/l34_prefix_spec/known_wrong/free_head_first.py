"""free() returns a request's blocks head first: the prompt's first block is evicted first and its whole cached
prefix is lost with it, while the tail (useless without the head) survives."""

MODULE = "prefix_cache"
REJECTED_BY = {"PrefixCache": ["correctness"]}

_Cache = PrefixCache


class PrefixCache(_Cache):
    def free(self, req_id):
        if req_id not in self.tables:
            raise ValueError(f"req_id {req_id!r} holds no blocks")
        for b in self.tables.pop(req_id):
            self.refs[b] -= 1
            if self.refs[b] == 0:
                self.free_queue[b] = None
