"""The lecture's "naive master" (§2.2): every rank sends its tensor to rank 0, which adds and sends the sum back.
Right values, but rank 0 sends (P - 1)·N elements and whole tensors at once."""

MODULE = "ring"
REJECTED_BY = {"ring_all_reduce": ["efficiency"]}


def ring_all_reduce(tensor):
    x = _check_vector("tensor", tensor)
    p, r = dist.get_world_size(), dist.get_rank()
    if r == 0:
        total = x.detach().clone()
        parts = []
        for src in range(1, p):
            buf = torch.empty_like(x)
            dist.recv(buf, src)
            parts.append(buf)
        # the ring's order for every chunk would need the chunks; the master adds per chunk in that order
        chunks = ring_chunks(x.numel(), p)
        everyone = [total] + parts
        out = torch.empty_like(x)
        for c, (a, b) in enumerate(chunks):
            acc = everyone[(c + 1) % p][a:b].clone()
            for k in range(2, p + 1):
                acc = acc + everyone[(c + k) % p][a:b]
            out[a:b] = acc
        for dst in range(1, p):
            dist.send(out, dst)
        return out
    dist.send(x.detach().contiguous(), 0)
    out = torch.empty_like(x)
    dist.recv(out, 0)
    return out
