"""Off by one: P steps per phase instead of P - 1. The extra steps resend chunks the ring already finished: the
values stay right (each rank's own chunk is complete after P - 1 steps), every rank sends a chunk too many per
phase."""

MODULE = "ring"
REJECTED_BY = {"ring_schedule": ["correctness"], "ring_reduce_scatter": ["efficiency"],
               "ring_all_gather": ["efficiency"], "ring_all_reduce": ["efficiency"]}


def ring_schedule(world_size, rank):
    p = check_int("world_size", world_size, minimum=1)
    r = check_int("rank", rank)
    if r >= p:
        raise ValueError(f"rank must be < world_size = {p}, got {r}")
    if p == 1:
        return []
    rs = [("reduce_scatter", s, (r - s - 1) % p, (r - s - 2) % p) for s in range(p)]
    ag = [("all_gather", s, (r - s) % p, (r - s - 1) % p) for s in range(p)]
    return rs + ag
