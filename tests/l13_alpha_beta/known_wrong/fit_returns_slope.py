"""Classic bug: the fitted slope (seconds per byte) returned as β instead of its inverse (bytes per second)."""

MODULE = "alpha_beta"
REJECTED_BY = {"fit_alpha_beta": ["correctness"]}

_correct_fit = fit_alpha_beta


def fit_alpha_beta(sizes, times):
    alpha, beta = _correct_fit(sizes, times)
    return alpha, 1.0 / beta
