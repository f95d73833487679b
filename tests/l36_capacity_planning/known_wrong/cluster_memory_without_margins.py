"""Classic bug: headroom and redundancy applied to the throughput side only; the memory side is left bare."""

MODULE = "capacity"
REJECTED_BY = {"cluster_size": ["correctness"]}

_correct_cluster = cluster_size


def cluster_size(qps, s_gen, ttft_s, tpot_s, node_tokens_per_s, node_b_max, gpus_per_node, headroom=1.25, dr=1.15):
    out = _correct_cluster(qps, s_gen, ttft_s, tpot_s, node_tokens_per_s, node_b_max, gpus_per_node, headroom, dr)
    out["nodes_memory"] = ceil_slack(out["concurrency"] / node_b_max)
    out["nodes"] = max(out["nodes_throughput"], out["nodes_memory"])
    out["gpus"] = out["nodes"] * gpus_per_node
    return out
