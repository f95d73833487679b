"""L33 · PagedAttention's block manager and a continuous-batching scheduler.

Lecture 33 (06_LLM推理系统与性能工程/33_KV_Cache管理演进_PagedAttention与ContinuousBatching.md).

A paged KV cache stores each sequence in fixed blocks of B token slots, found through a block table
(logical block i → physical block table[i]); token i lives at slot table[i // B]·B + i % B. A
sequence wastes at most the tail of its last block, and forks (parallel sampling, beam search)
share blocks, counted by reference, until one writes to a shared block: copy-on-write.

A continuous-batching scheduler re-forms the batch every step under a token budget: running
requests first (one token for a decode, the next chunk of an unfinished prompt), then waiting
requests while budget, sequence slots and blocks last. When blocks run out, the newest running
request is preempted by recompute: its blocks are freed and it goes back to the front of the queue,
to prefill its prompt and the tokens it already sampled again.

Conventions: counts are exact ints (``check_int``); block ids are handed out smallest first, so
every table is deterministic; invalid arguments raise ValueError naming the argument.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Sequence

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

# ---------------------------------------------------------------------------------------------
# 1. Blocks and utilisation
# ---------------------------------------------------------------------------------------------


def blocks_needed(n_tokens: int, block_size: int) -> int:
    """Blocks that hold ``n_tokens`` token slots: ceil(n / B). 37 tokens, B 16 → 3; 0 tokens → 0."""
    # TODO: validate both counts, then round n / B up with integers only.
    ### BEGIN SOLUTION
    n, b = check_int("n_tokens", n_tokens, 0), check_int("block_size", block_size, 1)
    return -(-n // b)
    ### END SOLUTION


def paged_utilization(lengths: Sequence[int], block_size: int, static_max_len: int) -> dict[str, float | int]:
    """KV slots used by sequences of ``lengths`` tokens, paged in blocks vs pre-allocated at ``static_max_len``.

    Returns ``{"tokens", "blocks", "paged_slots", "static_slots", "paged_utilization",
    "static_utilization", "internal_waste_slots"}``: utilisations are fractions (tokens / slots),
    the waste is the paged slots left empty in the sequences' last blocks. Each sequence gets its
    own blocks. Worked (C2 lab): [35, 12, 67, 89, 44, 25, 93, 18, 51, 76], B 16, static 128 → 510
    tokens, 37 blocks, 592 slots (0.861486) vs 1280 slots (0.398438), 82 slots wasted.
    A length above ``static_max_len`` → ValueError naming ``lengths``.
    """
    # TODO: blocks per sequence (never for the total), then the slots and both ratios.
    ### BEGIN SOLUTION
    if isinstance(lengths, str | bytes) or not isinstance(lengths, Sequence) or not lengths:
        raise ValueError(f"lengths must be a non-empty sequence of token counts, got {lengths!r}")
    b, cap = check_int("block_size", block_size, 1), check_int("static_max_len", static_max_len, 1)
    ns = [check_int("lengths", n, 0) for n in lengths]
    if max(ns) > cap:
        raise ValueError(f"lengths: a sequence of {max(ns)} tokens does not fit static_max_len {cap}")
    tokens = sum(ns)
    blocks = sum(blocks_needed(n, b) for n in ns)
    paged, static = blocks * b, len(ns) * cap
    return {
        "tokens": tokens,
        "blocks": blocks,
        "paged_slots": paged,
        "static_slots": static,
        "paged_utilization": tokens / paged if paged else 1.0,
        "static_utilization": tokens / static,
        "internal_waste_slots": paged - tokens,
    }
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 2. The block manager
# ---------------------------------------------------------------------------------------------


class NoFreeBlocks(RuntimeError):
    """An operation needed more free blocks than the pool has; nothing was changed."""


class BlockManager:
    """A pool of ``num_blocks`` physical blocks of ``block_size`` slots, shared by sequences' block tables.

    Worked (B 16): ``allocate(0, 37)`` → [0, 1, 2] and ``slot(0, 36)`` = 36; ``fork(0, 1)`` shares them
    (ref_count(2) = 2); ``append_slot(1)`` → (53, (2, 3)): token 37 of sequence 1 goes to a copy of
    block 2, its table becomes [0, 1, 3]; ``append_slot(0)`` → (37, None): block 2 is its own again.
    Any operation short of blocks raises :class:`NoFreeBlocks` and leaves everything unchanged.
    """

    def __init__(self, num_blocks: int, block_size: int) -> None:
        self.num_blocks = check_int("num_blocks", num_blocks, 1)
        self.block_size = check_int("block_size", block_size, 1)
        # Given: the free pool (a heap: smallest id first), a reference count per block, and per sequence
        # its block table and the number of tokens it holds slots for.
        self._free: list[int] = list(range(self.num_blocks))
        self._ref = [0] * self.num_blocks
        self._tables: dict[int, list[int]] = {}
        self._tokens: dict[int, int] = {}

    def allocate(self, seq_id: int, n_tokens: int) -> list[int]:
        """A new sequence's table: ceil(n_tokens / B) fresh blocks (n_tokens = 0 → []), each referenced once.

        ValueError naming ``seq_id`` if the sequence exists; NoFreeBlocks if the pool is short.
        """
        # TODO: refuse a known seq_id and a pool that is short, then take the smallest free blocks.
        ### BEGIN SOLUTION
        seq = check_int("seq_id", seq_id, 0)
        n = check_int("n_tokens", n_tokens, 0)
        if seq in self._tables:
            raise ValueError(f"seq_id {seq} is already allocated (free it first)")
        need = blocks_needed(n, self.block_size)
        self._require_free(need, f"allocate({seq}, {n})")
        self._tables[seq] = [self._take() for _ in range(need)]
        self._tokens[seq] = n
        return list(self._tables[seq])
        ### END SOLUTION

    def append_slot(self, seq_id: int) -> tuple[int, tuple[int, int] | None]:
        """Room for the sequence's next token n = num_tokens: returns (slot of token n, copy-on-write or None).

        A fresh block when n % B == 0; else, if the last block is shared (ref count > 1), a new block
        replaces it in this table (the caller copies old → new: the returned pair) and the old count drops.
        """
        # TODO: fresh block at a block boundary; copy-on-write when the last block is shared; then count the token.
        ### BEGIN SOLUTION
        table, n = self._table(seq_id), self._tokens[seq_id]
        cow = None
        if n % self.block_size == 0:
            self._require_free(1, f"append_slot({seq_id}) at token {n}")
            table.append(self._take())
        elif self._ref[table[-1]] > 1:
            self._require_free(1, f"append_slot({seq_id}) copy-on-write of block {table[-1]}")
            old, new = table[-1], self._take()
            self._ref[old] -= 1
            table[-1] = new
            cow = (old, new)
        self._tokens[seq_id] = n + 1
        return self.slot(seq_id, n), cow
        ### END SOLUTION

    def fork(self, parent_id: int, child_id: int) -> list[int]:
        """The child shares the parent's table (every block's count + 1) and token count; returns the table."""
        # TODO: refuse an unknown parent or an existing child, then share every block.
        ### BEGIN SOLUTION
        table = self._table(parent_id, "parent_id")
        child = check_int("child_id", child_id, 0)
        if child in self._tables:
            raise ValueError(f"child_id {child} already exists")
        for block in table:
            self._ref[block] += 1
        self._tables[child] = list(table)
        self._tokens[child] = self._tokens[parent_id]
        return list(table)
        ### END SOLUTION

    def free(self, seq_id: int) -> None:
        """Drop the sequence: each block's count − 1, blocks at 0 go back to the pool."""
        # TODO: release the references; only a block nobody references is free again.
        ### BEGIN SOLUTION
        table = self._table(seq_id)
        for block in table:
            self._ref[block] -= 1
            if self._ref[block] == 0:
                heapq.heappush(self._free, block)
        del self._tables[seq_id], self._tokens[seq_id]
        ### END SOLUTION

    def block_table(self, seq_id: int) -> list[int]:
        """A copy of the sequence's block table (logical block i → physical block)."""
        # TODO: a copy, so that the caller cannot change the manager's table.
        ### BEGIN SOLUTION
        return list(self._table(seq_id))
        ### END SOLUTION

    def num_tokens(self, seq_id: int) -> int:
        """Tokens the sequence holds slots for."""
        # TODO: the sequence's token count.
        ### BEGIN SOLUTION
        self._table(seq_id)
        return self._tokens[seq_id]
        ### END SOLUTION

    def slot(self, seq_id: int, token_index: int) -> int:
        """Physical slot of a token: table[i // B]·B + i % B. Token 37, B 16 → logical block 2, offset 5."""
        # TODO: the address translation; refuse a token the sequence does not hold.
        ### BEGIN SOLUTION
        table = self._table(seq_id)
        i = check_int("token_index", token_index, 0)
        if i >= self._tokens[seq_id]:
            raise ValueError(f"token_index {i} >= num_tokens {self._tokens[seq_id]} of seq_id {seq_id}")
        return table[i // self.block_size] * self.block_size + i % self.block_size
        ### END SOLUTION

    def num_free_blocks(self) -> int:
        """Blocks in the pool that no table references."""
        # TODO: the size of the free pool.
        ### BEGIN SOLUTION
        return len(self._free)
        ### END SOLUTION

    def ref_count(self, block: int) -> int:
        """How many tables contain ``block`` (0 for a free block)."""
        # TODO: the block's reference count; refuse an id outside the pool.
        ### BEGIN SOLUTION
        b = check_int("block", block, 0)
        if b >= self.num_blocks:
            raise ValueError(f"block {b} is outside the pool of {self.num_blocks} blocks")
        return self._ref[b]
        ### END SOLUTION

    # Given helpers: look a sequence up, check the pool before changing anything, take the smallest free block.

    def _table(self, seq_id: int, name: str = "seq_id") -> list[int]:
        if isinstance(seq_id, bool) or not isinstance(seq_id, int) or seq_id not in self._tables:
            raise ValueError(f"{name} {seq_id!r} is not allocated")
        return self._tables[seq_id]

    def _require_free(self, need: int, what: str) -> None:
        if need > len(self._free):
            raise NoFreeBlocks(f"{what} needs {need} free blocks, the pool has {len(self._free)}")

    def _take(self) -> int:
        block = heapq.heappop(self._free)
        self._ref[block] = 1
        return block


# ---------------------------------------------------------------------------------------------
# 3. Continuous batching with a token budget, chunked prefill and recompute preemption
# ---------------------------------------------------------------------------------------------

Step = dict[str, object]


def schedule_continuous(
    requests: Sequence[tuple[int, int, int]],
    token_budget: int,
    max_num_seqs: int,
    num_blocks: int,
    block_size: int,
    max_steps: int = 100_000,
) -> list[dict]:
    """Replay a continuous-batching scheduler step by step; one dict per step from step 0 to the last finish.

    ``requests[i] = (arrival_step, prompt_len, max_new_tokens)``; request i has id i. Each step:
    1. requests arriving at this step join the back of the waiting queue (id order);
    2. running requests, in admission order, get n = min(num_tokens − num_computed, budget left);
       their blocks grow to ceil((computed + n) / B); while the pool is short, the newest running
       request is preempted (blocks freed, computed = 0, pushed to the FRONT of the queue); if that is
       the request itself, it is preempted and this pass stops;
    3. only if nothing was preempted this step: waiting requests are admitted in order while budget
       is left, fewer than max_num_seqs run and their first chunk's blocks are free;
    4. each scheduled request computes its n tokens; one whose computed count reaches its known
       tokens samples one (num_tokens + 1); at max_new_tokens sampled it finishes and frees its blocks.
    Returns ``[{"scheduled": {id: n} in scheduling order, "preempted": [ids], "finished": [ids]}, ...]``.
    Worked: [(0, 100, 4), (1, 600, 2), (2, 30, 3)], budget 256 → {0: 100}, {0: 1, 1: 255},
    {0: 1, 1: 255}, {0: 1, 1: 90, 2: 30}, {1: 1, 2: 1}, {2: 1}.
    ValueError naming ``requests`` if one request alone needs more than ``num_blocks``
    (ceil((prompt + max_new − 1) / B)); RuntimeError past ``max_steps`` or when nothing can run any more.
    """
    # TODO: keep per request its known tokens, computed tokens, sampled tokens and blocks; then loop over steps.
    ### BEGIN SOLUTION
    budget0 = check_int("token_budget", token_budget, 1)
    seqs_cap = check_int("max_num_seqs", max_num_seqs, 1)
    pool = check_int("num_blocks", num_blocks, 1)
    b = check_int("block_size", block_size, 1)
    limit = check_int("max_steps", max_steps, 1)
    reqs = _check_requests(requests, pool, b)
    last_arrival = max((r[0] for r in reqs), default=0)
    known = [p for _, p, _ in reqs]  # prompt + sampled tokens
    computed, sampled, held = [0] * len(reqs), [0] * len(reqs), [0] * len(reqs)
    free = [pool]
    waiting: deque[int] = deque()
    running: list[int] = []
    done = 0
    log: list[dict] = []

    def grow(i: int, n: int) -> None:  # blocks for computed + n tokens
        extra = blocks_needed(computed[i] + n, b) - held[i]
        held[i] += extra
        free[0] -= extra

    def release(i: int) -> None:
        running.remove(i)
        free[0] += held[i]
        held[i] = 0

    for step in range(limit):
        if done == len(reqs):
            return log
        waiting.extend(i for i, r in enumerate(reqs) if r[0] == step)
        scheduled: dict[int, int] = {}
        preempted: list[int] = []
        budget = budget0
        for i in list(running):
            if budget == 0 or i not in running:
                break
            n = min(known[i] - computed[i], budget)
            while blocks_needed(computed[i] + n, b) - held[i] > free[0]:
                victim = running[-1]  # the newest running request: recompute later
                release(victim)
                computed[victim] = 0
                waiting.appendleft(victim)
                preempted.append(victim)
                if victim == i:
                    break
            if i in preempted:
                break
            grow(i, n)
            scheduled[i] = n
            budget -= n
        while not preempted and waiting and budget > 0 and len(running) < seqs_cap:
            i = waiting[0]
            n = min(known[i] - computed[i], budget)
            if blocks_needed(n, b) > free[0]:
                break
            waiting.popleft()
            running.append(i)
            grow(i, n)
            scheduled[i] = n
            budget -= n
        if not scheduled and waiting and step >= last_arrival:  # nothing runs, nothing will: stuck for good
            raise RuntimeError(f"schedule_continuous: step {step} can schedule none of the waiting {list(waiting)}")
        finished = []
        for i, n in scheduled.items():
            computed[i] += n
            if computed[i] == known[i]:
                sampled[i] += 1
                known[i] += 1
                if sampled[i] == reqs[i][2]:
                    release(i)
                    finished.append(i)
                    done += 1
        log.append({"scheduled": scheduled, "preempted": preempted, "finished": finished})
    if done == len(reqs):
        return log
    raise RuntimeError(f"schedule_continuous: {len(reqs) - done} requests unfinished after max_steps={limit}")
    ### END SOLUTION


def _check_requests(requests: Sequence[tuple[int, int, int]], pool: int, b: int) -> list[tuple[int, int, int]]:
    if isinstance(requests, str | bytes) or not isinstance(requests, Sequence):
        raise ValueError(f"requests must be a sequence of (arrival_step, prompt_len, max_new_tokens), got {requests!r}")
    out = []
    for i, r in enumerate(requests):
        if not isinstance(r, tuple | list) or len(r) != 3:
            raise ValueError(f"requests[{i}] must be (arrival_step, prompt_len, max_new_tokens), got {r!r}")
        arrival = check_int("requests", r[0], 0)
        prompt, new = check_int("requests", r[1], 1), check_int("requests", r[2], 1)
        if blocks_needed(prompt + new - 1, b) > pool:
            raise ValueError(
                f"requests[{i}] alone needs {blocks_needed(prompt + new - 1, b)} blocks of {b} "
                f"({prompt} + {new} − 1 tokens), the pool has num_blocks={pool}"
            )
        out.append((arrival, prompt, new))
    return out


# ---------------------------------------------------------------------------------------------
# 4. Static vs continuous batching (course lab 7.2's model)
# ---------------------------------------------------------------------------------------------


def static_vs_continuous_steps(lengths: Sequence[int], batch_size: int) -> dict[str, int]:
    """Steps to generate ``lengths`` tokens per request with ``batch_size`` slots, one token per slot per step.

    Static: consecutive groups of batch_size run until their longest finishes (Σ group maxima).
    Continuous: a slot whose request finishes at step t takes the next waiting request at step t + 1.
    Returns ``{"tokens", "static_steps", "continuous_steps"}``. Worked: 16 requests of
    ``random.seed(2026); randint(5, 40)``, batch 4 → 391 tokens, 140 vs 111 steps.
    """
    # TODO: the static sum of group maxima; then simulate the slots step by step.
    ### BEGIN SOLUTION
    if isinstance(lengths, str | bytes) or not isinstance(lengths, Sequence) or not lengths:
        raise ValueError(f"lengths must be a non-empty sequence of token counts, got {lengths!r}")
    ns = [check_int("lengths", n, 1) for n in lengths]
    k = check_int("batch_size", batch_size, 1)
    static = sum(max(ns[i : i + k]) for i in range(0, len(ns), k))
    active, queue, steps = list(ns[:k]), deque(ns[k:]), 0
    while active:
        steps += 1
        nxt = []
        for left in active:
            if left > 1:
                nxt.append(left - 1)
            elif queue:
                nxt.append(queue.popleft())  # starts at the next step
        active = nxt
    return {"tokens": sum(ns), "static_steps": static, "continuous_steps": steps}
    ### END SOLUTION
