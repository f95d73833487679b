"""Bug: free blocks handed out largest id first: the tables are no longer the deterministic ones specified."""

MODULE = "paged"
REJECTED_BY = {"BlockManager": ["correctness"]}


def _take_last(self):
    block = max(self._free)
    self._free.remove(block)
    heapq.heapify(self._free)
    self._ref[block] = 1
    return block


BlockManager._take = _take_last
