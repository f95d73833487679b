"""Classic bug: degree = stride mod 32 (or 32 when it divides): stride 3 is not 3-way, it is conflict-free."""

MODULE = "roofline"
REJECTED_BY = {"bank_conflict_degree": ["correctness"]}


def bank_conflict_degree(stride_words):
    if isinstance(stride_words, bool) or not isinstance(stride_words, int) or stride_words < 0:
        raise ValueError(f"stride_words must be an int >= 0, got {stride_words!r}")
    if stride_words == 0:
        return 1
    return stride_words % N_BANKS or N_BANKS
