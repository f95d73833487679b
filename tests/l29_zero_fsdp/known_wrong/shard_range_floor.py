"""Classic bug: S = numel // P (floor): the last numel % P elements belong to no rank."""

MODULE = "sharded_adam"
REJECTED_BY = {"shard_range": ["correctness"]}


def shard_range(numel, world_size, rank):
    n, world, r = check_int("numel", numel), check_int("world_size", world_size, 1), check_int("rank", rank)
    if r >= world:
        raise ValueError(f"rank must be < world_size, got {r}")
    size = n // world
    return r * size, (r + 1) * size
