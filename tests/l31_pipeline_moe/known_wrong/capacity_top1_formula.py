"""Course formula (L31 §2.5): C·Tokens/E, the top-1 (Switch) capacity, used for top-k routing: an expert gets room
for only half the assignments of top-2."""

MODULE = "moe"
REJECTED_BY = {"expert_capacity": ["correctness"], "apply_capacity": ["correctness"]}


def expert_capacity(n_tokens, n_experts, k, capacity_factor):
    t, e, k = check_int("n_tokens", n_tokens, 1), check_int("n_experts", n_experts, 1), check_int("k", k, 1)
    if k > e:
        raise ValueError(f"k = {k} is more than n_experts = {e}")
    cf = _real("capacity_factor", capacity_factor)
    if cf <= 0:
        raise ValueError(f"capacity_factor must be > 0, got {capacity_factor!r}")
    return math.ceil(Fraction(str(capacity_factor)) * t / e)
