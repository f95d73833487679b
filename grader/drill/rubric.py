"""System-design answers against a rubric: the grader checks numbers and keywords; the candidate scores the rest."""

from __future__ import annotations

import re

from grader.drill import units
from grader.drill.template import Point

_NUMBER_WITH_UNIT = re.compile(
    r"(?<![\w.])(\$?[-+]?(?:\d[\d,_]*(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?(?:\s*[x×*]\s*10\s*\^\s*[-+]?\d+)?)"
    r"(?:\s*([A-Za-zµμ%$][\w/%$]*))?")


def quantities(text: str, dimension: str) -> list[float]:
    """Every number in ``text`` read with the unit after it (base units), plus the bare numbers as typed."""
    found: list[float] = []
    for m in _NUMBER_WITH_UNIT.finditer(text):
        number, unit = m.group(1).rstrip(","), m.group(2)
        q = units.parse(f"{number} {unit}", dimension) if unit else None
        if q is not None and q.dimension in (dimension, None):
            found.append(q.value)
        bare = units.parse(number, dimension)
        if bare is not None:
            found.append(bare.value)
    return found


def check(point: Point, text: str) -> bool | None:
    """Whether the answer covers a checkable point; None for a self-scored one."""
    if not point.checkable:
        return None
    low = text.lower()
    keywords_ok = all(any(k.lower() in low for k in group) for group in point.keywords)
    return keywords_ok and all(_has_number(point, v, text) for v in point.numbers)


def _has_number(point: Point, value: float, text: str) -> bool:
    dim = units.CANONICAL[point.unit_of_answer]
    want = value * units.factor(point.unit_of_answer)
    scales = [1.0] + [units.factor(u) for u in point.accept]  # a bare "30" next to "GB" elsewhere counts
    return any(units.close(q * s, want, point.rtol) for q in quantities(text, dim) for s in scales)
