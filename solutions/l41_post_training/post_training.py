"""L41 · Post-training ledgers: RLHF's resident models, LoRA parameters, GAE and GRPO advantages.

Lecture 41 (08_Post-Training与相邻Infra/41_SFT_LoRA与RLHF系统负载与资源评估.md).

Static memory per algorithm, one model per line, in bytes per parameter Ψ of the policy (every model
the same size): a trained model holds bf16 weights and gradients and fp32 Adam states, 16 B/param;
a frozen one holds bf16 weights, 2 B/param.
    SFT   actor 16                                   = 16 B/param
    PPO   actor 16 + critic 16 + reference 2 + reward 2 = 36 B/param (70B → 2.52 TB)
    DPO   actor 16 + reference 2                     = 18 B/param
    GRPO  actor 16 + reference 2                     = 18 B/param (16 without a resident reference)
A reference model is resident only when its log-probabilities are computed online
(``frozen_reference=True``); precomputed offline, it costs nothing on the GPUs.

LoRA adds B·A (A: r × d_in, B: d_out × r) beside each target matrix: r·(d_in + d_out) parameters per
matrix and layer. With square W_q and W_v of size h that is 4·L·h·r (70B, r=16: 41,943,040); with
GQA, W_v is h × (H_kv·d_head) and the count is smaller.

Advantages: GAE (Schulman et al. 2015), δ_t = r_t + γ·V(s_{t+1}) − V(s_t), A_t = δ_t + γλ·A_{t+1};
GRPO (Shao et al. 2024) normalizes each group of G sampled answers to one prompt:
A_i = (r_i − mean) / (std + ε), std the population standard deviation of the group.

Conventions: exact int bytes and parameter counts; invalid arguments raise ValueError naming the argument.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

ALGORITHMS = ("sft", "ppo", "dpo", "grpo")
TRAINED_BYTES = 16  # bf16 weights 2 + bf16 gradients 2 + fp32 master, m, v 12
FROZEN_BYTES = 2  # bf16 weights only


def _check_reals(name: str, values: object, length: int | None = None) -> list[float]:
    """A list of finite floats (of ``length`` items when given), or ValueError naming ``name``."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise ValueError(f"{name} must be a sequence of numbers, got {values!r}")
    out = [float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)]
    if len(out) != len(values) or (length is not None and len(out) != length):
        want = f"{length} finite numbers" if length is not None else "finite numbers"
        raise ValueError(f"{name} must hold {want}, got {values!r}")
    return out


def _check_unit_interval(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
    return float(value)


# ---------------------------------------------------------------------------------------------
# 1. Resident models of each algorithm
# ---------------------------------------------------------------------------------------------


def rlhf_static_bytes(n_params: int, algorithm: str, frozen_reference: bool = True) -> dict[str, int]:
    """Static GPU memory of ``algorithm``'s resident models, itemized by model, in bytes.

    Keys: "actor" (trained) always; "critic" (trained) and "reward" (frozen) for PPO; "reference"
    (frozen) for PPO, DPO and GRPO when ``frozen_reference``; "total", the sum. 70B PPO → 2.52e12 B.
    """
    # TODO: validate, then one line per resident model (trained 16 B, frozen 2) + total.
    ### BEGIN SOLUTION
    n = check_int("n_params", n_params)
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
    if not isinstance(frozen_reference, bool):
        raise ValueError(f"frozen_reference must be True or False, got {frozen_reference!r}")
    parts = {"actor": TRAINED_BYTES * n}  # the policy being trained
    if algorithm == "ppo":
        parts["critic"] = TRAINED_BYTES * n  # value model, trained alongside
        parts["reward"] = FROZEN_BYTES * n  # reward model, inference only
    if algorithm != "sft" and frozen_reference:
        parts["reference"] = FROZEN_BYTES * n  # KL anchor / DPO's π_ref, inference only
    parts["total"] = sum(parts.values())
    return parts
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 2. LoRA parameters
# ---------------------------------------------------------------------------------------------


def lora_params(n_layers: int, target_shapes: Sequence[tuple[int, int]], rank: int) -> int:
    """Trainable parameters of LoRA adapters of ``rank`` on each (d_in, d_out) target of every layer.

    Per target and layer: A is rank × d_in, B is d_out × rank. LLaMA-3-70B, r=16, square W_q and
    W_v [(8192, 8192)] × 2 → 41,943,040; with its real W_v (8192 → 1024) → 32,768,000.
    """
    # TODO: validate, then r·(d_in + d_out) per target, summed, times the layers.
    ### BEGIN SOLUTION
    layers, r = check_int("n_layers", n_layers), check_int("rank", rank, 1)
    if isinstance(target_shapes, str | bytes) or not isinstance(target_shapes, Sequence):
        raise ValueError(f"target_shapes must be a sequence of (d_in, d_out) pairs, got {target_shapes!r}")
    per_layer = 0
    for i, shape in enumerate(target_shapes):
        if not isinstance(shape, Sequence) or len(shape) != 2:
            raise ValueError(f"target_shapes[{i}] must be a (d_in, d_out) pair, got {shape!r}")
        d_in, d_out = (check_int(f"target_shapes[{i}]", d, 1) for d in shape)
        per_layer += r * d_in + d_out * r  # A: r × d_in, B: d_out × r
    return layers * per_layer
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 3. Advantages: GAE (PPO) and group-normalized (GRPO)
# ---------------------------------------------------------------------------------------------


def gae_advantages(rewards: Sequence[float], values: Sequence[float], gamma: float, lam: float) -> list[float]:
    """Generalized advantage estimates of one trajectory of T steps.

    ``values`` holds T + 1 entries: V(s_0) ... V(s_T), the last one bootstraps what follows (0.0 for
    a terminal state). δ_t = r_t + γ·V(s_{t+1}) − V(s_t); A_t = δ_t + γλ·A_{t+1}, A_T = 0.
    λ = 0 gives the TD residuals; λ = 1 the discounted returns minus V(s_t).
    """
    # TODO: validate (T + 1 values, γ and λ in [0, 1]), then sweep backwards.
    ### BEGIN SOLUTION
    r = _check_reals("rewards", rewards)
    v = _check_reals("values", values, len(r) + 1)
    gamma, lam = _check_unit_interval("gamma", gamma), _check_unit_interval("lam", lam)
    advantages, running = [0.0] * len(r), 0.0
    for t in reversed(range(len(r))):
        delta = r[t] + gamma * v[t + 1] - v[t]  # TD residual
        running = delta + gamma * lam * running
        advantages[t] = running
    return advantages
    ### END SOLUTION


def grpo_advantages(rewards: Sequence[float], group_size: int, eps: float = 1e-6) -> list[float]:
    """Group-relative advantages: rewards of consecutive groups of ``group_size`` answers (one prompt each).

    A_i = (r_i − mean_g) / (std_g + eps), with the mean and *population* standard deviation of r_i's
    own group. [1, 0, 0, 1], G=4, eps → 0: [1, −1, −1, 1]. A group of equal rewards gets zeros.
    """
    # TODO: validate (whole groups, eps >= 0), then normalize each group on its own.
    ### BEGIN SOLUTION
    g = check_int("group_size", group_size, 1)
    r = _check_reals("rewards", rewards)
    if len(r) % g:
        raise ValueError(f"rewards holds {len(r)} values, not a multiple of group_size = {g}")
    if isinstance(eps, bool) or not isinstance(eps, int | float) or not 0 <= eps < math.inf:
        raise ValueError(f"eps must be a number >= 0, got {eps!r}")
    out = []
    for start in range(0, len(r), g):
        group = r[start : start + g]
        mean = sum(group) / g
        std = math.sqrt(sum((x - mean) ** 2 for x in group) / g)  # population std (divide by G)
        out += [0.0 if std + eps == 0 else (x - mean) / (std + eps) for x in group]
    return out
    ### END SOLUTION
