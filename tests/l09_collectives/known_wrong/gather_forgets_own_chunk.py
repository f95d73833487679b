"""The all-gather never writes the rank's own shard into the output: its chunk goes round the ring as zeros."""

MODULE = "ring"
REJECTED_BY = {"ring_all_gather": ["correctness"], "ring_all_reduce": ["correctness"]}


def ring_all_gather(shard, numel):
    x = _check_vector("shard", shard)
    n = check_int("numel", numel)
    p, r = dist.get_world_size(), dist.get_rank()
    chunks = ring_chunks(n, p)
    start, stop = chunks[r]
    if x.numel() != stop - start:
        raise ValueError(f"shard must hold {stop - start} elements, got {x.numel()}")
    out = torch.zeros(n, dtype=x.dtype)
    right, left = (r + 1) % p, (r - 1) % p
    for phase, _, send_c, recv_c in ring_schedule(p, r):
        if phase != "all_gather":
            continue
        (s0, s1), (r0, r1) = chunks[send_c], chunks[recv_c]
        _exchange(out[s0:s1], out[r0:r1], right, left)
    return out
