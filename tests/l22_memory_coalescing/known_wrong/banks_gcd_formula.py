"""Classic bug: gcd(stride, n_banks) applied blindly: stride 0 (a broadcast) gives 32-way; 16 banks, stride 1 give 1."""

MODULE = "ledger"
REJECTED_BY = {"bank_conflict_degree": ["correctness"]}


def bank_conflict_degree(stride_words, n_banks=32):
    return math.gcd(check_int("stride_words", stride_words, 0), check_int("n_banks", n_banks, 1))
