"""Input validation the course gives every unit (learner modules import it: ``from grader.validate import check_int``).

Ledger functions take exact integers (token counts, bytes, ranks): a float, a bool or a negative
count is a ValueError that names the argument, in every unit alike. Torch-free, like
:mod:`grader.constants`.
"""

from __future__ import annotations


def check_int(name: str, value: object, minimum: int = 0) -> int:
    """``value`` as an exact int >= ``minimum``, or ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(
            f"{name} must be an exact int (counts and bytes are ints, never GB floats), "
            f"got {value!r} ({type(value).__name__})"
        )
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value
