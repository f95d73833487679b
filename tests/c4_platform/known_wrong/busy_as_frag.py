"""FragRatio read as the busy share (Σ running / N) instead of 1 − that."""

MODULE = "platform"
REJECTED_BY = {"frag_metrics": ["correctness"], "self_heal": ["correctness"]}

_original = frag_metrics


def frag_metrics(free_per_node, gpus_per_node, tp=8):
    got = _original(free_per_node, gpus_per_node, tp)
    return {**got, "frag_ratio": got["busy"] / got["total"]}
