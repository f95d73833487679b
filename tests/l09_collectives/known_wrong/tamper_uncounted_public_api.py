"""Tampering with the grader's public API: the grader's ``uncounted()`` (meant for its own reference calls) imported
from ``grader.kit`` to hide a refused torch all-gather of every rank's tensor; each chunk is then summed locally in
the ring's order. Right values with no ring and no counted traffic: without the audit it earns the correctness
points of ring_reduce_scatter."""

MODULE = "ring"
REJECTED_BY = {"ring_reduce_scatter": ["correctness", "efficiency"]}


def ring_reduce_scatter(tensor):
    from grader.kit import uncounted

    x = _check_vector("tensor", tensor)
    p, r = dist.get_world_size(), dist.get_rank()
    with uncounted():
        xs = [torch.empty_like(x) for _ in range(p)]
        dist.all_gather(xs, x.detach().contiguous())
    a, b = ring_chunks(x.numel(), p)[r]
    acc = xs[(r + 1) % p][a:b].clone()
    for k in range(2, p + 1):
        acc = acc + xs[(r + k) % p][a:b]
    return acc
