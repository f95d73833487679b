"""The translation catalogs for authors: extract the strings to translate, check that none is missing.

``python -m grader.authoring.catalog extract|check [UNIT ...]``: without UNIT, the grader's own strings (every
``_()``/``N_()`` call in grader/, into grader/locale/zh.po); with UNITs, each unit's test hints (into
tests/<unit>/zh.po). ``extract`` keeps the translations already made and drops strings no longer used; ``check``
says what is left to translate (exit status 1). Reading the catalogs at run time is grader/i18n.py's.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from grader import api
from grader.i18n import GRADER, REPO, TRANSLATED, _read, catalog_path


def grader_strings(root: Path = GRADER) -> Iterator[tuple[str, str]]:
    """(text, where) of every literal string passed to ``_`` or ``N_`` in the grader's source."""
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("_", "N_")
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                yield node.args[0].value, f"{path.relative_to(root.parent)}:{node.lineno}"


def unit_strings(unit: str) -> Iterator[tuple[str, str]]:
    """(hint, test) of every grading test of ``unit`` that has a hint."""
    for t in api.manifest([unit]):
        if t.get("hint"):
            yield str(t["hint"]), str(t["nodeid"])


def extract(path: Path, strings: Sequence[tuple[str, str]]) -> tuple[int, int]:
    """Write ``path`` with one entry per string (translations kept, strings no longer used dropped);
    (entries, of which untranslated)."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import read_po, write_po

    old = read_po(path.open("rb")) if path.is_file() else Catalog(locale=TRANSLATED)
    new = Catalog(locale=TRANSLATED, project="dripstone", charset="utf-8")
    for text, where in strings:
        known = old.get(text)
        if text in new:
            new[text].auto_comments.append(where)
            continue
        new.add(text, known.string if known is not None else "", auto_comments=[where])
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        write_po(f, new, width=0, omit_header=True, sort_output=False)
    _read.cache_clear()
    return len(new), sum(1 for m in new if m.id and not m.string)


def missing(path: Path, strings: Sequence[tuple[str, str]]) -> list[str]:
    """``where: text`` of each string without a translation in ``path``."""
    have = _read(path)
    return [f"{where}: {text}" for text, where in strings if not have.get(text)]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ("extract", "check"):
        print("usage: python -m grader.authoring.catalog extract|check [UNIT ...]   "
              "(no UNIT: the grader's own strings)")
        return 2
    units = api.resolve_units(args[1:]) if args[1:] else []
    jobs = [(catalog_path(u), list(unit_strings(u))) for u in units] or [(catalog_path(), list(grader_strings()))]
    bad = 0
    for path, strings in jobs:
        if args[0] == "extract":
            n, todo = extract(path, strings)
            print(f"{path.relative_to(REPO)}: {n} entries, {todo} to translate")
        else:
            gaps = missing(path, strings)
            bad += len(gaps)
            print(f"{path.relative_to(REPO)}: {len(gaps)} without a translation" + "".join(f"\n  {g}" for g in gaps))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
