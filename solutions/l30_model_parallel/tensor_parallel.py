"""L30 · Megatron tensor parallelism on gloo: column/row sharding and the conjugate operators f and g.

Lecture 30 (05_大模型分布式训练/30_模型并行技术_TP_PP_SP_CP与硬件拓扑映射.md) §1, Megatron-LM (Shoeybi et al.,
arXiv:1909.08053 §3, fig. 3). An MLP y = GELU(x W1ᵀ + b1) W2ᵀ + b2 on P ranks:

    W1 split by OUTPUT features (column parallel): rank r computes its own slice of the hidden layer,
       GELU applies element-wise, so no communication is needed before W2;
    W2 split by INPUT features (row parallel): rank r's partial products are summed over the ranks
       (one all-reduce, g), then b2 is added once.

f (before the column-parallel layer) is the identity forward and an all-reduce of the gradient backward:
every rank's slice of the hidden layer contributes to ∂L/∂x. g (after the row-parallel layer) is the
all-reduce forward and the identity backward. One all-reduce forward and one backward per MLP, each of
batch·seq·hidden elements.

Conventions: nn.Linear's [out_features, in_features] weight layout; ValueError naming the argument.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn.functional as F

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

STYLES = ("column", "row")


def shard_linear(
    weight: torch.Tensor, bias: torch.Tensor | None, world_size: int, rank: int, style: str
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """This rank's shard of an nn.Linear: "column" splits the out features (rows of weight, and bias),
    "row" splits the in features (columns of weight; the bias is returned whole, added once after the sum).

    New contiguous tensors. A [16, 8] weight, P = 2, rank 1: column → rows 8..15, row → columns 4..7.
    """
    # TODO: validate (style, 2-D weight, rank < P, the split dimension divisible by P); slice; copy contiguous.
    ### BEGIN SOLUTION
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, got {style!r}")
    world = check_int("world_size", world_size, 1)
    r = check_int("rank", rank)
    if r >= world:
        raise ValueError(f"rank must be < world_size ({world}), got {r}")
    if not isinstance(weight, torch.Tensor) or weight.dim() != 2:
        raise ValueError(f"weight must be a 2-D [out, in] tensor, got {getattr(weight, 'shape', weight)!r}")
    dim = 0 if style == "column" else 1
    if weight.shape[dim] % world:
        raise ValueError(f"weight's {'out' if dim == 0 else 'in'} features ({weight.shape[dim]}) must be divisible "
                         f"by world_size ({world}) for a {style}-parallel split")
    size = weight.shape[dim] // world
    w = weight.narrow(dim, r * size, size).contiguous().clone()
    if bias is None:
        return w, None
    b = bias.narrow(0, r * size, size) if style == "column" else bias
    return w, b.contiguous().clone()
    ### END SOLUTION


class _CopyToTP(torch.autograd.Function):
    """f: identity forward, all-reduce (SUM) of the gradient backward."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        # TODO: f's forward.
        ### BEGIN SOLUTION
        return x.view_as(x)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        # TODO: f's backward.
        ### BEGIN SOLUTION
        grad = grad.contiguous().clone()
        dist.all_reduce(grad)
        return grad
        ### END SOLUTION


class _ReduceFromTP(torch.autograd.Function):
    """g: all-reduce (SUM) forward, identity backward."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        # TODO: g's forward (do not modify x: return a new tensor).
        ### BEGIN SOLUTION
        out = x.contiguous().clone()
        dist.all_reduce(out)
        return out
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        # TODO: g's backward.
        ### BEGIN SOLUTION
        return grad
        ### END SOLUTION


def copy_to_tp(x: torch.Tensor) -> torch.Tensor:
    """f: the input of a column-parallel layer (identity forward, all-reduce of the gradient backward)."""
    return _CopyToTP.apply(x)


def reduce_from_tp(x: torch.Tensor) -> torch.Tensor:
    """g: the output of a row-parallel layer (all-reduce forward, identity backward)."""
    return _ReduceFromTP.apply(x)


def column_parallel_linear(
    x: torch.Tensor, weight_shard: torch.Tensor, bias_shard: torch.Tensor | None
) -> torch.Tensor:
    """This rank's output features of x Wᵀ + b: F.linear(f(x), W_r, b_r) (no gather of the output)."""
    # TODO: f, then this rank's linear.
    ### BEGIN SOLUTION
    return F.linear(copy_to_tp(x), weight_shard, bias_shard)
    ### END SOLUTION


def row_parallel_linear(x_shard: torch.Tensor, weight_shard: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """The full output of x Wᵀ + b from this rank's input features: g(F.linear(x_r, W_r)) + b (b added once)."""
    # TODO: this rank's partial product without bias, g, then the bias.
    ### BEGIN SOLUTION
    out = reduce_from_tp(F.linear(x_shard, weight_shard))
    return out if bias is None else out + bias
    ### END SOLUTION


def tp_mlp(
    x: torch.Tensor,
    w1_shard: torch.Tensor,
    b1_shard: torch.Tensor | None,
    w2_shard: torch.Tensor,
    b2: torch.Tensor | None,
) -> torch.Tensor:
    """Megatron's MLP: row_parallel_linear(GELU(column_parallel_linear(x, W1_r, b1_r)), W2_r, b2), exact GELU."""
    # TODO: column-parallel, exact (erf) GELU, row-parallel.
    ### BEGIN SOLUTION
    return row_parallel_linear(F.gelu(column_parallel_linear(x, w1_shard, b1_shard)), w2_shard, b2)
    ### END SOLUTION
