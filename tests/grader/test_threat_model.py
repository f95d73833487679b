"""grader/THREAT_MODEL.md is the index of trust: what it cites must exist, and what the corpus holds must be in it.

Checked statically (``ast``, nothing imported, well under a second): every ``tests/...py::name`` node id names a
function (or class, or ``Class::method``) defined in that file (a parametrized id is checked on its function), every
``grader/...py::name`` a function, class, method (``Class.method``) or module constant, every cited file exists;
every class entry has a status and cites at least one test unless its status is OPEN; every file of the cheat corpus
and every ``tamper_*`` known-wrong file is cited by some class; the count line matches the entries. A test renamed
away, a defence moved, a new cheat with no class: this file fails and says which entry to mend.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

from grader.core.target import REPO_ROOT

DOC = REPO_ROOT / "grader" / "THREAT_MODEL.md"
ENTRY = re.compile(r"^### (R\d+\.\d+[a-z]?) (.+)$", re.M)
STATUS = re.compile(r"^\*\*Status:\*\* (.+)$", re.M)
CODE = re.compile(r"`([^`\n]+)`")
REF = re.compile(r"(?:tests|grader)/[\w./-]+\.(?:py|md|cu|cpp)(?:::[\w.\[\]-]+)*")
STATUSES = ("DEFENDED", "PARTLY DEFENDED", "OPEN")
COUNT = re.compile(r"^Count: (\d+) classes; (\d+) DEFENDED, (\d+) PARTLY DEFENDED .*?, (\d+) OPEN", re.M)


@dataclass
class Entry:
    id: str
    title: str
    status: str = ""
    refs: list[str] = field(default_factory=list)

    @property
    def open(self) -> bool:
        return self.status.startswith("OPEN")

    @property
    def kind(self) -> str:
        return next((s for s in sorted(STATUSES, key=len, reverse=True) if self.status.startswith(s)), "")

    @property
    def tests(self) -> list[str]:
        return [r for r in self.refs if is_test(r)]


def refs_in(text: str) -> list[str]:
    return [span for span in CODE.findall(text) if REF.fullmatch(span)]


def parse(text: str) -> list[Entry]:
    heads = list(ENTRY.finditer(text))
    out = []
    for i, head in enumerate(heads):
        body = text[head.end() : heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        body = body.split("\n## ", 1)[0]  # a round's heading ends its last entry
        status = STATUS.search(body)
        out.append(Entry(head.group(1), head.group(2), status.group(1).strip() if status else "", refs_in(body)))
    return out


def is_corpus(path: str) -> bool:
    return (path.startswith("tests/grader/cheats/")
            or bool(re.fullmatch(r"tests/\w+/known_wrong/tamper_\w+\.(py|cu)", path)))


def is_test(ref: str) -> bool:
    path, _, rest = ref.partition("::")
    if not rest:
        return is_corpus(path)
    return path.startswith("tests/") and rest.split("::")[-1].split("[")[0].startswith("test")


@functools.cache
def defined(path: Path) -> frozenset[str]:
    """Names a node id may point at: top-level functions, classes and constants, and ``Class.method``."""
    functions = ast.FunctionDef | ast.AsyncFunctionDef
    names: set[str] = set()
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, functions | ast.ClassDef):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            names |= {f"{node.name}.{m.name}" for m in node.body if isinstance(m, functions)}
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [])
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return frozenset(names)


def missing(ref: str, root: Path = REPO_ROOT) -> str | None:
    """Why ``ref`` does not resolve, or None."""
    path, _, rest = ref.partition("::")
    file = root / path
    if not file.is_file():
        return f"{path} does not exist"
    if not rest:
        return None
    name = ".".join(part.split("[")[0] for part in rest.split("::"))
    return None if name in defined(file) else f"{path} defines no {name}"


def problems(text: str, root: Path = REPO_ROOT) -> list[str]:
    """Everything wrong with a THREAT_MODEL.md text, one line each, naming the entry."""
    entries = parse(text)
    out = []
    seen: set[str] = set()
    for e in entries:
        if e.id in seen:
            out.append(f"{e.id}: two entries with this id")
        seen.add(e.id)
        if not e.kind:
            out.append(f"{e.id}: no '**Status:** DEFENDED | PARTLY DEFENDED (OPEN: ...) | OPEN' line")
        if e.kind == "PARTLY DEFENDED" and "OPEN" not in e.status:
            out.append(f"{e.id}: partly defended, but the status does not say what is OPEN")
        if not e.open and not e.tests:
            out.append(f"{e.id}: cites no test (a node id or a corpus file) and is not marked OPEN")
    for ref in refs_in(text):
        if why := missing(ref, root):
            where = next((e.id for e in entries if ref in e.refs), "the introduction")
            out.append(f"{where}: `{ref}`: {why}")
    return out


def test_every_cited_test_file_and_defence_exists():
    assert DOC.is_file()
    found = problems(DOC.read_text())
    assert not found, "grader/THREAT_MODEL.md cites what is not there (renamed? moved?):\n" + "\n".join(found)


def test_every_class_has_a_status_and_cites_its_tests_unless_open():
    entries = parse(DOC.read_text())
    assert len(entries) >= 25, [e.id for e in entries]
    for e in entries:
        assert e.kind, f"{e.id} has no status"
        assert e.open or e.tests, f"{e.id} is not OPEN and cites no test"


def test_round_3s_nine_classes_are_listed():
    ids = {e.id for e in parse(DOC.read_text())}
    assert {f"R3.{k}" for k in range(1, 10)} <= ids, sorted(ids)


def test_every_cheat_and_tampering_file_belongs_to_a_class():
    cited = {r for e in parse(DOC.read_text()) for r in e.refs}
    corpus = [*sorted((REPO_ROOT / "tests" / "grader" / "cheats").glob("*.py")),
              *sorted((REPO_ROOT / "tests").glob("*/known_wrong/tamper_*.py")),
              *sorted((REPO_ROOT / "tests").glob("*/known_wrong/tamper_*.cu"))]
    assert len(corpus) >= 56
    unclassed = [str(p.relative_to(REPO_ROOT)) for p in corpus if str(p.relative_to(REPO_ROOT)) not in cited]
    assert not unclassed, ("cite each under the class it attacks in grader/THREAT_MODEL.md (Tests row): "
                           + ", ".join(unclassed))


def test_the_count_line_matches_the_entries():
    text = DOC.read_text()
    entries = parse(text)
    count = COUNT.search(text)
    assert count, "THREAT_MODEL.md has no 'Count: N classes; D DEFENDED, P PARTLY DEFENDED (...), O OPEN' line"
    kinds = [e.kind for e in entries]
    said = tuple(int(g) for g in count.groups())
    assert said == (len(entries), kinds.count("DEFENDED"), kinds.count("PARTLY DEFENDED"), kinds.count("OPEN")), said


def test_the_checker_fails_on_a_renamed_test_a_moved_defence_and_an_untested_class():
    """The checks above are not vacuous: each kind of rot in the document is reported, naming its entry."""
    text = DOC.read_text()
    test = "tests/grader/test_plugin.py::test_what_the_learner_fills_is_capped_in_the_results"
    assert f"`{test}`" in text and not problems(text)
    renamed = problems(text.replace(test, test + "_renamed"))
    assert any(p.startswith("R3.9:") and "defines no test_what_the_learner_fills" in p for p in renamed), renamed
    moved = problems(text.replace("grader/core/results.py::TEXT_CAPS", "grader/core/results.py::TEXT_LIMITS"))
    assert any("defines no TEXT_LIMITS" in p for p in moved), moved
    gone = problems(text.replace("tests/grader/cheats/fork_bomb.py", "tests/grader/cheats/fork_bomb_gone.py"))
    assert any("fork_bomb_gone.py does not exist" in p for p in gone), gone
    r39 = text[text.index("### R3.9 ") : text.index("### R3.10 ")]
    tests_row = next(line for line in r39.splitlines() if line.startswith("| Tests |"))
    untested = problems(text.replace(r39, r39.replace(tests_row, "| Tests | none |")))
    assert any(p.startswith("R3.9:") and "cites no test" in p for p in untested), untested
    assert is_test("tests/grader/test_audit.py::test_each_way_around_the_checks_is_found_with_its_line[sys]")
    assert missing("tests/grader/test_audit.py::test_each_way_around_the_checks_is_found_with_its_line[sys]") is None
