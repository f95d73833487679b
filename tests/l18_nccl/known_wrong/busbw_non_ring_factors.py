"""Classic bug: broadcast and reduce given the ring factor (P-1)/P, all_to_all given 1 (it is the other way)."""

MODULE = "nccl"
REJECTED_BY = {"bus_bandwidth": ["correctness"]}

_correct_bus_bandwidth = bus_bandwidth


def bus_bandwidth(alg_bw, n_ranks, collective):
    swap = {"broadcast": "all_gather", "reduce": "all_gather", "all_to_all": "broadcast"}
    return _correct_bus_bandwidth(alg_bw, n_ranks, swap.get(collective, collective))
