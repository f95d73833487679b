"""Classic bug: a line through the smallest and the largest measurement instead of a least-squares fit."""

MODULE = "alpha_beta"
REJECTED_BY = {"fit_alpha_beta": ["correctness"]}

_correct_fit = fit_alpha_beta


def fit_alpha_beta(sizes, times):
    _correct_fit(sizes, times)  # same argument checks
    (x0, y0), (x1, y1) = min(zip(sizes, times, strict=True)), max(zip(sizes, times, strict=True))
    slope = (y1 - y0) / (x1 - x0)
    return y0 - slope * x0, 1.0 / slope
