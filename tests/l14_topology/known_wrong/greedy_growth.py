"""Greedy: start from the best pair and add the GPU that keeps the set best; it misses better sets."""

MODULE = "topology"
REJECTED_BY = {"best_gpu_set": ["correctness"]}


def best_gpu_set(topo, k, available=None):
    gpus = sorted(set(topo["gpus"] if available is None else available))
    if any(g not in topo["gpus"] for g in gpus):
        raise ValueError(f"available must list GPUs of topo, got {available!r}")
    k = check_int("k", k, 1)
    if k > len(gpus):
        raise ValueError(f"k must be <= {len(gpus)}, got {k}")

    def score(s):
        ranks = [link_rank(topo["links"][p]) for p in itertools.combinations(sorted(s), 2)]
        return (min(ranks, default=0), sum(ranks))

    if k == 1:
        return (gpus[0],)
    chosen = list(max(itertools.combinations(gpus, 2), key=lambda p: (score(p), [-g for g in p])))
    while len(chosen) < k:
        chosen.append(max((g for g in gpus if g not in chosen), key=lambda g: (score([*chosen, g]), -g)))
    return tuple(sorted(chosen))
