"""L10 · The three ledgers: training FLOPs, MFU, days to train, and activation bytes per layer.

Lecture 10 (01_性能工程与系统前置/10_AI_Infra性能工程方法论与三账本_FLOPs_显存_通信.md) sizes a training
run before it starts, from three ledgers: FLOPs, bytes of memory, bytes on the wire.

FLOPs. A dense transformer of N parameters costs 2N FLOPs per token forward (one multiply-add per
weight) and 4N backward (gradients for the activations and for the weights): 6N per token trained,
6ND for D tokens. Full activation recomputation runs the forward twice: 8ND.

MFU (model FLOPs utilization) counts only the model's FLOPs, 6N per token, against the peak:

    MFU = 6N · tokens_per_s / (n_gpus · peak_flops)
    days = 6ND / (n_gpus · peak_flops · MFU) / 86 400

Activations (Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models",
arXiv:2205.05198, eq. 1): one layer of a GPT-style transformer with 16-bit activations and 1-byte
dropout masks stores

    s·b·h·34 + 5·a·s²·b  bytes        s = seq_len, b = batch, h = hidden, a = n_heads

the second term being the a·s² attention scores, softmax outputs and dropout mask. Selective
recomputation (or FlashAttention, which never stores the s×s matrices) keeps only 34·s·b·h.

Units: FLOPs and bytes as exact ints, time in days (float). Invalid arguments raise ValueError
naming the argument.
"""

from __future__ import annotations

import math

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

SECONDS_PER_DAY = 86_400
FLOPS_PER_PARAM_TOKEN = 6  # forward 2 + backward 4
FLOPS_PER_PARAM_TOKEN_RECOMPUTE = 8  # + one more forward


def _check_real(name: str, value: object, *, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value}")
    return float(value)


def training_flops(n_params: int, n_tokens: int, recompute: bool = False) -> int:
    """FLOPs to train ``n_params`` parameters on ``n_tokens`` tokens: 6ND, or 8ND with full recompute.

    70B parameters × 2T tokens: 840 000 000 000 000 000 000 000 (8.4e23), an exact int.
    """
    # TODO: validate, then count forward and backward FLOPs per parameter per token.
    raise NotImplementedError('TODO: validate, then count forward and backward FLOPs per parameter per token.')


def mfu(tokens_per_s: float, n_params: int, n_gpus: int, peak_flops: float) -> float:
    """Model FLOPs utilization: 6N · tokens_per_s / (n_gpus · peak_flops), a fraction (0.52, not 52).

    64 H100 (989 TFLOP/s) training 70B at 78 324 tokens/s: 0.52.
    """
    # TODO: validate, then divide the model's FLOP/s by the cluster's peak FLOP/s.
    raise NotImplementedError("TODO: validate, then divide the model's FLOP/s by the cluster's peak FLOP/s.")


def training_days(n_params: int, n_tokens: int, n_gpus: int, peak_flops: float, mfu: float) -> float:
    """Days to train: 6ND / (n_gpus · peak_flops · mfu) / 86 400; ``mfu`` a fraction in (0, 1].

    70B × 2T tokens on 512 H100 (989e12) at MFU 0.5: 38.4 days; on 128 A100 (312e12): 486.9.
    """
    # TODO: validate (mfu in (0, 1]), then divide the FLOPs by the achieved cluster FLOP/s.
    raise NotImplementedError('TODO: validate (mfu in (0, 1]), then divide the FLOPs by the achieved cluster FLOP/s.')


def activation_bytes_per_layer(seq_len: int, batch: int, hidden: int, n_heads: int,
                               store_scores: bool = True) -> dict[str, int]:
    """Activation bytes one transformer layer keeps for backward (Korthikanti et al., eq. 1).

    Keys: "linear" (34·s·b·h: inputs of the norms, QKV, projections, MLP and their dropout masks),
    "attention_scores" (5·a·s²·b: scores, softmax output, dropout mask; 0 when ``store_scores`` is
    False), "total". LLaMA-2-7B shapes, s = 2048, b = 1: 285 212 672 + 671 088 640 B.
    """
    # TODO: validate, then fill the two named parts and their sum.
    raise NotImplementedError('TODO: validate, then fill the two named parts and their sum.')
