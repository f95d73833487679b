"""Every kind's groups taken as blocks of consecutive ranks: right for the innermost dim (TP), wrong for DP and PP."""

MODULE = "topology"
REJECTED_BY = {"parallel_groups": ["correctness"], "groups_crossing_nodes": ["correctness"]}


def parallel_groups(sizes, kind, order=COURSE_ORDER):
    full, order = _check_layout(sizes, order)
    kind = _check_kind(kind)
    world, size = math.prod(full.values()), full[kind]
    return [list(range(start, start + size)) for start in range(0, world, size)]
