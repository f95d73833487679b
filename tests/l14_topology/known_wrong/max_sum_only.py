"""GPU sets scored by the sum of their links only: three NVLink pairs outweigh one SYS link."""

MODULE = "topology"
REJECTED_BY = {"best_gpu_set": ["correctness"]}


def best_gpu_set(topo, k, available=None):
    gpus = sorted(set(topo["gpus"] if available is None else available))
    if any(g not in topo["gpus"] for g in gpus):
        raise ValueError(f"available must list GPUs of topo, got {available!r}")
    k = check_int("k", k, 1)
    if k > len(gpus):
        raise ValueError(f"k must be <= {len(gpus)}, got {k}")
    return max(itertools.combinations(gpus, k),
               key=lambda s: (sum(link_rank(topo["links"][p]) for p in itertools.combinations(s, 2)), [-g for g in s]))
