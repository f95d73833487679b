"""The grader's tiny decoder and naive generator for C2 (trusted code: the engine under test only drives them).

``TinyDecoder`` is a pre-norm decoder (RMSNorm, multi-head attention with learned absolute positions,
GELU MLP) with seeded random weights. ``forward(tokens, positions, attend)`` runs a flat batch of
tokens from any number of sequences; attention is delegated to ``attend(layer, q, k, v) -> o``
(``[T, n_heads, head_dim]`` each), which is where a paged engine writes and reads its KV cache.
``naive_generate`` is the reference: greedy, one request at a time, everything recomputed each token.
"""

from __future__ import annotations

import importlib.util
import math
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import torch

Attend = Callable[[int, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


class TinyDecoder:
    def __init__(self, vocab: int = 97, hidden: int = 64, n_layers: int = 2, n_heads: int = 4, max_pos: int = 512,
                 seed: int = 0, dtype: torch.dtype = torch.float64) -> None:
        if hidden % n_heads:
            raise ValueError(f"hidden {hidden} is not a multiple of n_heads {n_heads}")
        self.vocab, self.hidden, self.n_layers, self.n_heads, self.max_pos = vocab, hidden, n_layers, n_heads, max_pos
        self.head_dim, self.dtype = hidden // n_heads, dtype
        g = torch.Generator().manual_seed(seed)

        def w(*shape: int, scale: float) -> torch.Tensor:
            return (torch.randn(*shape, generator=g, dtype=torch.float64) * scale).to(dtype)

        self.tok_emb = w(vocab, hidden, scale=1.0)
        self.pos_emb = w(max_pos, hidden, scale=0.5)
        self.layers = [
            {"wqkv": w(hidden, 3 * hidden, scale=hidden**-0.5), "wo": w(hidden, hidden, scale=hidden**-0.5),
             "w1": w(hidden, 4 * hidden, scale=hidden**-0.5), "w2": w(4 * hidden, hidden, scale=(4 * hidden) ** -0.5),
             "g1": 1 + w(hidden, scale=0.1), "g2": 1 + w(hidden, scale=0.1)}
            for _ in range(n_layers)
        ]
        self.g_out = 1 + w(hidden, scale=0.1)
        self.lm_head = w(hidden, vocab, scale=hidden**-0.5 * 4)

    @staticmethod
    def _norm(x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * g

    @torch.no_grad()
    def forward(self, tokens: torch.Tensor, positions: torch.Tensor, attend: Attend) -> torch.Tensor:
        """Logits ``[T, vocab]`` of a flat batch; ``attend`` gets each layer's q, k, v as ``[T, H, d]``."""
        t = int(tokens.shape[0])
        x = self.tok_emb[tokens] + self.pos_emb[positions]
        for i, p in enumerate(self.layers):
            q, k, v = (self._norm(x, p["g1"]) @ p["wqkv"]).split(self.hidden, dim=-1)
            shape = (t, self.n_heads, self.head_dim)
            o = attend(i, q.reshape(shape).contiguous(), k.reshape(shape).contiguous(), v.reshape(shape).contiguous())
            if not isinstance(o, torch.Tensor) or tuple(o.shape) != shape:
                got = tuple(o.shape) if isinstance(o, torch.Tensor) else type(o).__name__
                raise ValueError(f"attend(layer {i}) returned {got}, expected a tensor of shape {shape}")
            x = x + o.reshape(t, self.hidden).to(self.dtype) @ p["wo"]
            x = x + torch.nn.functional.gelu(self._norm(x, p["g2"]) @ p["w1"]) @ p["w2"]
        return self._norm(x, self.g_out) @ self.lm_head

    __call__ = forward


def dense_causal(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, q_start: int = 0) -> torch.Tensor:
    """Reference attention: queries at positions q_start… over keys 0…, query p sees keys 0…p."""
    scores = torch.einsum("thd,chd->htc", q, k) / math.sqrt(q.shape[-1])
    pos_q = torch.arange(q.shape[0]).unsqueeze(1) + q_start
    mask = torch.arange(k.shape[0]).unsqueeze(0) > pos_q
    scores = scores.masked_fill(mask.unsqueeze(0), float("-inf"))
    return torch.einsum("htc,chd->thd", torch.softmax(scores, dim=-1), v)


def naive_generate(model: TinyDecoder, prompt: Sequence[int], max_new_tokens: int) -> tuple[list[int], float]:
    """Greedy tokens of one request, recomputing everything for each token; and the smallest top-2 logit gap."""
    tokens, gap = list(prompt), math.inf
    for _ in range(max_new_tokens):
        t = torch.tensor(tokens)
        logits = model.forward(t, torch.arange(len(tokens)), lambda _i, q, k, v: dense_causal(q, k, v))[-1]
        top = torch.topk(logits, 2).values
        gap = min(gap, float(top[0] - top[1]))
        tokens.append(int(torch.argmax(logits)))
    return tokens[len(prompt):], gap


# The fixture: ten requests (prompt lengths and max_new as worked in the unit's README), token ids seeded.
PROMPT_LENS = [27, 11, 17, 24, 12, 23, 1, 9, 11, 27]
MAX_NEW = [11, 7, 5, 8, 6, 5, 2, 5, 8, 10]
CONFIGS = [  # (num_blocks, block_size, max_num_seqs, token_budget)
    (64, 4, 3, 32),
    (256, 16, 4, 64),
    (12, 4, 4, 24),
    (200, 8, 10, 7),
]


def fixture_prompts(seed: int = 3, vocab: int = 97) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(vocab) for _ in range(n)] for n in PROMPT_LENS]


def load_l33_reference():
    """L33's trusted scheduler model (tests/l33_paged_kv/l33_reference.py), loaded by path."""
    path = Path(__file__).resolve().parent.parent / "l33_paged_kv" / "l33_reference.py"
    spec = importlib.util.spec_from_file_location("l33_reference", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("l33_reference", module)
    spec.loader.exec_module(sys.modules["l33_reference"])
    module = sys.modules["l33_reference"]
    return module
