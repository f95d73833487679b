"""The order read backwards: order[-1] varies fastest, so the course's rank 13 becomes dp 1 instead of tp 5."""

MODULE = "topology"
REJECTED_BY = {"rank_coords": ["correctness"]}


def rank_coords(rank, sizes, order=COURSE_ORDER):
    full, order = _check_layout(sizes, order)
    rank = check_int("rank", rank)
    if rank >= math.prod(full.values()):
        raise ValueError(f"rank must be < world size {math.prod(full.values())}, got {rank}")
    coords = {}
    for dim in reversed(order):
        rank, coords[dim] = divmod(rank, full[dim])
    return {dim: coords[dim] for dim in DIMS}
