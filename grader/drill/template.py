"""The question format of ``grader drill``: numeric / choice / ordering templates and system-design questions.

A :class:`Template` is a question with parameters. Each instance draws its parameters from a seeded
``random.Random`` (``params``), and its answer comes from the course's own graded function, named by
``solution = (unit, module, function)`` and loaded from ``solutions/<unit>/<module>.py``: ``answer(p, fn)``
only calls ``fn`` and picks the number out of what it returns; it never restates the formula. The
``derivation(p)`` is the worked ledger shown after the answer: a chain of :class:`Step` whose running
total (``=`` start, then ``+ - × ÷``) must equal the answer; tests/grader/test_drill_bank.py proves both
on 200 random instances of every template. See grader/drill/README.md.
"""

from __future__ import annotations

import math
import operator
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from grader.i18n import N_, _

TOPICS = ("memory", "flops", "communication", "kernels", "parallelism", "serving", "platform", "operations")
# the topics as a learner reads them (``_(topic)``); --topic takes the English names
TOPIC_NAMES = (N_("memory"), N_("flops"), N_("communication"), N_("kernels"), N_("parallelism"), N_("serving"),
               N_("platform"), N_("operations"))
KINDS = ("numeric", "choice", "order")
OPS = ("=", "+", "-", "×", "÷")
LECTURES = "https://github.com/lilinji/ai-infra-odyssey/blob/HEAD/"

Params = dict[str, Any]


def lecture(path: str) -> str:
    """The link of a lecture file of the course repository: ``lecture("04_大模型架构与显存建模/27_....md")``."""
    from urllib.parse import quote

    return LECTURES + quote(path)


@dataclass(frozen=True)
class Step:
    """One line of a derivation: ``op`` applies ``value`` to the running total (``=`` starts it).

    ``label`` is English and a catalog msgid (marked with ``N_`` in the bank); its ``{name}`` fields are
    filled from ``args`` when shown (:meth:`text`), so the formula is written once and read in either language."""

    op: str
    label: str
    value: float
    unit: str = ""
    args: dict[str, Any] = field(default_factory=dict)

    def text(self) -> str:
        """The label in the learner's language, its fields filled."""
        if not self.args:
            return _(self.label)
        # a str argument is translated where the catalog has it; a tuple read back from the bank's JSON is a list
        args = {k: _(v) if isinstance(v, str) else tuple(v) if isinstance(v, list) else v for k, v in self.args.items()}
        return _(self.label).format(**args)


_APPLY: dict[str, Callable[[float, float], float]] = {
    "=": lambda _, v: v, "+": operator.add, "-": operator.sub, "×": operator.mul, "÷": operator.truediv}


def run_total(steps: Sequence[Step]) -> float:
    """The running total of a derivation: what its numbers add up to."""
    total = 0.0
    for s in steps:
        total = _APPLY[s.op](total, float(s.value))
    return total


@dataclass(frozen=True)
class Template:
    """A question with parameters whose answer is computed by a graded solution function.

    kind "numeric": ``answer`` returns a number in ``unit`` (a canonical unit of grader/drill/quantities.py:
    "B", "FLOP", "s", "day", "B/s", "FLOP/s", "1" for counts, "ratio", "USD", "token/s"), ``accept``
    lists the units a candidate may answer in (the proof test prints the answer in each), ``rtol`` the
    relative tolerance. kind "choice": ``options(p)`` lists the choices and ``answer`` returns the right
    one (its text). kind "order": ``options(p)`` lists the items and ``answer`` returns them in order.
    """

    id: str
    unit: str
    topic: str
    difficulty: int
    lecture: str
    prompt: str | Callable[[Params], str]
    params: Callable[[random.Random], Params]
    solution: tuple[str, str, str]
    answer: Callable[[Params, Callable[..., Any]], Any]
    derivation: Callable[[Params], list[Step]]
    kind: str = "numeric"
    unit_of_answer: str = "1"
    accept: tuple[str, ...] = ()
    rtol: float = 0.01
    options: Callable[[Params], list[str]] | None = None
    source: str = ""  # the convention or paper the derivation follows, shown with it

    def __post_init__(self) -> None:
        problems = validate_template(self)
        if problems:
            raise ValueError(f"template {self.id}: " + "; ".join(problems))

    def render(self, p: Params) -> str:
        """The question in the learner's language: a str prompt is a catalog msgid (``N_``) filled from ``p``
        (a str parameter with a catalog entry, such as a phrase drawn from a list marked ``N_``, translated too);
        a callable one calls ``_()`` itself."""
        if callable(self.prompt):
            return self.prompt(p)
        # (a tuple parameter read back from the bank's JSON is a list)
        args = {k: _(v) if isinstance(v, str) else tuple(v) if isinstance(v, list) else v for k, v in p.items()}
        return _(self.prompt).format(**args)


@dataclass(frozen=True)
class Point:
    """One rubric point. ``numbers``: values that must appear (each within ``rtol``, in any of ``accept``);
    ``keywords``: groups of synonyms, one of each group must appear. Neither: the candidate self-scores it."""

    text: str
    numbers: tuple[float, ...] = ()
    unit_of_answer: str = "1"
    accept: tuple[str, ...] = ()
    rtol: float = 0.03
    keywords: tuple[tuple[str, ...], ...] = ()

    @property
    def checkable(self) -> bool:
        return bool(self.numbers or self.keywords)


@dataclass(frozen=True)
class Design:
    """A system-design question: an open prompt and a rubric of concrete points."""

    id: str
    unit: str
    topic: str
    lecture: str
    prompt: str
    points: tuple[Point, ...]
    difficulty: int = 3
    minutes: int = 10  # the time a candidate should give it
    model_answer: str = field(default="")

    def __post_init__(self) -> None:
        problems = _common_problems(self.topic, self.difficulty, self.lecture)
        if not self.points:
            problems.append("a rubric needs at least one point")
        if problems:
            raise ValueError(f"design {self.id}: " + "; ".join(problems))


def _common_problems(topic: str, difficulty: int, lecture: str) -> list[str]:
    problems = []
    if topic not in TOPICS:
        problems.append(f"topic {topic!r} is not one of {TOPICS}")
    if difficulty not in (1, 2, 3):
        problems.append(f"difficulty must be 1, 2 or 3, got {difficulty!r}")
    if not lecture.startswith(LECTURES):
        problems.append(f"lecture must be a link starting with {LECTURES}")
    return problems


def validate_template(t: Template) -> list[str]:
    """What is wrong with a template's declaration (empty when nothing)."""
    from grader.drill import quantities

    problems = _common_problems(t.topic, t.difficulty, t.lecture)
    if t.kind not in KINDS:
        problems.append(f"kind must be one of {KINDS}")
    if t.kind == "numeric":
        if t.unit_of_answer not in quantities.CANONICAL:
            problems.append(f"unit_of_answer {t.unit_of_answer!r} is not one of {sorted(quantities.CANONICAL)}")
        for u in t.accept:
            if quantities.dimension_of(u) != quantities.CANONICAL.get(t.unit_of_answer):
                problems.append(f"accepted unit {u!r} is not a unit of {t.unit_of_answer!r}")
        if not 0 < t.rtol < 0.5:
            problems.append("rtol must be in (0, 0.5)")
    elif t.options is None:
        problems.append(f"a {t.kind} template needs options(p)")
    if len(t.solution) != 3:
        problems.append("solution must be (unit, module, function)")
    return problems


def close(a: float, b: float, rtol: float) -> bool:
    return math.isclose(a, b, rel_tol=rtol, abs_tol=1e-12)
