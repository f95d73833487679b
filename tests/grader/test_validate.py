"""grader/validate.py: the integer check every unit's provided code shares."""

from __future__ import annotations

import pytest

from grader.validate import check_int


def test_check_int_returns_exact_ints_at_or_above_the_minimum():
    assert check_int("n", 0) == 0 and check_int("n", 5, minimum=5) == 5


@pytest.mark.parametrize("value, minimum, says", [(7e9, 0, "exact int"), (True, 0, "exact int"), ("3", 0, "exact int"),
                                                  (-1, 0, ">= 0"), (0, 1, ">= 1")])
def test_check_int_names_the_argument_and_the_problem(value, minimum, says):
    with pytest.raises(ValueError, match=rf"n_tokens must be .*{says}"):
        check_int("n_tokens", value, minimum)
