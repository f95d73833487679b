"""A hidden channel: every rank puts its tensor into a TCPStore of its own making, each adds the chunks up in the
ring's order from what it reads back (a master-free gather), and ring-shaped chunks of zeros go through send/recv
so that the comm log shows exactly the ring's bytes. Before the audit refused stores, it earned every point of the
exercise (checked); in batch grading the judge's count of the loopback (about 6x the logged bytes) catches it too."""

MODULE = "ring"
REJECTED_BY = {"ring_all_reduce": ["correctness", "efficiency"]}

_PORT = [29700]


def ring_all_reduce(tensor):
    x = _check_vector("tensor", tensor)
    p, r = dist.get_world_size(), dist.get_rank()
    _PORT[0] += 1
    store = dist.TCPStore("127.0.0.1", _PORT[0], p, is_master=r == 0)
    store.set(f"x{r}", x.numpy().tobytes())
    xs = [torch.frombuffer(bytearray(store.get(f"x{s}")), dtype=x.dtype) if x.numel() else x.clone()
          for s in range(p)]
    out = torch.empty_like(x)
    bounds = ring_chunks(x.numel(), p)
    for c, (a, b) in enumerate(bounds):
        acc = xs[(c + 1) % p][a:b].clone()
        for k in range(2, p + 1):
            acc = acc + xs[(c + k) % p][a:b]
        out[a:b] = acc
    for _, _, send_c, recv_c in ring_schedule(p, r):  # the decoy: the ring's bytes, zeros
        s, t = bounds[send_c], bounds[recv_c]
        _exchange(torch.zeros(s[1] - s[0], dtype=x.dtype), torch.empty(t[1] - t[0], dtype=x.dtype),
                  (r + 1) % p, (r - 1) % p)
    return out
