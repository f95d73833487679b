"""Correct alternatives: a sorted free list instead of a heap; lab 7.2's continuous count from slot free times."""

MODULE = "paged"
ACCEPTED = ["BlockManager", "static_vs_continuous_steps"]

import bisect


class BlockManager(BlockManager):
    def _take(self):
        self._free.sort()
        block = self._free.pop(0)
        self._ref[block] = 1
        return block

    def free(self, seq_id):
        table = self._table(seq_id)
        for block in table:
            self._ref[block] -= 1
            if self._ref[block] == 0:
                bisect.insort(self._free, block)
        del self._tables[seq_id], self._tokens[seq_id]


_correct_steps = static_vs_continuous_steps


def static_vs_continuous_steps(lengths, batch_size):
    out = _correct_steps(lengths, batch_size)
    free_at = [0] * batch_size
    for n in lengths:
        k = free_at.index(min(free_at))
        free_at[k] += n
    out["continuous_steps"] = max(free_at)
    return out
