"""L06 · What autograd keeps for the backward pass, measured, and what checkpointing trades for it.

Lecture 06 (01_性能工程与系统前置/06_PyTorch计算图与Autograd显存生命周期.md).

Saved tensors. During the forward pass every differentiable op hands the tensors its backward
will need to autograd (``ctx.save_for_backward``); they stay alive until the backward has used
them. Attention over Q, K, V of shape [B, n, S, d] saves, per op:

* ``Q @ Kᵀ`` keeps Q and K (B·n·S·d elements each); dividing by √d keeps nothing;
* ``softmax`` keeps its output P (B·n·S² elements);
* ``dropout`` keeps its mask (B·n·S² elements of the mask's dtype: a 1-byte bool on CUDA, a mask
  of the input's dtype in the CPU composite); its output P' is not saved by dropout itself...
* ...but ``P' @ V`` keeps both of its inputs: P' (another B·n·S² elements) and V.

Without dropout, ``P @ V`` saves P, the same tensor softmax already saved: count it once.

``torch.autograd.graph.saved_tensors_hooks(pack, unpack)`` calls ``pack`` on every tensor an op
saves, so the ledger can be checked by measurement. Two saved tensors may be views of one
storage (``x * x`` saves x twice): ``bytes`` counts each saved tensor's numel·element_size,
``unique_bytes`` counts each distinct storage once, at its full ``nbytes()``.

Checkpointing. Cut L blocks into k segments and keep only each segment's input; in the backward,
rerun one segment's forward to rebuild its activations. Peak ≈ k·input + ⌈L/k⌉·act (all the
checkpoints plus one segment's activations); the extra forward costs 2P of the 6P FLOPs per token
of a training step: 6P → 8P, +33 %.

Sizes are exact ints in bytes. Invalid arguments raise ValueError naming the argument.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

ATTENTION_PARTS = ("q", "k", "softmax_out", "dropout_mask", "dropout_out", "v", "total")
RECOMPUTE_FLOPS_PCT = 33  # (8P - 6P) / 6P: one more forward (2P) on top of forward + backward (6P)


# ---------------------------------------------------------------------------------------------
# 1. The attention ledger: what each op of softmax(QKᵀ/√d)·V saves
# ---------------------------------------------------------------------------------------------


def attention_saved_bytes(
    batch: int,
    n_heads: int,
    seq: int,
    head_dim: int,
    elem_bytes: int = 2,
    dropout: bool = True,
    mask_bytes: int = 1,
) -> dict[str, int]:
    """Bytes autograd saves for one naive attention, by saved tensor, in bytes.

    Keys ``ATTENTION_PARTS``: ``q``, ``k``, ``v`` = B·n·S·d·elem_bytes each; ``softmax_out`` =
    B·n·S²·elem_bytes; ``dropout_mask`` = B·n·S²·mask_bytes; ``dropout_out`` (P' kept by P'·V) =
    B·n·S²·elem_bytes; ``total`` their sum. ``dropout=False``: mask and dropout_out are 0 (P·V keeps
    the P that softmax already kept). ``mask_bytes`` is 1 on CUDA (bool mask), ``elem_bytes`` for
    the CPU's composite dropout.

    (2, 32, 8192, 128), bf16: q = k = v = 134,217,728; softmax_out = dropout_out = 8,589,934,592;
    dropout_mask 4,294,967,296; total 21,877,489,664 B (without dropout: 8,992,587,776 B).

    Errors: any size < 1 or not an int → ValueError naming it; ``dropout`` not a bool → ValueError.
    """
    b, n = check_int("batch", batch, 1), check_int("n_heads", n_heads, 1)
    s, d = check_int("seq", seq, 1), check_int("head_dim", head_dim, 1)
    e, m = check_int("elem_bytes", elem_bytes, 1), check_int("mask_bytes", mask_bytes, 1)
    if not isinstance(dropout, bool):
        raise ValueError(f"dropout must be a bool, got {dropout!r} ({type(dropout).__name__})")
    # TODO: one entry per saved tensor (bytes), 0 for the dropout entries when dropout is False,
    # and "total" as the sum of the parts.
    ### BEGIN SOLUTION
    qkv = b * n * s * d * e  # Q and K saved by QKᵀ, V saved by P'·V
    scores = b * n * s * s  # elements of one [B, n, S, S] tensor
    parts = {
        "q": qkv,
        "k": qkv,
        "softmax_out": scores * e,  # softmax's backward needs its output
        "dropout_mask": scores * m if dropout else 0,
        "dropout_out": scores * e if dropout else 0,  # P'·V keeps P'; without dropout P is already saved
        "v": qkv,
    }
    parts["total"] = sum(parts.values())
    return parts
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 2. Measuring it: saved-tensor hooks
# ---------------------------------------------------------------------------------------------


def saved_tensor_bytes(fn: Callable, *args) -> dict[str, int]:
    """Run ``fn(*args)`` and count what autograd saves for its backward.

    Returns ``{"count": tensors packed, "bytes": Σ numel·element_size over them (a tensor saved
    twice counts twice), "unique_bytes": Σ nbytes() over the distinct storages they live in}``;
    a storage is identified by its ``data_ptr()`` and device.

    x = 1024 fp32 elements requiring grad: ``x * x`` → {2, 8192, 4096}; ``x * 3.0`` → {0, 0, 0};
    ``x[:600] * x[424:]`` → {2, 4800, 4096}; ``torch.native_dropout(x, 0.5, True)`` keeps a
    1024-byte bool mask.

    Errors: ``fn`` not callable → ValueError naming fn.
    """
    if not callable(fn):
        raise ValueError(f"fn must be callable, got {fn!r} ({type(fn).__name__})")
    # TODO: record each tensor pack() receives inside torch.autograd.graph.saved_tensors_hooks,
    # run fn, then count tensors, their bytes, and the bytes of their distinct storages.
    ### BEGIN SOLUTION
    saved: list[torch.Tensor] = []

    def pack(t: torch.Tensor) -> torch.Tensor:
        saved.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn(*args)
    storages: dict[tuple[int, str], int] = {}
    for t in saved:
        storage = t.untyped_storage()
        storages[(storage.data_ptr(), str(t.device))] = storage.nbytes()
    return {
        "count": len(saved),
        "bytes": sum(t.numel() * t.element_size() for t in saved),
        "unique_bytes": sum(storages.values()),
    }
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 3. How many checkpoints: the √L trade-off, exactly
# ---------------------------------------------------------------------------------------------


def checkpoint_plan(n_layers: int, act_bytes_per_layer: int, input_bytes_per_layer: int) -> dict[str, int]:
    """The number of checkpointed segments k that minimises the activation peak of L layers.

    peak(k) = k·input_bytes_per_layer + ⌈L/k⌉·act_bytes_per_layer, k = 1..L; the smallest k among
    ties. Returns ``{"segments": k, "peak_bytes": peak(k), "no_ckpt_bytes": L·act,
    "recompute_flops_pct": 33}``.

    (32, 1, 1) → k 4, peak 12 (4, 5, 6 and 8 all give 12; √32 ≈ 5.66); (32, 34, 2) → k 32, peak 98
    against 1088; (80, 34, 2) → k 40, peak 148.

    Errors: n_layers < 1, a negative byte count or a non-int → ValueError naming it.
    """
    n = check_int("n_layers", n_layers, 1)
    act = check_int("act_bytes_per_layer", act_bytes_per_layer)
    inp = check_int("input_bytes_per_layer", input_bytes_per_layer)
    # TODO: try every k from 1 to L, keep the first k of smallest peak, and return the plan.
    ### BEGIN SOLUTION
    best_k, best_peak = 1, inp + n * act
    for k in range(2, n + 1):
        peak = k * inp + -(-n // k) * act  # all k checkpoints + the largest segment's activations
        if peak < best_peak:
            best_k, best_peak = k, peak
    return {
        "segments": best_k,
        "peak_bytes": best_peak,
        "no_ckpt_bytes": n * act,
        "recompute_flops_pct": RECOMPUTE_FLOPS_PCT,
    }
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 4. Checkpointing for real: torch.utils.checkpoint
# ---------------------------------------------------------------------------------------------


def split_sizes(n: int, segments: int) -> list[int]:
    """``n`` blocks cut into ``segments`` groups as equal as possible, larger first: (10, 4) → [3, 3, 2, 2]."""
    base, extra = divmod(n, segments)
    return [base + 1] * extra + [base] * (segments - extra)


def _run_blocks(group: Sequence[nn.Module]) -> Callable[[torch.Tensor], torch.Tensor]:
    def run(x: torch.Tensor) -> torch.Tensor:
        for block in group:
            x = block(x)
        return x

    return run


def checkpointed_forward(blocks: Sequence[nn.Module], x: torch.Tensor, segments: int) -> torch.Tensor:
    """``x`` through ``blocks`` in ``segments`` checkpointed groups; the same values as the plain chain.

    The groups have the sizes ``split_sizes(len(blocks), segments)``; each group, the last one too,
    runs through ``torch.utils.checkpoint.checkpoint(..., use_reentrant=False)``, so autograd keeps
    only the groups' inputs and reruns each group's forward once during the backward. The
    non-reentrant variant also gives the blocks' parameters gradients when ``x`` does not require
    grad (the reentrant one would not). 6 blocks, 3 segments, x of 4×16 fp32: hooks outside see
    3 saved inputs (768 B), every block runs forward twice per step.

    Errors: ``segments`` outside 1..len(blocks) (or not an int) → ValueError naming segments.
    """
    blocks = list(blocks)
    segments = check_int("segments", segments, 1)
    if segments > len(blocks):
        raise ValueError(f"segments must be <= len(blocks) = {len(blocks)}, got {segments}")
    # TODO: walk the blocks group by group (split_sizes) and pass x through each group with
    # checkpoint(run_group, x, use_reentrant=False), the last group included.
    ### BEGIN SOLUTION
    start = 0
    for size in split_sizes(len(blocks), segments):
        x = checkpoint(_run_blocks(blocks[start : start + size]), x, use_reentrant=False)
        start += size
    return x
    ### END SOLUTION

