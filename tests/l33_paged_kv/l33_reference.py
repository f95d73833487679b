"""Trusted models of L33 the tests compare with: a block pool and the continuous-batching scheduler.

Written independently of the learner's module (event by event, with explicit request records), so
that C2's tests can also replay the scheduler on the engine's requests. Plain Python, no learner code.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def ceil_div(a: int, b: int) -> int:
    return (a + b - 1) // b


class RefPool:
    """The block manager's contract: smallest free id first, reference counts, copy-on-write."""

    def __init__(self, num_blocks: int, block_size: int) -> None:
        self.n, self.b = num_blocks, block_size
        self.ref = [0] * num_blocks
        self.tables: dict[int, list[int]] = {}
        self.tokens: dict[int, int] = {}

    def free_ids(self) -> list[int]:
        return [i for i in range(self.n) if self.ref[i] == 0]

    def _take(self, k: int) -> list[int] | None:
        ids = self.free_ids()
        if k > len(ids):
            return None
        for i in ids[:k]:
            self.ref[i] = 1
        return ids[:k]

    def allocate(self, seq: int, n: int) -> tuple[str, object]:
        if seq in self.tables:
            return ("ValueError", "seq_id")
        got = self._take(ceil_div(n, self.b))
        if got is None:
            return ("NoFreeBlocks", None)
        self.tables[seq], self.tokens[seq] = got, n
        return ("ok", list(got))

    def append(self, seq: int) -> tuple[str, object]:
        if seq not in self.tables:
            return ("ValueError", "seq_id")
        t, n = self.tables[seq], self.tokens[seq]
        cow = None
        if n % self.b == 0 or self.ref[t[-1]] > 1:
            got = self._take(1)
            if got is None:
                return ("NoFreeBlocks", None)
            if n % self.b == 0:
                t.append(got[0])
            else:
                cow = (t[-1], got[0])
                self.ref[t[-1]] -= 1
                t[-1] = got[0]
        self.tokens[seq] = n + 1
        return ("ok", (t[n // self.b] * self.b + n % self.b, cow))

    def fork(self, parent: int, child: int) -> tuple[str, object]:
        if parent not in self.tables:
            return ("ValueError", "parent_id")
        if child in self.tables:
            return ("ValueError", "child_id")
        for i in self.tables[parent]:
            self.ref[i] += 1
        self.tables[child], self.tokens[child] = list(self.tables[parent]), self.tokens[parent]
        return ("ok", list(self.tables[parent]))

    def free(self, seq: int) -> tuple[str, object]:
        if seq not in self.tables:
            return ("ValueError", "seq_id")
        for i in self.tables.pop(seq):
            self.ref[i] -= 1
        del self.tokens[seq]
        return ("ok", None)

    def apply(self, op: tuple) -> tuple[str, object]:
        return getattr(self, op[0])(*op[1:])


@dataclass
class _Req:
    rid: int
    arrival: int
    max_new: int
    known: int  # prompt + sampled tokens
    computed: int = 0
    sampled: int = 0
    blocks: int = 0
    log: list = field(default_factory=list)


def replay_schedule(requests, token_budget, max_num_seqs, num_blocks, block_size, max_steps=100_000) -> list[dict]:
    """The scheduler's contract, step by step (see paged.schedule_continuous's docstring)."""
    reqs = [_Req(i, a, m, p) for i, (a, p, m) in enumerate(requests)]
    free, waiting, running, out, left = num_blocks, [], [], [], len(reqs)
    step = 0
    while left and step < max_steps:
        waiting += [r for r in reqs if r.arrival == step]
        sched, pre, fin, budget = {}, [], [], token_budget
        k = 0
        while k < len(running) and budget > 0:
            r = running[k]
            n = min(r.known - r.computed, budget)
            need = ceil_div(r.computed + n, block_size) - r.blocks
            stop = False
            while need > free:
                victim = running.pop()
                free += victim.blocks
                victim.blocks = victim.computed = 0
                waiting.insert(0, victim)
                pre.append(victim.rid)
                if victim is r:
                    stop = True
                    break
            if stop:
                break
            r.blocks += need
            free -= need
            sched[r.rid] = n
            budget -= n
            k += 1
        while not pre and waiting and budget > 0 and len(running) < max_num_seqs:
            r = waiting[0]
            n = min(r.known - r.computed, budget)
            need = ceil_div(n, block_size)
            if need > free:
                break
            waiting.pop(0)
            running.append(r)
            r.blocks, free = need, free - need
            sched[r.rid] = n
            budget -= n
        for rid, n in sched.items():
            r = reqs[rid]
            r.computed += n
            if r.computed == r.known:
                r.known += 1
                r.sampled += 1
                if r.sampled == r.max_new:
                    running.remove(r)
                    free += r.blocks
                    r.blocks = 0
                    fin.append(rid)
                    left -= 1
        out.append({"scheduled": sched, "preempted": pre, "finished": fin})
        step += 1
    if left:
        raise RuntimeError("reference scheduler: requests left after max_steps")
    return out


def continuous_steps(lengths: list[int], batch: int) -> int:
    """Course lab 7.2's continuous model as events: each slot is free again the step after its request ends."""
    slots = [0] * batch  # the step at which each slot is free
    end = 0
    for n in lengths:
        k = min(range(batch), key=lambda i: (slots[i], i))
        slots[k] += n
        end = max(end, slots[k])
    return end
