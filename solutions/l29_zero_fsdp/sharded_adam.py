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
    ### BEGIN SOLUTION
    n = check_int("numel", numel)
    world = check_int("world_size", world_size, 1)
    r = check_int("rank", rank)
    if r >= world:
        raise ValueError(f"rank must be < world_size ({world}), got {r}")
    size = -(-n // world)
    return min(r * size, n), min((r + 1) * size, n)
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    t = check_int("step", step, 1)
    lr, eps, wd = _check_rate("lr", lr), _check_rate("eps", eps), _check_rate("weight_decay", weight_decay)
    beta1, beta2 = _check_rate("beta1", beta1, below_one=True), _check_rate("beta2", beta2, below_one=True)
    g = grad.add(param, alpha=wd) if wd != 0 else grad
    exp_avg.lerp_(g, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
    bias_correction1 = 1 - beta1**t
    bias_correction2 = 1 - beta2**t
    denom = (exp_avg_sq.sqrt() / bias_correction2**0.5).add_(eps)
    param.addcdiv_(exp_avg, denom, value=-lr / bias_correction1)
    ### END SOLUTION


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
        ### BEGIN SOLUTION
        if isinstance(stage, bool) or stage not in (1, 2):
            raise ValueError(f"stage must be 1 (optimizer states sharded) or 2 (+ gradients), got {stage!r}")
        self.params = [p for p in params if p.requires_grad]
        if not self.params:
            raise ValueError("params holds no trainable parameter (requires_grad=True)")
        self.lr, self.betas, self.eps, self.weight_decay, self.stage = lr, betas, eps, weight_decay, stage
        self.world, self.rank = dist.get_world_size(), dist.get_rank()
        self.numel = sum(p.numel() for p in self.params)
        self.shard = -(-self.numel // self.world)
        dtype = self.params[0].dtype
        self.exp_avg = torch.zeros(self.shard, dtype=dtype)
        self.exp_avg_sq = torch.zeros(self.shard, dtype=dtype)
        self.step_count = 0
        ### END SOLUTION

    def step(self) -> None:
        """Average the gradients over the ranks, update this rank's slice, all-gather the parameters."""
        # TODO: flatten the local gradients padded to P·S; stage 1 all-reduce (write the average back into
        #  p.grad), stage 2 reduce-scatter (then drop p.grad); Adam on my slice; all-gather; copy into params.
        ### BEGIN SOLUTION
        self.step_count += 1
        padded = self.world * self.shard
        grads = [p.grad.reshape(-1) if p.grad is not None else torch.zeros_like(p).reshape(-1) for p in self.params]
        flat_grad = torch.cat([*grads, grads[0].new_zeros(padded - self.numel)])
        lo, hi = self.rank * self.shard, (self.rank + 1) * self.shard
        if self.stage == 1:
            dist.all_reduce(flat_grad)
            flat_grad.div_(self.world)
            unflatten_into(self.params, flat_grad, "grad")
            grad_shard = flat_grad[lo:hi]
        else:
            grad_shard = flat_grad.new_empty(self.shard)
            dist.reduce_scatter_single(grad_shard, flat_grad)
            grad_shard.div_(self.world)
            for p in self.params:
                p.grad = None
        flat_param = torch.cat([*(p.detach().reshape(-1) for p in self.params),
                                flat_grad.new_zeros(padded - self.numel)])
        param_shard = flat_param[lo:hi].clone()
        adam_update_(param_shard, grad_shard, self.exp_avg, self.exp_avg_sq, self.step_count, self.lr,
                     self.betas[0], self.betas[1], self.eps, self.weight_decay)
        dist.all_gather_single(flat_param, param_shard)
        unflatten_into(self.params, flat_param, "data")
        ### END SOLUTION

    def state_bytes(self) -> int:
        """Bytes of optimizer state this rank holds: 2·S·element size."""
        # TODO: both states' elements times their element size.
        ### BEGIN SOLUTION
        return sum(t.numel() * t.element_size() for t in (self.exp_avg, self.exp_avg_sq))
        ### END SOLUTION
