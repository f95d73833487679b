"""C2 · A tiny real serving engine: a paged KV cache and continuous batching on the CPU.

Capstone 2 (09_Capstone综合实战项目/02_Capstone_生产级LLM_Serving吞吐与延迟优化实战.md) and lecture 33.

The engine drives a small decoder (the grader's ``TinyDecoder``: see the README) whose
``forward(tokens, positions, attend)`` runs a flat batch of tokens from many sequences and hands each
layer's attention to ``attend(layer, q, k, v) -> o`` ([T, H, d] each). The engine answers that call
from a paged KV cache: per layer, K and V caches of shape [num_blocks, B, H, d]; token i of a sequence
lives at slot table[i // B]·B + i % B of the flattened cache. Each step it writes the new tokens' K and
V at their slots, then each sequence's queries attend over that sequence's first context_len tokens,
gathered through its block table.

Paging and batching change where KV lives and which sequences share a forward pass, never the
result: greedy tokens equal one-request-at-a-time generation exactly, and each token's KV is computed
once unless its request was preempted.

Scheduling is L33's ``schedule_continuous``, step for step: running requests first in admission
order (n = min(known − computed, budget left)), blocks grown smallest id first, the newest running
request preempted by recompute when the pool is short, admission only in a step that preempted
nobody; a request samples (argmax) when its computed tokens reach its known tokens.
"""

from __future__ import annotations

import heapq
import math
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

import torch

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

# ---------------------------------------------------------------------------------------------
# 1. The two kernels: write K/V at their slots, attend through a block table
# ---------------------------------------------------------------------------------------------


def write_kv(k_cache: torch.Tensor, v_cache: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
             slots: torch.Tensor) -> None:
    """Store row t of ``k`` and ``v`` ([T, H, d]) at physical slot ``slots[t]`` of the caches, in place.

    Caches are [num_blocks, B, H, d]; slot s is block s // B, offset s % B (= block·B + offset).
    """
    # TODO: view each cache as [num_blocks·B, H, d] (no copy) and assign the rows at their slots.
    raise NotImplementedError('TODO: view each cache as [num_blocks·B, H, d] (no copy) and assign the rows at their slots.')


def paged_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_table: Sequence[int],
                    context_len: int, q_start: int) -> torch.Tensor:
    """Causal attention of one sequence's T queries ([T, H, d]) at positions q_start … q_start + T − 1.

    Keys and values are the sequence's first ``context_len`` cached tokens, gathered through
    ``block_table``; query p sees keys 0 … p; scale 1/√d; slots past context_len are never read.
    Returns [T, H, d]. ``context_len`` ≠ q_start + T → ValueError naming ``context_len``.
    """
    # TODO: gather the slots of tokens 0 … context_len − 1, then masked softmax(q·kᵀ/√d)·v per head.
    raise NotImplementedError('TODO: gather the slots of tokens 0 … context_len − 1, then masked softmax(q·kᵀ/√d)·v per head.')


# ---------------------------------------------------------------------------------------------
# 2. The engine
# ---------------------------------------------------------------------------------------------


class _Request:
    """Given: one request's state (tokens = prompt + sampled, computed tokens, block table)."""

    def __init__(self, req_id: int, prompt: list[int], max_new_tokens: int) -> None:
        self.req_id, self.prompt_len, self.max_new = req_id, len(prompt), max_new_tokens
        self.tokens = list(prompt)
        self.computed = 0
        self.table: list[int] = []

    @property
    def generated(self) -> list[int]:
        return self.tokens[self.prompt_len:]


class PagedEngine:
    """Continuous batching over a paged KV cache: ``add_request``, then ``step()`` until done, or ``run()``.

    Counters: ``steps`` (forward passes), ``forward_tokens`` (tokens through the model), ``peak_blocks``
    (most blocks in use at once), ``log`` (per step {"scheduled": {id: n}, "preempted": [...],
    "finished": [...]}, exactly as L33's ``schedule_continuous`` would return it).
    """

    def __init__(self, model: Any, num_blocks: int, block_size: int, max_num_seqs: int, token_budget: int) -> None:
        self.model = model
        self.num_blocks = check_int("num_blocks", num_blocks, 1)
        self.block_size = check_int("block_size", block_size, 1)
        self.max_num_seqs = check_int("max_num_seqs", max_num_seqs, 1)
        self.token_budget = check_int("token_budget", token_budget, 1)
        shape = (self.num_blocks, self.block_size, model.n_heads, model.head_dim)
        self.k_caches = [torch.zeros(shape, dtype=model.dtype) for _ in range(model.n_layers)]
        self.v_caches = [torch.zeros(shape, dtype=model.dtype) for _ in range(model.n_layers)]
        self.steps, self.forward_tokens, self.peak_blocks = 0, 0, 0
        self.log: list[dict] = []
        # Given: the requests, the queue of new arrivals, the waiting queue, the running list, the free pool.
        self.requests: dict[int, _Request] = {}
        self.arrivals: list[int] = []
        self.waiting: deque[int] = deque()
        self.running: list[int] = []
        self.free: list[int] = list(range(self.num_blocks))  # a heap: smallest id first
        self.finished: dict[int, list[int]] = {}

    def add_request(self, req_id: int, prompt: Sequence[int], max_new_tokens: int) -> None:
        """Queue a request; it joins the waiting queue at the next step (FCFS).

        ValueError naming ``req_id`` (a duplicate), ``prompt`` (empty, a token outside the vocabulary,
        or a request that cannot fit the pool or the positions alone), ``max_new_tokens`` (< 1).
        """
        rid = check_int("req_id", req_id, 0)
        if rid in self.requests:
            raise ValueError(f"req_id {rid} was already added")
        new = check_int("max_new_tokens", max_new_tokens, 1)
        tokens = [check_int("prompt", t, 0) for t in prompt]
        if not tokens or max(tokens) >= self.model.vocab:
            raise ValueError(f"prompt must be a non-empty list of token ids below {self.model.vocab}, got {prompt!r}")
        need = -(-(len(tokens) + new - 1) // self.block_size)
        if need > self.num_blocks or len(tokens) + new - 1 > self.model.max_pos:
            raise ValueError(f"prompt of {len(tokens)} tokens + {new} new needs {need} blocks of {self.block_size} "
                             f"(the pool has {self.num_blocks}) and {len(tokens) + new - 1} positions "
                             f"(the model has {self.model.max_pos}): it cannot run alone")
        self.requests[rid] = _Request(rid, tokens, new)
        self.arrivals.append(rid)

    def step(self) -> dict[int, int]:
        """One scheduling step and ONE model.forward over the flat batch; returns {req_id: token} sampled now."""
        # TODO: arrivals join the queue; schedule (L33's rules); one forward whose attend writes then reads
        # the paged cache; sample where computed reaches the known tokens; finish and free; log the step.
        raise NotImplementedError("TODO: arrivals join the queue; schedule (L33's rules); one forward whose attend writes then reads the paged cache; sample where computed reaches the known tokens; finish and free; log the step.")

    def run(self) -> dict[int, list[int]]:
        """Step until every request has finished; returns {req_id: generated tokens}.

        RuntimeError if a step can schedule nothing while requests are still waiting.
        """
        # TODO: loop over step(); stop when everything has finished; refuse to spin on a step that does nothing.
        raise NotImplementedError('TODO: loop over step(); stop when everything has finished; refuse to spin on a step that does nothing.')

    # Given helpers of the engine.

    def used_blocks(self) -> int:
        return self.num_blocks - len(self.free)

    def _need(self, rid: int, n: int) -> int:
        r = self.requests[rid]
        return -(-(r.computed + n) // self.block_size) - len(r.table)

    def _release(self, rid: int) -> None:
        """Give the request's blocks back to the pool and take it off the running list."""
        r = self.requests[rid]
        for block in r.table:
            heapq.heappush(self.free, block)
        r.table = []
        self.running.remove(rid)

    def _schedule(self) -> tuple[dict[int, int], list[int]]:
        """L33's rules for one step: {req_id: n} in scheduling order, and the requests preempted."""
        # TODO: serve running requests, preempt the newest when the pool is short, then admit if nobody was preempted.
        raise NotImplementedError('TODO: serve running requests, preempt the newest when the pool is short, then admit if nobody was preempted.')

    def _grow(self, rid: int, n: int) -> None:
        """Append the smallest free blocks to the request's table so it holds computed + n tokens."""
        # TODO: take self._need(rid, n) blocks from the heap, smallest first.
        raise NotImplementedError('TODO: take self._need(rid, n) blocks from the heap, smallest first.')

    def _forward(self, scheduled: dict[int, int]) -> torch.Tensor:
        """ONE model.forward over the scheduled chunks, concatenated in scheduling order; returns the logits."""
        # TODO: tokens, positions and slots of every chunk; an attend that writes the new K/V at their slots
        # and then runs paged_attention per sequence over its own block table and context.
        raise NotImplementedError('TODO: tokens, positions and slots of every chunk; an attend that writes the new K/V at their slots and then runs paged_attention per sequence over its own block table and context.')


# ---------------------------------------------------------------------------------------------
# 3. Throughput against batch size (report only, never scored)
# ---------------------------------------------------------------------------------------------


def measure_throughput(model: Any, prompts: Sequence[Sequence[int]], max_new_tokens: int, batch_sizes: Sequence[int],
                       block_size: int = 16, token_budget: int = 512) -> dict[int, float]:
    """Generated tokens per second of one ``run()`` over all prompts, for each max_num_seqs in ``batch_sizes``.

    The pool holds every request at once, so only the batch size limits concurrency.
    """
    # TODO: for each batch size, a fresh engine with all the prompts, timed around run().
    raise NotImplementedError('TODO: for each batch size, a fresh engine with all the prompts, timed around run().')
