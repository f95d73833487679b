"""Bookkeeping bug: dropped_tokens lists every token that lost any choice, not the tokens that lost all of them
(a token with one kept expert still goes through the layer)."""

MODULE = "moe"
REJECTED_BY = {"apply_capacity": ["correctness"]}

_reference_apply = apply_capacity


def apply_capacity(experts, n_experts, capacity_factor):
    out = _reference_apply(experts, n_experts, capacity_factor)
    out["dropped_tokens"] = [t for t, row in enumerate(out["kept"]) if not all(row)]
    return out
