"""C5 · Token generation end to end: the decode floor, FlashDecoding's split count, and the generation loop.

Capstone 5 (09_Capstone综合实战项目/05_Capstone_FlashAttention全景与Token生成端到端全链路优化实战.md).

Decode at batch 1 reads every weight and the whole KV cache once per token and does about two FLOPs
per weight: arithmetic intensity near 1 FLOP/B, so its floor is (weight + KV bytes) / HBM bandwidth and
its MFU is below 1 %. FlashDecoding splits the KV sequence so that kv heads × batch × splits fills the
SMs even at batch 1. The generation loop has four knobs: the token budget per step (how prefill chunks
and decodes share a forward pass), chunked prefill, admission limits (max_num_seqs and a block pool),
and speculative decoding (γ draft tokens verified in one target pass).

Conventions: counts and bytes are exact ints (``check_int``); rates, times and ratios are floats;
invalid arguments raise ValueError naming the argument. The Triton decode kernel is in
``flash_decode.py``.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int


def _check_real(name: str, value: object, *, positive: bool) -> float:
    """A finite real number (> 0 when ``positive``, else >= 0), or ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'}, got {value!r}")
    return float(value)


# ---------------------------------------------------------------------------------------------
# 1. Ledgers
# ---------------------------------------------------------------------------------------------


def decode_floor_ledger(weight_bytes: int, kv_bytes: int, hbm_bytes_per_s: float, peak_flops: float,
                        flops_per_token: int, batch: int = 1) -> dict[str, float | int]:
    """The memory floor of one decode step: every weight and the whole batch's KV read once.

    bytes = weight_bytes + kv_bytes (int, B), flops = batch · flops_per_token (int),
    t_min_s = bytes / hbm_bytes_per_s, arith_intensity = flops / bytes (FLOP/B),
    mfu = flops / t_min_s / peak_flops, tokens_per_s_max = batch / t_min_s.

    Worked (70B in bf16 on an A100 at the course's 2.0 TB/s): decode_floor_ledger(140_000_000_000, 0,
    2.0e12, 312e12, 140_000_000_000) → t_min_s 0.07, arith_intensity 1.0, mfu 0.0064103, 14.29 tok/s.
    Errors (ValueError naming the argument): a float or bool count, weight_bytes + kv_bytes = 0,
    a rate that is not a finite real > 0, flops_per_token or batch < 1.
    """
    # TODO: the bytes and FLOPs of one step, then the time floor and the ratios built on it.
    raise NotImplementedError('TODO: the bytes and FLOPs of one step, then the time floor and the ratios built on it.')


def flashdecoding_splits(n_kv_heads: int, batch: int, n_sms: int, seq_len: int, block_size: int = 1) -> dict[str, int]:
    """How many KV splits fill the GPU at decode: FlashDecoding's split count.

    n_blocks = ceil(seq_len / block_size); splits = min(max(1, ceil(n_sms / (n_kv_heads · batch))), n_blocks)
    (the fewest splits that give every SM a CTA; a split holds at least one block);
    chunk_tokens = ceil(n_blocks / splits) · block_size; ctas = n_kv_heads · batch · splits;
    waves = ceil(ctas / n_sms). Returns {"n_blocks", "splits", "chunk_tokens", "ctas", "waves"}.

    Worked: flashdecoding_splits(8, 1, 132, 32768) → splits 17, chunk_tokens 1928, ctas 136, waves 2;
    with block_size 16 → chunk_tokens 1936; seq_len 100, block_size 16 → 7 splits of 16 tokens.
    Errors: every argument an exact int >= 1, else ValueError naming it.
    """
    # TODO: blocks of the sequence, splits that fill the SMs (capped by the blocks), then chunk, CTAs, waves.
    raise NotImplementedError('TODO: blocks of the sequence, splits that fill the SMs (capped by the blocks), then chunk, CTAs, waves.')


# ---------------------------------------------------------------------------------------------
# 2. The generation loop
# ---------------------------------------------------------------------------------------------


def _check_requests(requests: object) -> list[tuple[float, int, int]]:
    if isinstance(requests, str | bytes) or not isinstance(requests, Sequence) or not requests:
        raise ValueError(f"requests must be a non-empty sequence of (arrival_s, prompt_len, max_new_tokens), "
                         f"got {requests!r}")
    out = []
    for i, r in enumerate(requests):
        if isinstance(r, str | bytes) or not isinstance(r, Sequence) or len(r) != 3:
            raise ValueError(f"requests[{i}] must be a triple (arrival_s, prompt_len, max_new_tokens), got {r!r}")
        arrival = _check_real(f"requests[{i}][0] (arrival_s)", r[0], positive=False)
        out.append((arrival, check_int(f"requests[{i}][1] (prompt_len)", r[1], 1),
                    check_int(f"requests[{i}][2] (max_new_tokens)", r[2], 1)))
    return out


class TokenGenSim:
    """A clocked generation loop: one token budget per step, FCFS admission, blocks reserved for life.

    ``requests[i] = (arrival_s, prompt_len, max_new_tokens)``, request id i. Admission reserves
    ceil((P + N − 1 + γ) / block_size) blocks until the request finishes (the last sampled token's KV
    is never written; a speculative round writes γ draft slots ahead); nothing is preempted.

    Each step: if nothing runs or waits, the clock jumps to the next arrival; arrivals at or before
    the clock join the queue. Running requests, in admission order, are scheduled first: a decoding one
    costs 1 token (1 + γ with speculation; skipped this step if less budget is left), a prefilling one
    gets min(remaining prompt, budget left) when chunked, else its whole remaining prompt only if it
    fits. Then waiting requests are admitted in FCFS order while budget is left (chunked) / the prompt
    fits (unchunked), running < max_num_seqs and the reservation fits (the head of the line blocks the
    rest); an admitted request gets min(P, budget left). A step lasts t_fixed_s + t_token_s · tokens
    (+ γ · t_draft_s when a speculative round ran). At its end a completed prefill emits the first
    token; a decode round emits 1 token, or min(a + 1, remaining) with a = spec_accepted[k mod len]
    at the request's k-th round. A request that reaches max_new_tokens frees its blocks.

    ``run()`` returns {"steps": [{"t_start", "t_end", "scheduled": {id: n}, "emitted": {id: k},
    "finished": [ids]}], "requests": [{"ttft_s", "tpot_s", "finish_s", "tokens", "max_itl_s"}],
    "makespan_s", "throughput_tok_s", "mean_ttft_s", "mean_tpot_s", "max_itl_s"}; TTFT is measured
    from arrival, TPOT = (last − first token time) / (n − 1) (0.0 when n = 1), ITL the gap between
    consecutive emissions of one request. Errors: ValueError naming the argument (see the README);
    RuntimeError after ``max_steps`` steps.
    """

    def __init__(self, requests: Sequence[tuple[float, int, int]], token_budget: int, max_num_seqs: int,
                 num_blocks: int, block_size: int, *, chunked_prefill: bool = True, spec_gamma: int = 0,
                 spec_accepted: Sequence[int] = (0,), t_fixed_s: float = 0.0, t_token_s: float = 0.0,
                 t_draft_s: float = 0.0, max_steps: int = 100_000) -> None:
        self.requests = _check_requests(requests)
        self.budget = check_int("token_budget", token_budget, 1)
        self.max_num_seqs = check_int("max_num_seqs", max_num_seqs, 1)
        self.num_blocks = check_int("num_blocks", num_blocks, 1)
        self.block_size = check_int("block_size", block_size, 1)
        if not isinstance(chunked_prefill, bool):
            raise ValueError(f"chunked_prefill must be a bool, got {chunked_prefill!r}")
        self.chunked = chunked_prefill
        self.gamma = check_int("spec_gamma", spec_gamma, 0)
        if isinstance(spec_accepted, str | bytes) or not isinstance(spec_accepted, Sequence) or not spec_accepted:
            raise ValueError(f"spec_accepted must be a non-empty sequence of accepted-draft counts, got "
                             f"{spec_accepted!r}")
        self.accepted = [check_int("spec_accepted", a, 0) for a in spec_accepted]
        if max(self.accepted) > self.gamma:
            raise ValueError(f"spec_accepted holds {max(self.accepted)} accepted drafts, more than spec_gamma "
                             f"{self.gamma}")
        self.t_fixed = _check_real("t_fixed_s", t_fixed_s, positive=False)
        self.t_token = _check_real("t_token_s", t_token_s, positive=False)
        self.t_draft = _check_real("t_draft_s", t_draft_s, positive=False)
        self.max_steps = check_int("max_steps", max_steps, 1)
        if self.budget < 1 + self.gamma:
            raise ValueError(f"token_budget {self.budget} cannot hold one decode round of 1 + spec_gamma "
                             f"{self.gamma} tokens")
        for i, (_, p, n) in enumerate(self.requests):
            if self._reserve(p, n) > self.num_blocks:
                raise ValueError(f"requests[{i}] needs {self._reserve(p, n)} blocks of {self.block_size}, the pool "
                                 f"has num_blocks {self.num_blocks}: it can never be admitted")
            if not self.chunked and p > self.budget:
                raise ValueError(f"token_budget {self.budget} is smaller than requests[{i}]'s prompt of {p} tokens "
                                 "and prefill is not chunked: it can never be scheduled")

    def _reserve(self, prompt_len: int, max_new: int) -> int:
        return -(-(prompt_len + max_new - 1 + self.gamma) // self.block_size)

    def run(self) -> dict:
        # TODO: the step loop (clock, arrivals, running first, FCFS admission, emissions), then the metrics.
        raise NotImplementedError('TODO: the step loop (clock, arrivals, running first, FCFS admission, emissions), then the metrics.')


def simulate_generation(requests: Sequence[tuple[float, int, int]], token_budget: int, max_num_seqs: int,
                        num_blocks: int, block_size: int, *, chunked_prefill: bool = True, spec_gamma: int = 0,
                        spec_accepted: Sequence[int] = (0,), t_fixed_s: float = 0.0, t_token_s: float = 0.0,
                        t_draft_s: float = 0.0, max_steps: int = 100_000) -> dict:
    """``TokenGenSim(...).run()``: the same arguments, the same result (see TokenGenSim).

    Worked (HAND = [(0, 100, 4), (0, 600, 2), (0, 30, 3)], budget 256, 8 sequences, 64 blocks of 16,
    t_fixed_s 0.010, t_token_s 0.0001): steps {0: 100, 1: 156}, {0: 1, 1: 255}, {0: 1, 1: 189, 2: 30},
    {0: 1, 1: 1, 2: 1}, {2: 1} ending at 35.6, 71.2, 103.2, 113.5, 123.6 ms; TTFT [0.0356, 0.1032,
    0.1032] s, makespan 0.1236 s, 72.8155 tok/s.
    """
    return TokenGenSim(requests, token_budget, max_num_seqs, num_blocks, block_size, chunked_prefill=chunked_prefill,
                       spec_gamma=spec_gamma, spec_accepted=spec_accepted, t_fixed_s=t_fixed_s, t_token_s=t_token_s,
                       t_draft_s=t_draft_s, max_steps=max_steps).run()
