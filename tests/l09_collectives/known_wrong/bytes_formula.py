"""The textbook formula 2(P-1)/P·N·e in integer arithmetic for every rank: right when P divides N, wrong for
uneven chunks (ranks send different amounts)."""

MODULE = "ring"
REJECTED_BY = {"ring_bytes_sent": ["correctness"]}


def ring_bytes_sent(numel, world_size, rank, elem_bytes):
    n = check_int("numel", numel)
    p = check_int("world_size", world_size, minimum=1)
    r = check_int("rank", rank)
    if r >= p:
        raise ValueError(f"rank must be < world_size = {p}, got {r}")
    e = check_int("elem_bytes", elem_bytes, minimum=1)
    half = (p - 1) * n // p * e
    return {"reduce_scatter": half, "all_gather": half, "total": 2 * half}
