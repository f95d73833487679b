"""Classic bug: PP groups strided by tp instead of tp·dp (pipeline stages taken from one DP replica's neighbours)."""

MODULE = "parallel"
REJECTED_BY = {"megatron_groups": ["correctness"]}

_correct_megatron_groups = megatron_groups


def megatron_groups(world_size, tp, pp):
    groups = _correct_megatron_groups(world_size, tp, pp)
    for rank, entry in groups.items():
        entry["pp"] = tuple(sorted({(rank % tp) + s * tp for s in range(pp)} | {rank}))
    return groups
