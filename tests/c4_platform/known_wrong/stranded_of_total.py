"""The stranded share taken of the whole cluster, and a division by zero when nothing is idle."""

MODULE = "platform"
REJECTED_BY = {"frag_metrics": ["correctness"], "self_heal": ["correctness"]}

_original = frag_metrics


def frag_metrics(free_per_node, gpus_per_node, tp=8):
    got = _original(free_per_node, gpus_per_node, tp)
    return {**got, "stranded_fraction": got["stranded_gpus"] / got["total"]}
