"""Correct alternative: the receive is posted first (irecv), then a blocking send; the received chunk is added
in place (a + b is b + a bit for bit, so received + local keeps the ring's order)."""

MODULE = "ring"
ACCEPTED = ["ring_reduce_scatter", "ring_all_gather", "ring_all_reduce"]


def _exchange(send, recv, right, left):
    req = dist.irecv(recv, left) if recv.numel() else None
    if send.numel():
        dist.send(send.contiguous(), right)
    if req is not None:
        req.wait()


def ring_reduce_scatter(tensor):
    x = _check_vector("tensor", tensor)
    p, r = dist.get_world_size(), dist.get_rank()
    chunks = ring_chunks(x.numel(), p)
    acc = x.detach().clone()
    for phase, _, send_c, recv_c in ring_schedule(p, r):
        if phase != "reduce_scatter":
            break
        (s0, s1), (r0, r1) = chunks[send_c], chunks[recv_c]
        got = torch.empty(r1 - r0, dtype=acc.dtype)
        _exchange(acc[s0:s1], got, (r + 1) % p, (r - 1) % p)
        acc[r0:r1].add_(got)
    a, b = chunks[r]
    return acc[a:b].clone()
