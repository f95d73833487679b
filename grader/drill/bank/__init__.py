"""The question bank: every module here defines ``TEMPLATES`` (a list of Template) and/or ``DESIGNS`` (a list of
Design). :func:`load` collects them all; ids are unique across modules. How to write one: grader/drill/README.md.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from grader.drill.template import Design, Template


class BankError(ValueError):
    """A bank module declares something the drill cannot use."""


@cache
def load() -> tuple[tuple[Template, ...], tuple[Design, ...]]:
    """All templates and system-design questions of grader/drill/bank/*.py, in module order."""
    templates: list[Template] = []
    designs: list[Design] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for t in getattr(module, "TEMPLATES", []):
            if not isinstance(t, Template):
                raise BankError(f"grader/drill/bank/{info.name}.py: TEMPLATES holds {t!r}, not a Template")
            templates.append(t)
        for d in getattr(module, "DESIGNS", []):
            if not isinstance(d, Design):
                raise BankError(f"grader/drill/bank/{info.name}.py: DESIGNS holds {d!r}, not a Design")
            designs.append(d)
    seen: set[str] = set()
    for q in (*templates, *designs):
        if q.id in seen:
            raise BankError(f"question id {q.id!r} is declared twice: ids must be unique across grader/drill/bank/")
        seen.add(q.id)
    return tuple(templates), tuple(designs)


# (not `templates()` / `designs()`: importing a bank module of that name would replace the function)
def all_templates() -> tuple[Template, ...]:
    return load()[0]


def all_designs() -> tuple[Design, ...]:
    return load()[1]
