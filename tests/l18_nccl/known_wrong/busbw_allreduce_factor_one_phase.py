"""Classic bug: bus bandwidth of all_reduce scaled by (P-1)/P, the all-gather factor, instead of 2(P-1)/P."""

MODULE = "nccl"
REJECTED_BY = {"bus_bandwidth": ["correctness"]}

_correct_bus_bandwidth = bus_bandwidth


def bus_bandwidth(alg_bw, n_ranks, collective):
    return _correct_bus_bandwidth(alg_bw, n_ranks, "all_gather" if collective == "all_reduce" else collective)
