"""Classic bug: DP innermost (rank = pp·tp·dp + tp_rank·dp + dp_rank): TP groups straddle NVLink nodes."""

MODULE = "parallel"
REJECTED_BY = {"megatron_groups": ["correctness"]}


def megatron_groups(world_size, tp, pp):
    world, tp, pp = check_int("world_size", world_size, 1), check_int("tp", tp, 1), check_int("pp", pp, 1)
    if world % (tp * pp):
        raise ValueError(f"world_size = {world} must be a multiple of tp·pp = {tp * pp}")
    dp = world // (tp * pp)
    groups = {}
    for rank in range(world):
        pp_rank, rest = divmod(rank, tp * dp)
        tp_rank, dp_rank = divmod(rest, dp)
        base = pp_rank * tp * dp
        groups[rank] = {
            "tp": tuple(base + t * dp + dp_rank for t in range(tp)),
            "dp": tuple(base + tp_rank * dp + d for d in range(dp)),
            "pp": tuple(s * tp * dp + tp_rank * dp + dp_rank for s in range(pp)),
        }
    return groups
