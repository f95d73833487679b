"""No argument checks: a rank outside the ring, a 2-D or an integer tensor, a shard of the wrong length go
through (or fail somewhere deep) instead of a ValueError naming the argument."""

MODULE = "ring"
REJECTED_BY = {"ring_chunks": ["correctness"], "ring_schedule": ["correctness"], "ring_bytes_sent": ["correctness"],
               "ring_reduce_scatter": ["correctness"], "ring_all_gather": ["correctness"],
               "ring_all_reduce": ["correctness"]}


def _check_vector(name, tensor):
    return tensor


def ring_chunks(numel, world_size):
    base, extra = divmod(numel, world_size)
    bounds, start = [], 0
    for c in range(world_size):
        stop = start + base + (1 if c < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


def ring_bytes_sent(numel, world_size, rank, elem_bytes):
    if world_size == 1:
        return {"reduce_scatter": 0, "all_gather": 0, "total": 0}
    size = [b - a for a, b in ring_chunks(numel, world_size)]
    rs = (numel - size[rank % world_size]) * elem_bytes
    ag = (numel - size[(rank + 1) % world_size]) * elem_bytes
    return {"reduce_scatter": rs, "all_gather": ag, "total": rs + ag}


def ring_schedule(world_size, rank):
    p = check_int("world_size", world_size, minimum=1)
    rs = [("reduce_scatter", s, (rank - s - 1) % p, (rank - s - 2) % p) for s in range(p - 1)]
    ag = [("all_gather", s, (rank - s) % p, (rank - s - 1) % p) for s in range(p - 1)]
    return rs + ag


def ring_all_gather(shard, numel):
    p, r = dist.get_world_size(), dist.get_rank()
    chunks = ring_chunks(numel, p)
    start, stop = chunks[r]
    out = torch.empty(numel, dtype=shard.dtype)
    out[start:stop] = shard.reshape(-1)[: stop - start]
    right, left = (r + 1) % p, (r - 1) % p
    for phase, _, send_c, recv_c in ring_schedule(p, r):
        if phase != "all_gather":
            continue
        (s0, s1), (r0, r1) = chunks[send_c], chunks[recv_c]
        _exchange(out[s0:s1], out[r0:r1], right, left)
    return out
