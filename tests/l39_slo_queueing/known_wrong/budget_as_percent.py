"""Mistake: the budget share as a percentage (2.0 for 2 %) while the contract returns a fraction (0.02)."""

MODULE = "slo"
REJECTED_BY = {"budget_consumed": ["correctness"]}

_correct_budget = budget_consumed


def budget_consumed(burn, window_s, period_s=MONTH_S):
    return 100 * _correct_budget(burn, window_s, period_s)
