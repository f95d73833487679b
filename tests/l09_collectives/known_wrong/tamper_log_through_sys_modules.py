"""Tampering with the grader's own report: the solution's ring, then a whole extra copy of the tensor sent to the
next rank on every call (waste the efficiency tests exist to catch), then the two log entries of that exchange
deleted through ``sys.modules``. The log lives in the learner's process, so only the audit (before any of the
submission runs) can stop it; without it this earns the efficiency points."""

MODULE = "ring"
REJECTED_BY = {"ring_all_reduce": ["correctness", "efficiency"]}

_ring_all_reduce = ring_all_reduce


def ring_all_reduce(tensor):
    import sys

    out = _ring_all_reduce(tensor)
    p, r = dist.get_world_size(), dist.get_rank()
    extra = torch.empty_like(out)
    sent = dist.isend(out, (r + 1) % p)
    dist.recv(extra, (r - 1) % p)
    sent.wait()
    del sys.modules["grader.instrument.ranks"]._CHILD.log[-2:]
    return out
