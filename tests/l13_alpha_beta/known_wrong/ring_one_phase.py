"""Classic bug: the ring moves (N-1)/N · S per rank, the reduce-scatter alone, instead of 2(N-1)/N · S."""

MODULE = "alpha_beta"
REJECTED_BY = {"ring_allreduce_time": ["correctness"]}


def ring_allreduce_time(message_bytes, n_ranks, alpha_s, beta_bytes_per_s):
    s, n = _check_bytes("message_bytes", message_bytes), check_int("n_ranks", n_ranks, minimum=1)
    alpha = _check_real("alpha_s", alpha_s, allow_zero=True)
    beta = _check_real("beta_bytes_per_s", beta_bytes_per_s)
    return 2 * (n - 1) * alpha + (n - 1) / n * s / beta
