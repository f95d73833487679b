"""Calls the library's collective instead of building the ring: refused on the ranks (point-to-point only)."""

MODULE = "ring"
REJECTED_BY = {"ring_all_reduce": ["correctness", "efficiency"]}


def ring_all_reduce(tensor):
    out = _check_vector("tensor", tensor).detach().clone()
    dist.all_reduce(out)
    return out
