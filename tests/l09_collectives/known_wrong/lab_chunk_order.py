"""Lecture 09 lab 7.1's schedule: the reduce-scatter sends chunk (r - s) at step s, so rank r ends holding the sum
of chunk r + 1, not chunk r (and the all-gather then forwards unfinished chunks)."""

MODULE = "ring"
REJECTED_BY = {"ring_schedule": ["correctness"], "ring_reduce_scatter": ["correctness", "efficiency"],
               "ring_all_gather": ["correctness", "efficiency"], "ring_all_reduce": ["correctness", "efficiency"]}


def ring_schedule(world_size, rank):
    p = check_int("world_size", world_size, minimum=1)
    r = check_int("rank", rank)
    if r >= p:
        raise ValueError(f"rank must be < world_size = {p}, got {r}")
    rs = [("reduce_scatter", s, (r - s) % p, (r - s - 1) % p) for s in range(p - 1)]
    ag = [("all_gather", s, (r - s + 1) % p, (r - s) % p) for s in range(p - 1)]
    return rs + ag
