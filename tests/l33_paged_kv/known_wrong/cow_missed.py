"""Classic bug: append_slot writes into a shared last block (no copy-on-write): the fork's sibling sees the token."""

MODULE = "paged"
REJECTED_BY = {"BlockManager": ["correctness"]}


def _append_no_cow(self, seq_id):
    table, n = self._table(seq_id), self._tokens[seq_id]
    if n % self.block_size == 0:
        self._require_free(1, "append_slot")
        table.append(self._take())
    self._tokens[seq_id] = n + 1
    return self.slot(seq_id, n), None


BlockManager.append_slot = _append_no_cow
