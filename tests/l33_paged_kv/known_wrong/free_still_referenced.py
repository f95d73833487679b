"""Classic bug: free() returns every block of the sequence to the pool, even blocks a fork still references."""

MODULE = "paged"
REJECTED_BY = {"BlockManager": ["correctness"]}


def _free_all(self, seq_id):
    table = self._table(seq_id)
    for block in table:
        self._ref[block] = max(self._ref[block] - 1, 0)
        if block not in self._free:
            heapq.heappush(self._free, block)
    del self._tables[seq_id], self._tokens[seq_id]


BlockManager.free = _free_all
