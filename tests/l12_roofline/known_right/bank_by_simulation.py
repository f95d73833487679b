"""Correct alternative: simulate the warp (distinct words per bank) instead of gcd."""

MODULE = "roofline"
ACCEPTED = ["bank_conflict_degree"]


def bank_conflict_degree(stride_words):
    if isinstance(stride_words, bool) or not isinstance(stride_words, int) or stride_words < 0:
        raise ValueError(f"stride_words must be an int >= 0, got {stride_words!r}")
    words_per_bank: dict[int, set[int]] = {}
    for lane in range(32):
        word = lane * stride_words
        words_per_bank.setdefault(word % N_BANKS, set()).add(word)
    return max(len(words) for words in words_per_bank.values())
