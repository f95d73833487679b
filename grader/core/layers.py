"""The engine's layers, and its import graph read from the source (no module is imported to read it).

A module imports only from its own layer or a lower one, and no import cycle exists, counting imports inside
functions (grader/LAYERS.md; tests/grader/test_layers.py checks both). The same graph gives batch grading's judge
the modules to import before any learner code runs (:func:`reachable` from the judge's entry points,
grader/instructor/sandbox.py), so that list is derived, not typed.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable
from pathlib import Path

GRADER = Path(__file__).resolve().parents[1]

# (layer, name, the module prefixes in it): lowest first. A module belongs to the first entry one of whose
# prefixes it equals or starts with (followed by a dot).
LAYERS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (0, "core", ("grader.core", "grader.i18n", "grader.constants", "grader.validate", "grader._lazy")),
    (1, "instrument", ("grader.instrument",)),
    (2, "judge", ("grader.judge",)),
    (3, "kit", ("grader.kit",)),
    (4, "api", ("grader.api",)),
    (5, "front-end", ("grader.cli", "grader.__main__", "grader.learner", "grader.drill", "grader.authoring",
                      "grader.instructor", "grader.tools")),
)
PACKAGE = "grader"  # grader/__init__.py: a docstring, importable by every layer


def layer_of(module: str) -> tuple[int, str]:
    """(rank, name) of ``module``'s layer; ValueError for a module no layer holds (add it to :data:`LAYERS`)."""
    if module == PACKAGE:
        return -1, "package"
    for rank, name, prefixes in LAYERS:
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return rank, name
    raise ValueError(f"{module} is in no layer of grader/core/layers.py::LAYERS: add its package there")


@functools.cache
def modules(root: Path = GRADER) -> dict[str, Path]:
    """Every module of the package under ``root``: dotted name -> file."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


@functools.cache
def imports_of(module: str, root: Path = GRADER) -> tuple[tuple[str, int, bool], ...]:
    """The grader modules ``module`` imports: (module, line, inside a function or class) for each import statement,
    ``from a import b`` counted as ``a.b`` where that is a module, else ``a``."""
    known = modules(root)
    path = known[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []

    def visit(node: ast.AST, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = nested or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda)
            if isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    up = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join([*up, base] if base else up)
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in child.names]
            else:
                visit(child, inner)
                continue
            found.extend((n, child.lineno, nested) for n in names if n in known and n != module)

    visit(ast.parse(path.read_text(), str(path)), False)
    return tuple(found)


def reachable(entries: Iterable[str], *, up_to: int, root: Path = GRADER) -> list[str]:
    """Every module of layers ``<= up_to`` that ``entries`` reach through imports (inside functions too)."""
    seen: set[str] = set()
    todo = list(entries)
    while todo:
        module = todo.pop()
        if module in seen or layer_of(module)[0] > up_to:
            continue
        seen.add(module)
        todo.extend(name for name, _, _ in imports_of(module, root))
    return sorted(seen)


def cycles(root: Path = GRADER) -> list[list[str]]:
    """Import cycles among the package's modules (each a list of modules, the first repeated at the end)."""
    graph = {m: sorted({n for n, _, _ in imports_of(m, root)}) for m in modules(root)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strongly_connected(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                strongly_connected(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group) + [sorted(group)[0]])

    for v in graph:
        if v not in index:
            strongly_connected(v)
    return found


def violations(root: Path = GRADER) -> list[str]:
    """Every import from a higher layer, said with its file and line."""
    bad = []
    for module, path in modules(root).items():
        rank, name = layer_of(module)
        for target, line, nested in imports_of(module, root):
            their_rank, their_name = layer_of(target)
            if their_rank > rank:
                where = f"{path.relative_to(root.parent)}:{line}"
                bad.append(f"{where}: {module} ({name}) imports {target} ({their_name})"
                           + (" inside a function" if nested else ""))
    return bad
