"""Correct alternatives: coordinates by explicit strides, groups keyed by the other coordinates, sets sorted by key."""

MODULE = "topology"
ACCEPTED = ["rank_coords", "parallel_groups", "best_gpu_set", "alltoall_flow_classes"]


def _strides(full, order):
    return {dim: math.prod(full[d] for d in order[: order.index(dim)]) for dim in order}


def rank_coords(rank, sizes, order=COURSE_ORDER):
    full, order = _check_layout(sizes, order)
    rank = check_int("rank", rank)
    if rank >= math.prod(full.values()):
        raise ValueError(f"rank must be < world size {math.prod(full.values())}, got {rank}")
    strides = _strides(full, order)
    return {dim: rank // strides[dim] % full[dim] for dim in DIMS}


def parallel_groups(sizes, kind, order=COURSE_ORDER):
    full, order = _check_layout(sizes, order)
    kind = _check_kind(kind)
    groups = {}
    for r in range(math.prod(full.values())):
        c = rank_coords(r, full, order)
        groups.setdefault(tuple(v for d, v in c.items() if d != kind), []).append(r)
    return sorted(groups.values())


def best_gpu_set(topo, k, available=None):
    gpus = sorted(set(topo["gpus"] if available is None else available))
    if any(g not in topo["gpus"] for g in gpus):
        raise ValueError(f"available must list GPUs of topo, got {available!r}")
    k = check_int("k", k, 1)
    if k > len(gpus):
        raise ValueError(f"k must be <= {len(gpus)}, got {k}")

    def key(s):
        ranks = [link_rank(topo["links"][(a, b)]) for a in s for b in s if a < b]
        return (-min(ranks) if ranks else 0, -sum(ranks), s)

    return sorted(itertools.combinations(gpus, k), key=key)[0]


def alltoall_flow_classes(n_nodes, gpus_per_node):
    n, g = check_int("n_nodes", n_nodes, 1), check_int("gpus_per_node", gpus_per_node, 1)
    world = n * g
    inter = world * (world - 1) - n * g * (g - 1)
    same = inter // g if g else 0
    return {"intra_node": n * g * (g - 1), "same_rail": same, "cross_rail": inter - same, "total": world * (world - 1)}
