"""No channel at all: each rank rebuilds the other ranks' inputs from the seeds written in the shipped test
(tests/l09_collectives/test_ring.py builds rank r's tensor of n elements from seed 1000·n + r), tells the two kinds
of input apart by rebuilding its own, adds the chunks up in the ring's order, and sends the ring's zeros for the log
and the wire. Nothing it does is refused and every byte it sends is counted: before the inputs were secret it earned
every correctness point (checked). Now each rank's input comes from a seed drawn in that rank alone
(grader.kit.rank_seed), which no other process ever holds."""

MODULE = "ring"
REJECTED_BY = {"ring_all_reduce": ["correctness"]}
BOUNDARY = "grader/instrument/ranks.py::rank_seed"  # the test's inputs, not the audit


def _rebuilt(kind, dtype, numel, rank):
    g = torch.Generator().manual_seed(1000 * numel + rank)
    if kind == "integers":
        return torch.randint(-2**19, 2**19, (numel,), generator=g).to(dtype)
    scale = 10.0 ** torch.empty(numel, dtype=torch.float64).uniform_(-8, 8, generator=g)
    return (torch.randn(numel, dtype=torch.float64, generator=g) * scale).to(dtype)


def ring_all_reduce(tensor):
    x = _check_vector("tensor", tensor)
    p, r = dist.get_world_size(), dist.get_rank()
    kind = next((k for k in ("integers", "wide") if torch.equal(_rebuilt(k, x.dtype, x.numel(), r), x)), None)
    xs = [_rebuilt(kind, x.dtype, x.numel(), s) if kind else x for s in range(p)]
    bounds = ring_chunks(x.numel(), p)
    for _, _, send_c, recv_c in ring_schedule(p, r):  # the decoy: the ring's bytes, zeros
        s, t = bounds[send_c], bounds[recv_c]
        _exchange(torch.zeros(s[1] - s[0], dtype=x.dtype), torch.empty(t[1] - t[0], dtype=x.dtype),
                  (r + 1) % p, (r - 1) % p)
    out = torch.empty_like(x)
    for c, (a, b) in enumerate(bounds):
        acc = xs[(c + 1) % p][a:b].clone()
        for k in range(2, p + 1):
            acc = acc + xs[(c + k) % p][a:b]
        out[a:b] = acc
    return out
