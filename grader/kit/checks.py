"""Assertions of the ledger units (pure Python: no torch, so grading a ledger unit stays light).

Ledgers return exact ints of bytes and FLOPs; messages name the call, show both values with
thousands separators (bytes also in GB and GiB) and say why, so a failure reads as an instruction.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

GB, GiB = 10**9, 2**30


def human_bytes(n: int) -> str:
    """``1,120,000,000,000 B (1120 GB = 1043 GiB)``: bytes first, conversions for large sizes only."""
    return f"{n:,} B" + (f" ({n / GB:.4g} GB = {n / GiB:.4g} GiB)" if abs(n) >= 10**6 else "")


def _show(n: int, unit: str) -> str:
    return human_bytes(n) if unit == "B" else f"{n:,}{' ' + unit if unit else ''}"


def assert_exact(got: object, want: int, what: str, *, why: str = "", unit: str = "") -> None:
    """``got`` is an ``int`` (a bool or a float is refused) equal to ``want``.

    ``unit="B"`` shows sizes in bytes with GB and GiB; ``why`` says which convention or term the
    expected value follows ("K and V once each").
    """
    if type(got) is not int:
        kind = type(got).__name__
        raise AssertionError(
            f"{what} = {got!r}: return an exact int{' of bytes' if unit == 'B' else ''}, not {kind}"
            + (" (never GB/GiB floats: the grader converts)" if unit == "B" else "")
        )
    if got != want:
        because = f" ({why})" if why else ""
        raise AssertionError(f"{what} = {_show(got, unit)}, expected {_show(want, unit)}{because}")


def assert_parts(
    got: object, want: Mapping[str, int], what: str, *, total: str | None = None, unit: str = ""
) -> None:
    """An itemized ledger: a dict with exactly ``want``'s keys, each part exact, then ``total`` (if named)
    equal to the sum of the other parts. The first wrong part is named, so the message points at the term."""
    if not isinstance(got, dict):
        raise AssertionError(f"{what}: expected a dict with keys {sorted(want)}, got {got!r}")
    if set(got) != set(want):
        missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
        raise AssertionError(f"{what}: keys {sorted(got)}, expected {sorted(want)} (missing {missing}, extra {extra})")
    for part, value in want.items():
        if part != total:
            assert_exact(got[part], value, f"{what}[{part!r}]", unit=unit)
    if total is not None:
        parts = sum(got[p] for p in want if p != total)
        assert_exact(got[total], parts, f"{what}[{total!r}]", why="the sum of the parts", unit=unit)
        assert_exact(got[total], want[total], f"{what}[{total!r}]", unit=unit)


def assert_number(got: object, want: float, what: str, *, rel: float = 1e-9, abs_tol: float = 0.0) -> None:
    """``got`` is a real number (an int or a float, not a bool) within ``rel`` of ``want``, or within
    ``abs_tol`` of it (for values that cancel to about 0, such as differences of large timestamps)."""
    if not isinstance(got, int | float) or isinstance(got, bool):
        raise AssertionError(f"{what} = {got!r}, expected a number ({want!r})")
    if not math.isclose(got, want, rel_tol=rel, abs_tol=max(abs_tol, 1e-300)):
        slack = f"relative tolerance {rel:g}" + (f", absolute {abs_tol:g}" if abs_tol else "")
        raise AssertionError(f"{what} = {got!r}, expected {want!r} ({slack})")


def _call_text(fn: Callable[..., Any], args: tuple, kwargs: Mapping[str, Any]) -> str:
    label = getattr(fn, "name", getattr(fn, "__name__", "fn"))
    shown = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{label}({', '.join(shown)})"


def assert_rejects(
    fn: Callable[..., Any], args: tuple, name: str | None, kwargs: Mapping[str, Any] | None = None
) -> None:
    """``fn(*args, **kwargs)`` raises ``ValueError`` whose message names ``name`` as a word.

    The contract of every ledger: bad input is refused with the argument it concerns named
    (``n_layers must be a positive int``), so the caller knows what to fix. ``name=None`` for a
    contract that promises a ValueError without naming the argument.
    """
    kwargs = dict(kwargs or {})
    call = _call_text(fn, args, kwargs)
    wanted = f"ValueError naming `{name}`" if name else "ValueError"
    try:
        got = fn(*args, **kwargs)
    except ValueError as err:
        if name and not re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", str(err)):
            raise AssertionError(f"{call} raised ValueError({str(err)!r}): its message should name `{name}`") from None
        return
    except NotImplementedError:  # a stub's TODO
        raise
    except Exception as err:  # KeyError from a table lookup, TypeError, ...: refused, but not as the contract says
        what = f"`{name}` is invalid here" if name else "these arguments are invalid"
        raise AssertionError(f"{call} raised {err!r}: {what}, so check it first and raise {wanted}") from err
    raise AssertionError(f"{call} returned {got!r}: it should raise {wanted}")


def assert_rejects_all(fn: Callable[..., Any], table: Iterable[tuple[tuple, str]]) -> None:
    """:func:`assert_rejects` for each ``(args, name)`` row of a bad-argument table."""
    for args, name in table:
        assert_rejects(fn, args, name)

