"""The graded solution functions a template's answer comes from: ``solutions/<unit>/<module>.py``, when present.

The student release has no solutions/: there :func:`available` is False and the drill serves the instances
``grader drill build`` precomputed into the bank data file (grader/drill/instances.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from grader.core.target import REPO_ROOT
from grader.instrument.loader import load_file

SOLUTIONS_ENV = "DRIPSTONE_DRILL_SOLUTIONS"  # another solutions folder; a missing one serves the bank, as a release


def solutions_root() -> Path:
    return Path(os.environ.get(SOLUTIONS_ENV) or REPO_ROOT / "solutions")


def path_of(solution: tuple[str, str, str]) -> Path:
    unit, module, _ = solution
    return solutions_root() / unit / f"{module}.py"


def available(solution: tuple[str, str, str]) -> bool:
    return path_of(solution).is_file()


def function(solution: tuple[str, str, str]) -> Callable[..., Any]:
    """The graded function ``(unit, module, name)`` from solutions/ (AttributeError naming it when absent)."""
    return _function(solutions_root(), tuple(solution))


@cache
def _function(root: Path, solution: tuple[str, str, str]) -> Callable[..., Any]:
    module = load_file(path_of(solution), label=f"solutions/{solution[0]}/{solution[1]}.py")
    fn = getattr(module, solution[2], None)
    if not callable(fn):
        raise AttributeError(f"solutions/{solution[0]}/{solution[1]}.py defines no function {solution[2]!r}: "
                             "fix the template's solution=(unit, module, name)")
    return fn
