"""Assertions shared by the ledger units' tests (pure Python: no torch, so ledger grading stays light)."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest


def assert_number(got: object, want: float, what: str, rel: float = 1e-9) -> None:
    """``got`` is a number (not a bool) within ``rel`` of ``want``; the message names the call."""
    assert isinstance(got, int | float) and not isinstance(got, bool), f"{what} = {got!r}, expected a number"
    assert math.isclose(got, want, rel_tol=rel, abs_tol=1e-300), f"{what} = {got!r}, expected {want!r}"


def assert_value_error_names(fn: Callable[..., object], args: tuple, name: str) -> None:
    """``fn(*args)`` raises ValueError and its message names the bad argument."""
    with pytest.raises(ValueError) as err:
        fn(*args)
    label = getattr(fn, "name", getattr(fn, "__name__", "fn"))
    assert name in str(err.value), f"{label}{args}: the ValueError should name `{name}`: {err.value}"
