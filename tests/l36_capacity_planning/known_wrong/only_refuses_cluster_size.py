"""Refuses everything: a ValueError naming every parameter, whatever the arguments (it passes the bad-argument
table on its own; its points count only once its values are right, grader.core.failures.gate)."""

MODULE = "capacity"
REJECTED_BY = {"cluster_size": ["correctness"]}


def cluster_size(qps, s_gen, ttft_s, tpot_s, node_tokens_per_s, node_b_max, gpus_per_node, headroom=1.25, dr=1.15):
    raise ValueError("qps, s_gen, ttft_s, tpot_s, node_tokens_per_s, node_b_max, gpus_per_node, headroom or dr "
                     "is invalid")
