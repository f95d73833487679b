"""Tampering with the grader's own report: the naive master of master_gather.py (right values, whole tensors sent to
and from rank 0), then the rank's communication log rewritten through ``sys.modules`` to read like a ring's one-chunk
sends. The log lives in the learner's process, so only the audit (before any of the submission runs) can stop it;
without it this earns the efficiency points."""

MODULE = "ring"
REJECTED_BY = {"ring_all_reduce": ["correctness", "efficiency"]}


def _naive_master(x):
    p, r = dist.get_world_size(), dist.get_rank()
    if r != 0:
        dist.send(x.detach().contiguous(), 0)
        out = torch.empty_like(x)
        dist.recv(out, 0)
        return out
    everyone = [x.detach().clone()]
    for src in range(1, p):
        buf = torch.empty_like(x)
        dist.recv(buf, src)
        everyone.append(buf)
    out = torch.empty_like(x)
    for c, (a, b) in enumerate(ring_chunks(x.numel(), p)):  # the ring's order of addition, per chunk
        acc = everyone[(c + 1) % p][a:b].clone()
        for k in range(2, p + 1):
            acc = acc + everyone[(c + k) % p][a:b]
        out[a:b] = acc
    for dst in range(1, p):
        dist.send(out, dst)
    return out


def ring_all_reduce(tensor):
    import sys

    x = _check_vector("tensor", tensor)
    log = sys.modules["grader.kit.ranks"]._CHILD.log
    mark = len(log)
    out = _naive_master(x)
    p, r, e = dist.get_world_size(), dist.get_rank(), x.element_size()
    del log[mark:]
    left, chunk = ring_bytes_sent(x.numel(), p, r, e)["total"], -(-x.numel() // p) * e
    while left > 0:
        log.append(("send", min(chunk, left)))
        left -= min(chunk, left)
    return out
