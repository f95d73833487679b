"""Audit the grading tests for comparisons stricter than the unit's contract (issue 31).

``python -m grader.tools.strictness [UNIT ...] [--json] [--tests DIR] [--solutions DIR]`` parses
``tests/<unit>/test_*.py`` (never imports nor runs them) and lists, per unit, ``file:line`` and a kind:

``dict``      a result dict compared whole, so one extra key fails: ``x == {...}``, ``x == dict(...)``,
              ``x == [{...}]``, ``x == name`` where ``name`` was bound to a dict literal in the same function
              or at module level,
              ``set(x) == {...}`` (the key set), and ``assert_parts(x, ...)`` (same keys, exactly). Not a finding:
              two dicts the test built itself (comprehensions of the learner's values keyed by data),
              ``assert_parts`` of a projection (a dict comprehension, or a call of a helper whose name starts
              with ``named``, e.g. ``named_keys(got, want)``: only the keys the contract names), or a unit whose
              README says its dict is exact (``exact keys``, ``no other keys``, ``no extra keys``, ...).
``float``     exact float equality: ``==``/``!=`` against a float literal or a float expression (a ``/``
              division, ``float(...)``), or ``assert_number(..., rel=0)`` without an
              ``abs_tol``. ``round(x, n) == 0.25`` is a tolerance (half a unit of the n-th digit), not a
              finding; ``assert_exact`` is for ints. Not a finding where the README states an exactness rule
              for floats (``exact float``, ``floats are exact``, ``bit-exact``, ``exactly 0.0``, ``compared
              with ==``, ``exactly representable``): a README that only gives a tolerance makes ``==`` stricter.
``wording``   an error message held to one wording beyond the argument's name: ``pytest.raises(...,
              match=...)`` whose pattern is more than one identifier or a word the README never gives, and
              ``assert "<two words or more>" in str(err)``-style checks.
``stride``    a comparison with ``.stride()`` (torch's choice for size-0/size-1 dimensions changes nothing
              observable) where the README does not say which strides such dimensions get (``size-1``/
              ``size 1`` near ``stride``).
``sequence``  the learner's value compared as returned with a list or a tuple (``got == [1, 2]``, ``got``
              bound to a call of a ``learner(...)`` function): a list never equals a tuple, so a contract
              that says "the ranks" fails one of them. Not a finding when the value goes through
              ``list(...)``/``tuple(...)``/``sorted(...)`` first. Also ``isinstance(got, list)`` (or ``tuple``)
              alone on such a value.
``name``      a test that depends on a name outside the contract: ``type(x).__name__`` compared with a
              name the README does not give, ``inspect.signature(...)`` or ``hasattr(...)``.

Comparisons inside hypothesis strategies (``@st.composite``) and in an ``if`` whose body neither raises nor
asserts (a diagnostic that picks a better message) are not checks and are skipped. ``== math.inf`` is a
defined value, not a rounding question.

Each finding is a place to look at, not a verdict: a README that states the rule (why the dict is
exact, which floats are exact) makes it legitimate, and the scan then stops reporting it.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("dict", "float", "wording", "stride", "name", "sequence")

# What a README says to make a kind legitimate for its unit (searched case-insensitively, whole text).
README_RULES = {
    "dict": re.compile(
        r"exact(ly)? (the |these |its |those )?(set of )?keys|keys? (set )?(is|are) exact|no (other|extra) keys"
        r"|(dict|dictionary|ledger) is exact|only (these|those|the named) keys|dicts? compared whole",
        re.I),
    "float": re.compile(
        r"exact floats?|floats? (are |is )?(compared )?exact(ly)?|bit[- ]exact|exactly equal|exactly `?(0\.0|1\.0|inf)"
        r"|compared with `?==|exactly representable",
        re.I),
    "stride": re.compile(r"size[- ](0|1)[^.\n]{0,80}strides?|strides?[^.\n]{0,80}size[- ](0|1)", re.I),
}
_IDENT = re.compile(r"^\\?b?\w+(\\b)?$")


@dataclass(frozen=True)
class Finding:
    unit: str
    file: str
    line: int
    kind: str
    code: str


def _is_dict_expr(node: ast.AST, dict_names: set[str]) -> bool:
    if isinstance(node, ast.Dict | ast.DictComp):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        return True
    if isinstance(node, ast.List | ast.Tuple) and node.elts and all(_is_dict_expr(e, dict_names) for e in node.elts):
        return True
    if isinstance(node, ast.IfExp):
        return _is_dict_expr(node.body, dict_names)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _is_dict_expr(node.left, dict_names) or _is_dict_expr(node.right, dict_names)
    return isinstance(node, ast.Name) and node.id in dict_names


def _is_set_of(node: ast.AST) -> bool:
    """``set(x)`` or ``x.keys()``: the key set of a result."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "set" and node.args:
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "keys"


def _is_set_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Set | ast.SetComp):
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("set", "frozenset")


def _is_float_expr(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, float)
    if isinstance(node, ast.UnaryOp):
        return _is_float_expr(node.operand)
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, ast.Div) or _is_float_expr(node.left) or _is_float_expr(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float":
        return True
    return (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "math"
            and node.attr in ("pi", "e"))


def _is_sequence_literal(node: ast.AST, seq_names: set[str]) -> bool:
    if isinstance(node, ast.List | ast.Tuple | ast.ListComp):
        return not (isinstance(node, ast.Tuple) and not node.elts)
    return isinstance(node, ast.Name) and node.id in seq_names


def _is_raw_result(node: ast.AST, learners: set[str], results: set[str]) -> bool:
    """The learner's value as returned: a call of a ``learner(...)`` function, a name bound to one, or an
    item of those; not passed through list()/tuple()/sorted(), nor a ``.shape``."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and node.func.id in learners
    return isinstance(node, ast.Name) and node.id in results


def _is_rounded(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "round"


def _is_stride(node: ast.AST, stride_names: set[str]) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "stride":
            return True
        if isinstance(sub, ast.Name) and sub.id in stride_names:
            return True
    return False


def _call_name(node: ast.Call) -> str:
    f = node.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return ""


def _is_projection(node: ast.AST) -> bool:
    if isinstance(node, ast.DictComp):
        return True
    if isinstance(node, ast.IfExp):
        return _is_projection(node.body)
    return isinstance(node, ast.Call) and _call_name(node).startswith("named")


def _bindings(func: ast.AST, learners: frozenset[str] = frozenset()) -> tuple[set[str], ...]:
    """Names bound to a dict literal, to a ``.stride()``, to a list or tuple literal and to a learner
    function's result in this scope."""
    dicts: set[str] = set()
    strides: set[str] = set()
    seqs: set[str] = set()
    results: set[str] = set()
    for sub in ast.walk(func):
        if isinstance(sub, ast.Assign):
            targets = [t.id for t in sub.targets if isinstance(t, ast.Name)]
            if _is_dict_expr(sub.value, set()):
                dicts.update(targets)
            if _is_stride(sub.value, set()):
                strides.update(targets)
            if isinstance(sub.value, ast.List | ast.Tuple | ast.ListComp) and (
                    not isinstance(sub.value, ast.Tuple) or sub.value.elts):
                seqs.update(targets)
            value = sub.value
            while isinstance(value, ast.Subscript):
                value = value.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in learners:
                results.update(targets)
    return dicts, strides, seqs, results


def _message_words(node: ast.AST) -> str | None:
    """The literal text of a message pattern, or None when it is not a literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant)) + " {}"
    return None


def _is_error_text(node: ast.AST) -> bool:
    """``str(err)``, ``str(e.value)``, ``msg``, ``message``, ``excinfo.value.args[0]``..."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str" and node.args:
        text = ast.unparse(node.args[0])
        return bool(re.search(r"\b(e|err|error|exc|excinfo|info|raised)\b", text))
    return isinstance(node, ast.Name) and node.id in ("msg", "message", "err_text", "error_text")


def scan_file(path: Path, unit: str, rules: set[str], rel_to: Path, readme: str = "") -> list[Finding]:
    tree = ast.parse(path.read_text(), filename=str(path))
    lines = path.read_text().splitlines()
    found: dict[tuple[int, str], Finding] = {}
    try:
        rel = str(path.relative_to(rel_to))
    except ValueError:
        rel = str(path)

    def add(node: ast.AST, kind: str) -> None:
        if kind in rules:
            return
        line = node.lineno
        found.setdefault((line, kind), Finding(unit, rel, line, kind, lines[line - 1].strip()[:120]))

    scopes = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    module = ast.Module(body=[s for s in tree.body if isinstance(s, ast.Assign)], type_ignores=[])
    learners = frozenset(  # fn = learner(UNIT, "module", "fn") / cuda_kernel(...): the learner's functions
        t.id for s in module.body for t in s.targets if isinstance(t, ast.Name)
        and isinstance(s.value, ast.Call) and _call_name(s.value) in ("learner", "cuda_kernel"))
    empty = _bindings(module, learners)  # module-level constants (TRIAGE = {...}) seen from every function
    scope_of: dict[int, tuple[set[str], ...]] = {}
    for fn in scopes:
        local = _bindings(fn, learners)
        binding = tuple(mine | shared for mine, shared in zip(local, empty, strict=True))
        for sub in ast.walk(fn):
            scope_of[id(sub)] = binding
    generated: set[int] = set()  # nodes of hypothesis strategies (@st.composite): inputs, not checks
    for fn in scopes:
        if any("composite" in ast.unparse(d) for d in fn.decorator_list):
            generated.update(id(sub) for sub in ast.walk(fn))
    for sub in ast.walk(tree):  # `if <compare>:` that neither raises nor asserts: a diagnostic, not a check
        if isinstance(sub, ast.If) and not any(isinstance(b, ast.Raise | ast.Assert)
                                               for stmt in sub.body for b in ast.walk(stmt)):
            generated.update(id(t) for t in ast.walk(sub.test))
    readme_text = readme.lower()

    for node in ast.walk(tree):
        if id(node) in generated:
            continue
        dict_names, stride_names, seq_names, result_names = scope_of.get(id(node), empty)
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for op, (a, b) in zip(node.ops, zip(operands, operands[1:], strict=False), strict=False):
                if not isinstance(op, ast.Eq | ast.NotEq):
                    if (isinstance(op, ast.In) and _is_error_text(b) and (w := _message_words(a)) is not None
                            and len(re.findall(r"\w+", w)) > 1):
                        add(node, "wording")
                    continue
                built = [_is_dict_expr(s, dict_names) or _is_projection(s) for s in (a, b)]
                if any(built) and not all(built) and not (_is_set_literal(a) or _is_set_literal(b)):
                    add(node, "dict")  # one side the test's dict, the other the learner's result whole
                if (_is_set_of(a) and _is_set_literal(b)) or (_is_set_of(b) and _is_set_literal(a)):
                    add(node, "dict")
                if (_is_float_expr(a) or _is_float_expr(b)) and not (_is_rounded(a) or _is_rounded(b)):
                    add(node, "float")
                if _is_stride(a, stride_names) or _is_stride(b, stride_names):
                    add(node, "stride")
                elif any(_is_sequence_literal(s, seq_names) and _is_raw_result(o, learners, result_names)
                         for s, o in ((a, b), (b, a))):
                    add(node, "sequence")  # a list never equals a tuple: [1, 2] != (1, 2)
                for side, other in ((a, b), (b, a)):
                    if isinstance(side, ast.Attribute) and side.attr == "__name__" and not (
                            isinstance(other, ast.Constant) and str(other.value).lower() in readme_text):
                        add(node, "name")  # a type name the README does not give
        elif isinstance(node, ast.Call):
            name = _call_name(node)
            if name == "assert_parts" and node.args and not _is_projection(node.args[0]):
                add(node, "dict")
            elif name == "assert_number":
                kw = {k.arg: k.value for k in node.keywords}
                tol = kw.get("rel")
                if isinstance(tol, ast.Constant) and tol.value == 0 and "abs_tol" not in kw:
                    add(node, "float")
            elif name == "raises":
                for k in node.keywords:
                    if k.arg == "match":
                        words = _message_words(k.value)
                        if words is None or not _IDENT.match(words) or (
                                words.strip("\\b").lower() not in readme_text):
                            add(node, "wording")  # a phrase, or a word the README never gives
            elif (name == "isinstance" and len(node.args) == 2 and ast.unparse(node.args[1]) in ("list", "tuple")
                  and _is_raw_result(node.args[0], learners, result_names)):
                add(node, "sequence")  # a tuple where a list would do, or the other way round
            elif name == "hasattr" or (name == "signature" and isinstance(node.func, ast.Attribute)
                                       and ast.unparse(node.func.value) == "inspect"):
                add(node, "name")
    return sorted(found.values(), key=lambda f: (f.file, f.line, f.kind))


def readme_rules(unit: str, solutions: Path) -> set[str]:
    """The kinds this unit's README makes legitimate."""
    readme = solutions / unit / "README.md"
    text = " ".join(readme.read_text().split()) if readme.exists() else ""  # a rule may wrap across lines
    return {kind for kind, rx in README_RULES.items() if rx.search(text)}


def units_in(tests: Path) -> list[str]:
    return sorted(p.name for p in tests.iterdir()
                  if p.is_dir() and p.name != "grader" and re.match(r"^(l\d+|c\d+)_", p.name))


def scan(units: list[str] | None = None, *, tests: Path | None = None, solutions: Path | None = None) -> list[Finding]:
    tests = tests or ROOT / "tests"
    solutions = solutions or ROOT / "solutions"
    out: list[Finding] = []
    for unit in units or units_in(tests):
        rules = readme_rules(unit, solutions)
        readme = solutions / unit / "README.md"
        text = readme.read_text() if readme.exists() else ""
        for path in sorted((tests / unit).glob("test_*.py")):
            out.extend(scan_file(path, unit, rules, tests.parent, text))
    return out


def counts(findings: list[Finding]) -> dict:
    by_kind = Counter(f.kind for f in findings)
    by_unit: dict[str, Counter] = {}
    for f in findings:
        by_unit.setdefault(f.unit, Counter())[f.kind] += 1
    return {"total": len(findings), "by_kind": {k: by_kind.get(k, 0) for k in KINDS},
            "by_unit": {u: dict(c) for u, c in sorted(by_unit.items())}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m grader.tools.strictness", description=__doc__.split("\n\n")[0])
    ap.add_argument("units", nargs="*", help="unit folders (default: every unit under tests/)")
    ap.add_argument("--json", action="store_true", help="findings and counts as JSON")
    ap.add_argument("--tests", type=Path, default=ROOT / "tests")
    ap.add_argument("--solutions", type=Path, default=ROOT / "solutions")
    args = ap.parse_args(argv)
    known = units_in(args.tests)
    units = []
    for u in args.units:
        match = [k for k in known if k == u or k.startswith(u + "_") or k.split("_")[0] == u]
        if not match:
            ap.error(f"no unit {u!r} under {args.tests}")
        units.extend(match)
    findings = scan(units or None, tests=args.tests, solutions=args.solutions)
    summary = counts(findings)
    if args.json:
        json.dump({"findings": [asdict(f) for f in findings], **summary}, sys.stdout, indent=1)
        print()
        return 0
    unit = None
    for f in findings:
        if f.unit != unit:
            unit = f.unit
            print(f"\n{unit}")
        print(f"  {f.file}:{f.line:<5} {f.kind:<8} {f.code}")
    per_kind = ", ".join(f"{k} {n}" for k, n in summary["by_kind"].items())
    print(f"\nper kind: {per_kind} (total {summary['total']})")
    for u, c in summary["by_unit"].items():
        print(f"  {u:<24} " + ", ".join(f"{k} {c[k]}" for k in KINDS if k in c))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
