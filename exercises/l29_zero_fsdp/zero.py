"""L29 · ZeRO-1/2/3 and FSDP: what each GPU keeps, what it sends, and the peak of unsharding.

Lecture 29 (05_大模型分布式训练/29_显存分片技术_ZeRO_1_2_3与PyTorch_FSDP深度剖析.md), after the
ZeRO paper (Rajbhandari et al., arXiv:1910.02054). With Ψ parameters, N data-parallel GPUs and the
16 B/param convention (bf16 weights 2, bf16 gradients 2, fp32 Adam states 12):

    stage 0 (DDP)   every GPU keeps everything                 2Ψ + 2Ψ + 12Ψ
    stage 1 (P_os)  optimizer states sharded                   2Ψ + 2Ψ + 12Ψ/N
    stage 2 (P_os+g) + gradients sharded                       2Ψ + (2Ψ + 12Ψ)/N
    stage 3 (P_os+g+p) + weights sharded (FSDP FULL_SHARD)     (2Ψ + 2Ψ + 12Ψ)/N

70B on 8 GPUs: 1120 / 385 / 262.5 / 140 GB. A shard holds ceil(Ψ/N) parameters: the flat buffer is
padded to a multiple of N, so no parameter is lost when N does not divide Ψ.

Traffic per step, per GPU, with ring collectives ((N−1) chunks of one shard sent per pass):
stages 0–2 move the gradients once around (all-reduce = reduce-scatter + all-gather: 2(N−1)/N of the
model's bytes); stage 3 all-gathers the weights again for the backward: 3(N−1)/N.

FSDP unshards one unit (one wrapped module) at a time: the full parameters of the unit computing and
of the units prefetched after it sit beside every GPU's shards. Wrap per decoder layer, or the whole
model is one unit and unsharding it costs the full model again.

Conventions: exact int bytes; invalid arguments raise ValueError naming the argument.
"""

from __future__ import annotations

from collections.abc import Sequence

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

STAGES = (0, 1, 2, 3)


def _check_stage(stage: object) -> int:
    if isinstance(stage, bool) or stage not in STAGES:
        raise ValueError(f"stage must be one of {STAGES} (ZeRO stage), got {stage!r}")
    return int(stage)


def shard_params(n_params: int, n_gpus: int) -> int:
    """Parameters in one GPU's shard: ceil(Ψ / N) (the flat buffer is padded to a multiple of N)."""
    return -(-n_params // n_gpus)


# ---------------------------------------------------------------------------------------------
# 1. Memory per GPU
# ---------------------------------------------------------------------------------------------


def zero_memory_per_gpu(
    n_params: int, n_gpus: int, stage: int, weight_bytes: int = 2, grad_bytes: int = 2, optimizer_bytes: int = 12
) -> int:
    """Static bytes (weights + gradients + optimizer states) one GPU holds under ZeRO ``stage`` 0–3.

    Sharded terms hold ``shard_params(Ψ, N)`` parameters, replicated terms all Ψ.
    70B on 8 GPUs: 1_120e9, 385e9, 262.5e9, 140e9 bytes for stages 0, 1, 2, 3.
    """
    # TODO: validate, then each term, sharded from its stage on (opt 1, grads 2, weights 3).
    raise NotImplementedError('TODO: validate, then each term, sharded from its stage on (opt 1, grads 2, weights 3).')


# ---------------------------------------------------------------------------------------------
# 2. Communication per GPU and step
# ---------------------------------------------------------------------------------------------


def zero_comm_bytes_per_gpu(n_params: int, n_gpus: int, stage: int, weight_bytes: int = 2, grad_bytes: int = 2) -> int:
    """Bytes one GPU sends per training step under ZeRO ``stage``, with ring collectives.

    One ring pass (reduce-scatter or all-gather) sends (N−1) chunks of one shard. Stage 0: all-reduce
    of the gradients (two passes of grad_bytes). Stages 1–2: reduce-scatter of the gradients +
    all-gather of the updated weights. Stage 3: reduce-scatter of the gradients + all-gather of the
    weights in the forward and again in the backward. 70B, N=8: 245e9 B (stages 0–2), 367.5e9 B (3).
    """
    # TODO: validate, then count the ring passes of each stage, (N−1) shards each.
    raise NotImplementedError('TODO: validate, then count the ring passes of each stage, (N−1) shards each.')


# ---------------------------------------------------------------------------------------------
# 3. FSDP: the peak of unsharding units
# ---------------------------------------------------------------------------------------------


def fsdp_peak_param_bytes(unit_params: Sequence[int], n_gpus: int, prefetch: int = 1, weight_bytes: int = 2) -> int:
    """Peak bytes of parameters on one GPU under FSDP FULL_SHARD, units running in order.

    Every unit keeps its shard, ``shard_params(u, N)`` parameters, all the time. While unit i runs,
    its full parameters and those of the next ``prefetch`` units (as many as exist) are unsharded
    too: peak = Σ shards + max over i of the full units i..i+prefetch, times ``weight_bytes``.
    LLaMA-3-8B wrapped per decoder layer, 8 GPUs, prefetch 1: 4,545,143,808 B; as one unit: 18,068,087,808 B.
    """
    # TODO: validate, then all shards plus the largest window of unsharded units.
    raise NotImplementedError('TODO: validate, then all shards plus the largest window of unsharded units.')
