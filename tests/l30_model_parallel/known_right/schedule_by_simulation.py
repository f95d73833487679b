"""Correct alternative: 1F1B as "backward when p−s are in flight, else forward"; groups from a 3-D grid."""

MODULE = "parallel"
ACCEPTED = ["one_f_one_b_schedule", "megatron_groups"]


def one_f_one_b_schedule(p, m, stage):
    p, m, stage = check_int("p", p, 1), check_int("m", m, 1), check_int("stage", stage)
    if stage >= p:
        raise ValueError(f"stage must be < p = {p}, got {stage}")
    cap, n_f, n_b, out = p - stage, 0, 0, []
    while n_b < m:
        if n_f < m and n_f - n_b < cap:
            out.append(("F", n_f))
            n_f += 1
            if n_f - n_b < cap and n_f < m:
                continue
        if n_f - n_b == cap or n_f == m:
            out.append(("B", n_b))
            n_b += 1
    return out


def megatron_groups(world_size, tp, pp):
    world, tp, pp = check_int("world_size", world_size, 1), check_int("tp", tp, 1), check_int("pp", pp, 1)
    if world % (tp * pp):
        raise ValueError(f"world_size = {world} must be a multiple of tp·pp = {tp * pp}")
    dp = world // (tp * pp)
    grid = [[[q * tp * dp + d * tp + t for t in range(tp)] for d in range(dp)] for q in range(pp)]
    out = {}
    for q in range(pp):
        for d in range(dp):
            for t in range(tp):
                out[grid[q][d][t]] = {
                    "tp": tuple(grid[q][d]),
                    "dp": tuple(grid[q][j][t] for j in range(dp)),
                    "pp": tuple(grid[k][d][t] for k in range(pp)),
                }
    return out
