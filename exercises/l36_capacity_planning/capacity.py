"""L36 · Online inference capacity planning: KV per GPU, the KV pool, B_max, and cluster size.

Lecture 36 (06_LLM推理系统与性能工程/36_在线推理容量规划_SLO治理与生产故障诊断.md) splits each GPU's
memory into four ledgers: weights (P·b/TP), runtime (CUDA context, graphs, activations), a safety
buffer (what gpu_memory_utilization = α leaves out) and the paged KV pool, the rest:

    pool = floor(V·α) − weights − runtime

Tensor parallelism splits the KV heads across GPUs; with more GPUs than KV heads each GPU keeps one
head (vLLM replicates them), so a GPU caches 2·L·max(1, H_kv/TP)·d_head·b bytes per token. A node
holds B_max = floor(pool / (KV per token per GPU · S_total)) requests of S_total tokens.

Cluster size is the larger of two requirements, each with the same margins (headroom for bursts,
redundancy for failures), rounded up to whole nodes:
* throughput: QPS·S_gen generated tokens/s over one node's sustained tokens/s;
* memory: Little's law, concurrency = QPS·T_life with T_life = TTFT + S_gen·TPOT, over B_max per node.
Course case (Qwen2.5-72B, 8×H800): QPS 40, S_gen 400, TTFT 0.6 s, TPOT 30 ms, 1600 tok/s/node →
T_life 12.6 s, 504 in flight, 10 × 1.25 × 1.15 = 14.375 → 15 nodes (120 GPUs).

Conventions: exact int bytes; times in seconds; invalid arguments raise ValueError naming the argument.
"""

from __future__ import annotations

import math

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

SLACK = 1e-9  # round up, ignoring float noise: 8 × 1.25 × 1.2 is 12, not 12.000000000000002


def _check_real(name: str, value: object, *, positive: bool = False, at_least: float = 0.0) -> float:
    """``value`` as a finite float >= ``at_least`` (> 0 when ``positive``), or ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < at_least or (positive and value <= 0):
        raise ValueError(f"{name} must be {'> 0' if positive else f'>= {at_least}'}, got {value}")
    return float(value)


def ceil_slack(x: float) -> int:
    """Round up, treating x within SLACK of an integer as that integer."""
    return math.ceil(x - SLACK)


# ---------------------------------------------------------------------------------------------
# 1. KV cache per token, per GPU
# ---------------------------------------------------------------------------------------------


def kv_bytes_per_token_per_gpu(n_layers: int, n_kv_heads: int, head_dim: int, tp: int, elem_bytes: int = 2) -> int:
    """Bytes of K and V one GPU caches per token under tensor parallelism ``tp``.

    Each GPU keeps n_kv_heads/tp heads, or one head (replicated) when tp > n_kv_heads; tp and
    n_kv_heads must divide one another. LLaMA-3-70B / Qwen2.5-72B (80 layers, 8 KV heads of 128),
    bf16: TP=8 → 40,960 B; TP=16 → still 40,960 B.
    """
    # TODO: validate (tp, n_kv_heads divide one another), then K and V of this GPU's heads.
    raise NotImplementedError("TODO: validate (tp, n_kv_heads divide one another), then K and V of this GPU's heads.")


# ---------------------------------------------------------------------------------------------
# 2. The KV pool and B_max
# ---------------------------------------------------------------------------------------------


def kv_pool_bytes(gpu_bytes: int, mem_util: float, weight_bytes: int, runtime_bytes: int) -> int:
    """Bytes left for the paged KV cache on one GPU: floor(gpu_bytes · mem_util) − weights − runtime.

    ``mem_util`` is vLLM's gpu_memory_utilization, a share of the whole GPU (0 < α ≤ 1). Course:
    80e9 B, α = 0.90, weights 18e9, runtime 4e9 → 50e9 B. ValueError when nothing is left.
    """
    # TODO: validate, then the four ledgers: budget − weights − runtime (must stay > 0).
    raise NotImplementedError('TODO: validate, then the four ledgers: budget − weights − runtime (must stay > 0).')


def b_max(pool_bytes: int, kv_per_token_per_gpu: int, s_total: int) -> int:
    """Requests of ``s_total`` tokens (prompt + generation) one GPU's pool holds at once (floor).

    Course tiny model: 1 MiB pool, 1024 B/token, 512 tokens → 2. Qwen2.5-72B TP8 (40,960 B/token/GPU),
    50e9 B pool: S=2000 → 610, S=17000 → 71.
    """
    # TODO: validate, then whole requests that fit in the pool.
    raise NotImplementedError('TODO: validate, then whole requests that fit in the pool.')


# ---------------------------------------------------------------------------------------------
# 3. Cluster size
# ---------------------------------------------------------------------------------------------


def cluster_size(
    qps: float,
    s_gen: int,
    ttft_s: float,
    tpot_s: float,
    node_tokens_per_s: float,
    node_b_max: int,
    gpus_per_node: int,
    headroom: float = 1.25,
    dr: float = 1.15,
) -> dict[str, float | int]:
    """Nodes and GPUs a service needs: the larger of the throughput and the memory requirement.

    Returns ``{"t_life_s": TTFT + S_gen·TPOT, "concurrency": QPS·t_life, "nodes_throughput":
    ceil(QPS·S_gen / node_tokens_per_s · headroom · dr), "nodes_memory": ceil(ceil(concurrency /
    node_b_max) · headroom · dr), "nodes": the max, "gpus": nodes · gpus_per_node}``; every ceil
    ignores float noise below 1e-9 (``ceil_slack``). Course case: 12.6, 504, 15, 2, 15, 120.
    """
    # TODO: validate, then both sides (tokens/s, Little's law), margins on both, the max.
    raise NotImplementedError("TODO: validate, then both sides (tokens/s, Little's law), margins on both, the max.")
