"""Correct values, P times the bytes: every step sends the whole working tensor and the receiver keeps only the
scheduled chunk. The ring's point, one chunk per step, is lost."""

MODULE = "ring"
REJECTED_BY = {"ring_reduce_scatter": ["efficiency"], "ring_all_gather": ["efficiency"],
               "ring_all_reduce": ["efficiency"]}


def _ring_steps(buf, phase, add):
    p, r = dist.get_world_size(), dist.get_rank()
    chunks = ring_chunks(buf.numel(), p)
    for ph, _, _, recv_c in ring_schedule(p, r):
        if ph != phase:
            continue
        got = torch.empty_like(buf)
        req = dist.isend(buf.clone(), (r + 1) % p)
        dist.recv(got, (r - 1) % p)
        req.wait()
        a, b = chunks[recv_c]
        buf[a:b] = got[a:b] + buf[a:b] if add else got[a:b]
    return buf


def ring_reduce_scatter(tensor):
    x = _check_vector("tensor", tensor)
    p, r = dist.get_world_size(), dist.get_rank()
    acc = _ring_steps(x.detach().clone(), "reduce_scatter", True)
    a, b = ring_chunks(x.numel(), p)[r]
    return acc[a:b].clone()


def ring_all_gather(shard, numel):
    x = _check_vector("shard", shard)
    p, r = dist.get_world_size(), dist.get_rank()
    a, b = ring_chunks(numel, p)[r]
    if x.numel() != b - a:
        raise ValueError(f"shard must hold {b - a} elements, got {x.numel()}")
    out = torch.zeros(numel, dtype=x.dtype)
    out[a:b] = x
    return _ring_steps(out, "all_gather", False)
