"""Classic bug: threads reading the same word counted as a conflict (stride 0 → 32-way, not a broadcast)."""

MODULE = "roofline"
REJECTED_BY = {"bank_conflict_degree": ["correctness"]}


def bank_conflict_degree(stride_words):
    if isinstance(stride_words, bool) or not isinstance(stride_words, int) or stride_words < 0:
        raise ValueError(f"stride_words must be an int >= 0, got {stride_words!r}")
    return math.gcd(stride_words, N_BANKS)
