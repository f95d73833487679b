"""Bug: allocate takes blocks one by one and raises NoFreeBlocks half-way, leaking the blocks it already took."""

MODULE = "paged"
REJECTED_BY = {"BlockManager": ["correctness"]}


def _allocate_greedy(self, seq_id, n_tokens):
    if seq_id in self._tables:
        raise ValueError(f"seq_id {seq_id} is already allocated")
    table = []
    for _ in range(blocks_needed(n_tokens, self.block_size)):
        self._require_free(1, "allocate")
        table.append(self._take())
    self._tables[seq_id], self._tokens[seq_id] = table, n_tokens
    return list(table)


BlockManager.allocate = _allocate_greedy
