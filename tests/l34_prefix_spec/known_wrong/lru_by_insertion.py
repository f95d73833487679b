"""LRU by insertion, not by last use: the free queue stays in block-id order (the order blocks first entered it),
so a block just used again by a hit is evicted before one idle for longer."""

MODULE = "prefix_cache"
REJECTED_BY = {"PrefixCache": ["correctness"]}

_Cache = PrefixCache


class PrefixCache(_Cache):
    def free(self, req_id):
        super().free(req_id)
        self.free_queue = OrderedDict.fromkeys(sorted(self.free_queue))
