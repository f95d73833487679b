"""Classic bug: the mean of the ranks' means (2.5 for the course's example), not weighted by tokens."""

MODULE = "ai_math"
REJECTED_BY = {"global_mean_loss": ["correctness"]}

_correct_global = global_mean_loss


def global_mean_loss(per_rank):
    _correct_global(per_rank)  # same argument checks
    means = [mean for n, mean in per_rank if n > 0]
    return math.fsum(means) / len(means)
