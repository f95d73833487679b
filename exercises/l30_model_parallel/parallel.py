"""L30 · Model parallelism ledgers: pipeline bubbles, 1F1B, Megatron's rank groups, TP traffic.

Lecture 30 (05_大模型分布式训练/30_模型并行技术_TP_PP_SP_CP与硬件拓扑映射.md), after Megatron-LM
(Shoeybi et al., arXiv:1909.08053; Narayanan et al., arXiv:2104.04473).

Pipeline bubble, p stages, m micro-batches, v virtual stages per GPU (interleaved 1F1B). Two
definitions are in use, and they are not the same number:
* share of wall time a stage idles (the course's): (p−1) / (v·m + p−1);   p=4, m=16: 3/19, v=2: 3/35
* Megatron's bubble / ideal compute time (2104.04473 §2.2): (p−1) / (v·m); p=4, m=16: 3/16, v=2: 3/32

1F1B on stage s of p: min(p−s−1, m) warm-up forwards, then one forward and one backward in turn,
then the remaining backwards; at most p−s micro-batches are in flight (GPipe keeps all m).

Megatron orders ranks TP innermost, then DP, then PP:
rank = pp_rank·(tp·dp) + dp_rank·tp + tp_rank, so a TP group is tp consecutive ranks (one NVLink
node), a DP group is strided by tp inside one pipeline stage, a PP group is strided by tp·dp.

Tensor parallelism (column- then row-parallel linear) all-reduces a b·s·h activation twice per layer
forward (attention, MLP) and twice backward. A ring all-reduce of M bytes over N GPUs sends
2·(N−1) chunks of ceil(M/N) bytes from each GPU.

Conventions: sizes in exact int bytes; invalid arguments raise ValueError naming the argument.
"""

from __future__ import annotations

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

Action = tuple[str, int]  # ("F", micro_batch) or ("B", micro_batch)


def _check_pipeline(p: object, m: object, v: object) -> tuple[int, int, int]:
    return check_int("p", p, 1), check_int("m", m, 1), check_int("v", v, 1)


# ---------------------------------------------------------------------------------------------
# 1. Pipeline bubbles, under both definitions
# ---------------------------------------------------------------------------------------------


def pipeline_bubble_time_fraction(p: int, m: int, v: int = 1) -> float:
    """Share of a step's wall time each stage idles: (p−1) / (v·m + p−1).

    p=4, m=16 → 3/19 = 15.79 %; interleaved v=2 → 3/35 = 8.57 %. One stage never idles: 0.0.
    """
    # TODO: validate p, m, v (ints >= 1), then idle time over total time, in chunk-times.
    raise NotImplementedError('TODO: validate p, m, v (ints >= 1), then idle time over total time, in chunk-times.')


def pipeline_bubble_ratio(p: int, m: int, v: int = 1) -> float:
    """Megatron's bubble fraction: bubble time over ideal compute time, (p−1) / (v·m).

    p=4, m=16 → 3/16 = 18.75 %; v=2 → 3/32 = 9.375 %.
    """
    # TODO: validate, then the bubble divided by the ideal (bubble-free) time.
    raise NotImplementedError('TODO: validate, then the bubble divided by the ideal (bubble-free) time.')


# ---------------------------------------------------------------------------------------------
# 2. The 1F1B schedule of one stage
# ---------------------------------------------------------------------------------------------


def one_f_one_b_schedule(p: int, m: int, stage: int) -> list[Action]:
    """The order in which ``stage`` (0 = first) of a ``p``-stage pipeline runs ``m`` micro-batches.

    ``[("F", 0), ("F", 1), ..., ("B", 0), ...]``: min(p−stage−1, m) warm-up forwards, then forward
    and backward in turn (F before B), then the remaining backwards. p=4, m=8, stage 0:
    F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7.
    """
    # TODO: validate (0 <= stage < p), then warm-up, steady 1F1B pairs, cool-down.
    raise NotImplementedError('TODO: validate (0 <= stage < p), then warm-up, steady 1F1B pairs, cool-down.')


# ---------------------------------------------------------------------------------------------
# 3. Megatron's process groups
# ---------------------------------------------------------------------------------------------


def megatron_groups(world_size: int, tp: int, pp: int) -> dict[int, dict[str, tuple[int, ...]]]:
    """Each rank's tensor-, pipeline- and data-parallel group, Megatron's order (TP innermost).

    Returns ``{rank: {"tp": (...), "pp": (...), "dp": (...)}}`` for every rank in
    ``range(world_size)``; each group is a tuple of ranks in ascending order and contains the rank.
    dp = world_size / (tp·pp). 64 ranks, tp=8, pp=4: rank 13 → tp (8, ..., 15), dp (5, 13),
    pp (13, 29, 45, 61).
    """
    # TODO: validate (tp·pp divides world_size), then split each rank into (pp, dp, tp).
    raise NotImplementedError('TODO: validate (tp·pp divides world_size), then split each rank into (pp, dp, tp).')


# ---------------------------------------------------------------------------------------------
# 4. Tensor-parallel traffic
# ---------------------------------------------------------------------------------------------


def tp_allreduce_bytes_per_layer(batch: int, seq_len: int, hidden: int, tp: int, elem_bytes: int = 2) -> int:
    """Bytes one GPU sends per transformer layer and training step for tensor parallelism.

    4 all-reduces (attention and MLP, forward and backward) of a batch·seq_len·hidden activation of
    elem_bytes each, every one a ring: 2·(tp−1)·ceil(M/tp) bytes per GPU. 70B layer, b=2, s=4096,
    h=8192, tp=8: M = 134,217,728 B, 234,881,024 B per all-reduce, 939,524,096 B per layer.
    """
    # TODO: validate, then message bytes → ring bytes per all-reduce → 4 all-reduces.
    raise NotImplementedError('TODO: validate, then message bytes → ring bytes per all-reduce → 4 all-reduces.')
