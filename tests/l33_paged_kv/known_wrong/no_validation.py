"""Classic bug: no argument checks: negative counts, an oversize request or a zero budget come back as numbers."""

MODULE = "paged"
REJECTED_BY = {
    "blocks_needed": ["correctness"],
    "paged_utilization": ["correctness"],
    "BlockManager": ["correctness"],
    "schedule_continuous": ["correctness"],
    "static_vs_continuous_steps": ["correctness"],
}

_correct = (blocks_needed, paged_utilization, schedule_continuous, static_vs_continuous_steps)


def _quiet(fn, fallback):
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ValueError:
            return fallback
    return run


blocks_needed = _quiet(_correct[0], 0)
paged_utilization = _quiet(_correct[1], {})
schedule_continuous = _quiet(_correct[2], [])
static_vs_continuous_steps = _quiet(_correct[3], {})


class BlockManager(BlockManager):
    def __init__(self, num_blocks, block_size):
        super().__init__(max(num_blocks, 1), block_size)

    def slot(self, seq_id, token_index):
        t = self._tables.get(seq_id, [0])
        return t[min(token_index // self.block_size, len(t) - 1)] * self.block_size + token_index % self.block_size

    def fork(self, parent_id, child_id):
        if child_id in self._tables:
            self.free(child_id)
        return super().fork(parent_id, child_id)
