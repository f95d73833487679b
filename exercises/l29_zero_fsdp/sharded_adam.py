"""L29 · ZeRO-1 and ZeRO-2 for real: Adam whose states live in 1/P shards, on gloo.

Lecture 29 (05_大模型分布式训练/29_显存分片技术_ZeRO_1_2_3与PyTorch_FSDP深度剖析.md), ZeRO (Rajbhandari et
al., arXiv:1910.02054 §5). Plain data parallelism keeps Adam's two states (m and v) for every parameter
on every rank; ZeRO-1 gives each rank one contiguous 1/P slice of the flattened parameters and keeps the
states of that slice only. Each step:

    stage 1: all-reduce the full gradient (every rank has the average), Adam on my slice, all-gather slices
    stage 2: reduce-scatter the gradient (I receive only my slice's average), Adam on it, all-gather slices

The update is the same, to rounding, as a plain Adam fed the averaged gradient: sharding changes where
the states live, not a single number. The flat buffer is padded to P·S elements, S = ceil(numel / P)
(l29's ``shard_params``), so every rank's slice has the same length.

Conventions: exact int bytes; ValueError naming the argument for bad input.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.distributed as dist

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int


def _check_rate(name: str, value: object, *, below_one: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0 or (below_one and value >= 1):
        raise ValueError(f"{name} must be a number {'in [0, 1)' if below_one else '>= 0'}, got {value!r}")
    return float(value)


def unflatten_into(params: Sequence[torch.Tensor], flat: torch.Tensor, what: str) -> None:
    """Given: copy consecutive slices of ``flat`` into each parameter's ``.grad`` (new tensors) or its data."""
    offset = 0
    with torch.no_grad():
        for p in params:
            piece = flat[offset:offset + p.numel()].view_as(p)
            if what == "grad":
                p.grad = piece.clone()
            else:
                p.copy_(piece)
            offset += p.numel()


def shard_range(numel: int, world_size: int, rank: int) -> tuple[int, int]:
    """Half-open [start, stop) of ``rank``'s slice of a flat buffer of ``numel`` elements.

    S = ceil(numel / P); rank r owns [min(r·S, numel), min((r+1)·S, numel)) (possibly empty: the padding).
    (9610, 4, 3) → (7209, 9610); (2, 4, 3) → (2, 2).
    """
    # TODO: validate (rank below world_size); S = ceil(numel / P); clip both ends to numel.
    raise NotImplementedError('TODO: validate (rank below world_size); S = ceil(numel / P); clip both ends to numel.')


def adam_update_(
    param: torch.Tensor,
    grad: torch.Tensor,
    exp_avg: torch.Tensor,
    exp_avg_sq: torch.Tensor,
    step: int,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float = 0.0,
) -> None:
    """One Adam step in place, as torch.optim.Adam does it (graded to 64 ulps: the README says why).

    g = grad + wd·param (L2, not AdamW; ``grad`` itself untouched); m ← lerp(m, g, 1−β1);
    v ← β2·v + (1−β2)·g²; param ← param − lr/(1−β1^t) · m / (sqrt(v)/sqrt(1−β2^t) + eps). ``step`` counts from 1.
    """
    # TODO: validate; the L2 term into a new tensor; both moments in place; both bias corrections; update param.
    raise NotImplementedError('TODO: validate; the L2 term into a new tensor; both moments in place; both bias corrections; update param.')


class ShardedAdam:
    """Adam with its states sharded over the default process group (ZeRO stage 1 or 2).

    ``exp_avg`` and ``exp_avg_sq``: this rank's states, 1-D, S = ceil(numel / P) elements each.
    ``step()`` reads each parameter's local ``.grad`` (a plain backward on this rank's data), averages it
    over the ranks, updates this rank's slice and all-gathers the slices into every parameter.
    Stage 1 leaves the averaged gradient in ``p.grad``; stage 2 never holds it whole and sets ``p.grad`` None.
    """

    def __init__(
        self,
        params: Sequence[torch.nn.Parameter],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        stage: int = 1,
    ) -> None:
        # TODO: validate (stage 1 or 2, at least one trainable parameter); this rank's slice; two zero states of S.
        raise NotImplementedError("TODO: validate (stage 1 or 2, at least one trainable parameter); this rank's slice; two zero states of S.")

    def step(self) -> None:
        """Average the gradients over the ranks, update this rank's slice, all-gather the parameters."""
        # TODO: flatten the local gradients padded to P·S; stage 1 all-reduce (write the average back into
        #  p.grad), stage 2 reduce-scatter (then drop p.grad); Adam on my slice; all-gather; copy into params.
        raise NotImplementedError('TODO: flatten the local gradients padded to P·S; stage 1 all-reduce (write the average back into p.grad), stage 2 reduce-scatter (then drop p.grad); Adam on my slice; all-gather; copy into params.')

    def state_bytes(self) -> int:
        """Bytes of optimizer state this rank holds: 2·S·element size."""
        # TODO: both states' elements times their element size.
        raise NotImplementedError("TODO: both states' elements times their element size.")
