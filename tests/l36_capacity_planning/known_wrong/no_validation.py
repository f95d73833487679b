"""Classic bug: no argument checks: 8 KV heads over 3 GPUs, α = 1.5 or a negative QPS come back as numbers."""

MODULE = "capacity"
REJECTED_BY = {
    "kv_bytes_per_token_per_gpu": ["correctness"],
    "kv_pool_bytes": ["correctness"],
    "b_max": ["correctness"],
    "cluster_size": ["correctness"],
}


def kv_bytes_per_token_per_gpu(n_layers, n_kv_heads, head_dim, tp, elem_bytes=2):
    return 2 * n_layers * max(1, n_kv_heads // max(tp, 1)) * head_dim * elem_bytes


def kv_pool_bytes(gpu_bytes, mem_util, weight_bytes, runtime_bytes):
    return math.floor(gpu_bytes * mem_util) - weight_bytes - runtime_bytes


def b_max(pool_bytes, kv_per_token_per_gpu, s_total):
    return pool_bytes // (kv_per_token_per_gpu * s_total) if kv_per_token_per_gpu * s_total else 0


def cluster_size(qps, s_gen, ttft_s, tpot_s, node_tokens_per_s, node_b_max, gpus_per_node, headroom=1.25, dr=1.15):
    t_life = ttft_s + s_gen * tpot_s
    conc = qps * t_life
    thr = ceil_slack(qps * s_gen / node_tokens_per_s * headroom * dr) if node_tokens_per_s else 0
    mem = ceil_slack(ceil_slack(conc / node_b_max) * headroom * dr) if node_b_max else 0
    return {
        "t_life_s": t_life,
        "concurrency": conc,
        "nodes_throughput": thr,
        "nodes_memory": mem,
        "nodes": max(thr, mem),
        "gpus": max(thr, mem) * gpus_per_node,
    }
