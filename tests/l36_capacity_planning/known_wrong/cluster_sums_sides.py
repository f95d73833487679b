"""Classic bug: throughput and memory nodes added: the same nodes serve both requirements, take the max."""

MODULE = "capacity"
REJECTED_BY = {"cluster_size": ["correctness"]}

_correct_cluster = cluster_size


def cluster_size(qps, s_gen, ttft_s, tpot_s, node_tokens_per_s, node_b_max, gpus_per_node, headroom=1.25, dr=1.15):
    out = _correct_cluster(qps, s_gen, ttft_s, tpot_s, node_tokens_per_s, node_b_max, gpus_per_node, headroom, dr)
    out["nodes"] = out["nodes_throughput"] + out["nodes_memory"]
    out["gpus"] = out["nodes"] * gpus_per_node
    return out
