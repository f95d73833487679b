"""Classic bug: T_life = S_gen·TPOT: the wait for the first token holds KV memory too (480 in flight, not 504)."""

MODULE = "capacity"
REJECTED_BY = {"cluster_size": ["correctness"]}

_correct_cluster = cluster_size


def cluster_size(qps, s_gen, ttft_s, tpot_s, node_tokens_per_s, node_b_max, gpus_per_node, headroom=1.25, dr=1.15):
    _correct_cluster(qps, s_gen, ttft_s, tpot_s, node_tokens_per_s, node_b_max, gpus_per_node, headroom, dr)
    return _correct_cluster(qps, s_gen, 0.0, tpot_s, node_tokens_per_s, node_b_max, gpus_per_node, headroom, dr)
