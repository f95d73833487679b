"""No argument checks: right values for valid input, bad ranks, sizes, codes and counts not refused."""

MODULE = "topology"
REJECTED_BY = {
    "rank_coords": ["correctness"],
    "parallel_groups": ["correctness"],
    "groups_crossing_nodes": ["correctness"],
    "parse_topo": ["correctness"],
    "link_rank": ["correctness"],
    "best_gpu_set": ["correctness"],
    "alltoall_flow_classes": ["correctness"],
}


def _check_layout(sizes, order):
    return {dim: sizes.get(dim, 1) for dim in DIMS}, tuple(order)


def _check_kind(kind):
    return kind


def check_int(name, value, minimum=0):
    return value


def rank_coords(rank, sizes, order=COURSE_ORDER):
    full, coords = {dim: sizes.get(dim, 1) for dim in DIMS}, {}
    for dim in order:
        rank, coords[dim] = divmod(rank, full[dim])
    return {dim: coords.get(dim, 0) for dim in DIMS}


_right_parse = parse_topo


def parse_topo(text):
    topo = _right_parse(text) if isinstance(text, str) and "GPU0" in text else {}
    return topo


def link_rank(code):
    return 100 + int(code[2:]) if str(code).startswith("NV") and code[2:].isdigit() else PCIE_RANKS.get(code, 0)
