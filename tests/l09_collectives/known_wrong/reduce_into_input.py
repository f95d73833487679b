"""Accumulates in the caller's tensor (no copy): the sums are right but the input is overwritten, and every
later use of the gradients on that rank sees partial sums."""

MODULE = "ring"
REJECTED_BY = {"ring_reduce_scatter": ["correctness"], "ring_all_reduce": ["correctness"]}


def ring_reduce_scatter(tensor):
    x = _check_vector("tensor", tensor)
    p, r = dist.get_world_size(), dist.get_rank()
    chunks = ring_chunks(x.numel(), p)
    acc = x.data
    right, left = (r + 1) % p, (r - 1) % p
    for phase, _, send_c, recv_c in ring_schedule(p, r):
        if phase != "reduce_scatter":
            break
        (s0, s1), (r0, r1) = chunks[send_c], chunks[recv_c]
        got = torch.empty(r1 - r0, dtype=acc.dtype)
        _exchange(acc[s0:s1], got, right, left)
        acc[r0:r1] = got + acc[r0:r1]
    start, stop = chunks[r]
    return acc[start:stop].clone()
