"""Classic bug: all_gather and reduce_scatter given the all-reduce factor 2(P-1)/P (they are one phase each)."""

MODULE = "nccl"
REJECTED_BY = {"bus_bandwidth": ["correctness"]}

_correct_bus_bandwidth = bus_bandwidth


def bus_bandwidth(alg_bw, n_ranks, collective):
    if collective in ("all_gather", "reduce_scatter"):
        collective = "all_reduce"
    return _correct_bus_bandwidth(alg_bw, n_ranks, collective)
