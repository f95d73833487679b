"""The grader's paged decode engine for C5 (trusted code): C2's TinyDecoder, a paged KV cache, your decode kernel.

``load_c2_model()`` loads ``tests/c2_paged_engine/c2_model.py`` (the TinyDecoder, ``naive_generate`` and the ten
fixture requests) by path. ``DecodeEngine`` runs continuous batching over a paged cache in C2's layout
([num_blocks, B, H, d] per layer for K and for V): each step admits waiting requests while sequence slots and
blocks last (a request reserves its blocks for life, taken from a shuffled pool so block tables are scattered),
and runs ONE forward over every running request's tokens: the whole prompt of a newly admitted request, one
token of each decoding request. The new K/V are written at their slots first; prompt rows then attend with the
grader's dense causal attention over the gathered cache, and every decode row attends through the kernel under
test, called once per layer per step for all decoding sequences together (block table int32 padded with an
id past the pool, context lengths int32). Slots no sequence has written hold NaN.
"""

from __future__ import annotations

import importlib.util
import math
import random
import sys
from collections import deque
from collections.abc import Callable
from pathlib import Path

import torch


def load_c2_model():
    """C2's trusted model and fixtures (tests/c2_paged_engine/c2_model.py), loaded by path."""
    if "c2_model" not in sys.modules:
        path = Path(__file__).resolve().parent.parent / "c2_paged_engine" / "c2_model.py"
        spec = importlib.util.spec_from_file_location("c2_model", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["c2_model"] = module
        spec.loader.exec_module(module)
    return sys.modules["c2_model"]


class DecodeEngine:
    def __init__(self, model, num_blocks: int, block_size: int, max_num_seqs: int, decode: Callable,
                 expected: dict[int, list[int]] | None = None, seed: int = 0) -> None:
        self.model, self.b, self.max_num_seqs, self.decode = model, block_size, max_num_seqs, decode
        self.expected = expected  # stop at the first token that differs (naive_generate's tokens)
        shape = (num_blocks, block_size, model.n_heads, model.head_dim)
        self.k = [torch.full(shape, math.nan, dtype=model.dtype) for _ in range(model.n_layers)]
        self.v = [torch.full(shape, math.nan, dtype=model.dtype) for _ in range(model.n_layers)]
        self.free = list(range(num_blocks))
        random.Random(seed).shuffle(self.free)
        self.num_blocks = num_blocks
        self.waiting: deque[int] = deque()
        self.running: list[int] = []
        self.tokens: dict[int, list[int]] = {}
        self.prompt_len: dict[int, int] = {}
        self.max_new: dict[int, int] = {}
        self.table: dict[int, list[int]] = {}
        self.done: dict[int, list[int]] = {}
        self.decode_calls = 0

    def add(self, rid: int, prompt: list[int], max_new: int) -> None:
        self.tokens[rid], self.prompt_len[rid], self.max_new[rid] = list(prompt), len(prompt), max_new
        self.waiting.append(rid)

    def _blocks(self, rid: int) -> int:
        return -(-(self.prompt_len[rid] + self.max_new[rid] - 1) // self.b)

    def step(self) -> None:
        chunks = [(rid, len(self.tokens[rid]) - 1, 1) for rid in self.running]  # (rid, first position, n)
        while (self.waiting and len(self.running) < self.max_num_seqs
               and self._blocks(self.waiting[0]) <= len(self.free)):
            rid = self.waiting.popleft()
            self.table[rid] = [self.free.pop() for _ in range(self._blocks(rid))]
            self.running.append(rid)
            chunks.append((rid, 0, self.prompt_len[rid]))
        if not chunks:
            raise RuntimeError("DecodeEngine: nothing to run")
        tokens, positions, slots = [], [], []
        for rid, start, n in chunks:
            for p in range(start, start + n):
                tokens.append(self.tokens[rid][p])
                positions.append(p)
                slots.append(self.table[rid][p // self.b] * self.b + p % self.b)
        slot_t = torch.tensor(slots)
        dec = [(row, rid, start) for row, (rid, start, n) in enumerate(chunks) if n == 1 and start > 0]
        # rows: decode chunks come first (one row each), then the prompts
        width = max(len(self.table[rid]) for _, rid, _ in dec) if dec else 0
        table = torch.full((len(dec), width + 1), self.num_blocks + 7, dtype=torch.int32)
        for i, (_, rid, _) in enumerate(dec):
            table[i, :len(self.table[rid])] = torch.tensor(self.table[rid], dtype=torch.int32)
        lens = torch.tensor([start + 1 for _, _, start in dec], dtype=torch.int32)

        def attend(layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
            kc, vc = self.k[layer], self.v[layer]
            kc.view(-1, *kc.shape[2:])[slot_t] = k
            vc.view(-1, *vc.shape[2:])[slot_t] = v
            out = torch.empty_like(q)
            if dec:
                rows = torch.tensor([row for row, _, _ in dec])
                o = self.decode(q[rows].contiguous(), kc, vc, table, lens)
                self.decode_calls += 1
                out[rows] = o.to(q.dtype)
            row = len(dec)
            for rid, _, n in chunks[len(dec):]:
                pos = torch.arange(n)
                s = torch.tensor(self.table[rid])[pos // self.b] * self.b + pos % self.b
                keys, values = kc.view(-1, *kc.shape[2:])[s], vc.view(-1, *vc.shape[2:])[s]
                out[row:row + n] = self.model_dense(q[row:row + n], keys, values)
                row += n
            return out

        logits = self.model.forward(torch.tensor(tokens), torch.tensor(positions), attend)
        row = 0
        for rid, _, n in chunks:
            row += n
            self.tokens[rid].append(int(torch.argmax(logits[row - 1])))
            got = self.tokens[rid][self.prompt_len[rid]:]
            if self.expected is not None and got != self.expected[rid][:len(got)]:
                want = self.expected[rid][len(got) - 1]
                raise AssertionError(
                    f"request {rid}: generated token {len(got) - 1} is {got[-1]}, naive_generate's is {want} "
                    f"(tokens so far {got}; context {len(self.tokens[rid]) - 1} tokens in blocks {self.table[rid]} "
                    f"of {self.b}; decode attention ran {self.decode_calls} times)")
            if len(self.tokens[rid]) - self.prompt_len[rid] == self.max_new[rid]:
                self.running.remove(rid)
                self.free += self.table.pop(rid)
                self.done[rid] = self.tokens[rid][self.prompt_len[rid]:]

    def run(self) -> dict[int, list[int]]:
        while self.waiting or self.running:
            self.step()
        return self.done

    @staticmethod
    def model_dense(q, k, v):
        return load_c2_model().dense_causal(q, k, v)
