"""Classic bug: a fresh block when (n + 1) % B == 0 instead of n % B == 0: the block boundary one token early."""

MODULE = "paged"
REJECTED_BY = {"BlockManager": ["correctness"]}


def _append_early(self, seq_id):
    table, n = self._table(seq_id), self._tokens[seq_id]
    cow = None
    if (n + 1) % self.block_size == 0 or not table:
        self._require_free(1, "append_slot")
        table.append(self._take())
    elif self._ref[table[-1]] > 1:
        self._require_free(1, "append_slot")
        old, new = table[-1], self._take()
        self._ref[old] -= 1
        table[-1] = new
        cow = (old, new)
    self._tokens[seq_id] = n + 1
    b = self.block_size
    return table[min(n // b, len(table) - 1)] * b + n % b, cow


BlockManager.append_slot = _append_early
