"""What the repository tells learners must stand on what it ships: no citation of a document they do not
have, links that resolve, and errata numbers that CONVENTIONS.md defines."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from grader.core.target import REPO_ROOT
from grader.instructor import release

# Documents of the course's authors that no learner has (and the folder that holds them).
UNSHIPPED = re.compile(r"CATALOG|DESIGN\.md|DESIGN §|FACTS\.md|\.\./shared\b")
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
ERRATUM_REF = re.compile(r"(?<![\w/(#])#(\d+)\b")
ERRATA_ROW = re.compile(r"^\| (\d+) \|", re.M)


def _repo_files() -> list[Path]:
    """Tracked files and new ones not ignored (what the next commit can hold)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             cwd=REPO_ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the file list comes from git")
    return [REPO_ROOT / n for n in out.decode().split("\0") if n and (REPO_ROOT / n).is_file()]


def test_nothing_outside_the_engine_tests_cites_a_document_learners_do_not_have():
    found = []
    for path in _repo_files():
        rel = path.relative_to(REPO_ROOT)
        if rel.parts[:2] == ("tests", "grader"):
            continue  # this test names them
        for i, line in enumerate(path.read_bytes().decode("utf-8", "replace").splitlines(), 1):
            if UNSHIPPED.search(line):
                found.append(f"{rel}:{i}: {line.strip()[:100]}")
    assert not found, (
        "these lines cite documents that are not in the repository (learners never see them); state the "
        "fact itself, or point to a file in the repo (CONVENTIONS.md for units and errata):\n" + "\n".join(found)
    )


def _relative_links(path: Path) -> list[str]:
    text = re.sub(r"`[^`\n]*`", "", path.read_text())  # a code span is not a link: `k[grid](x)` launches a kernel
    links = (m.group(1) for m in MD_LINK.finditer(text))
    return [t for t in links if not re.match(r"[a-z]+:|#", t)]


def test_relative_links_in_markdown_resolve():
    broken = [
        f"{p.relative_to(REPO_ROOT)} links {t}"
        for p in _repo_files()
        if p.suffix == ".md"
        for t in _relative_links(p)
        if not (p.parent / t.split("#", 1)[0]).exists()
    ]
    assert not broken, "links to files that do not exist (fix the path or drop the link):\n" + "\n".join(broken)


def test_every_erratum_a_unit_readme_cites_is_in_conventions():
    defined = {int(n) for n in ERRATA_ROW.findall((REPO_ROOT / "CONVENTIONS.md").read_text())}
    assert defined, "CONVENTIONS.md has no errata table (rows `| N | ...`)"
    missing = [
        f"{readme.relative_to(REPO_ROOT)} cites #{n}"
        for readme in sorted((REPO_ROOT / "solutions").glob("*/README.md"))
        for n in ERRATUM_REF.findall(readme.read_text())
        if int(n) not in defined
    ]
    assert not missing, (
        f"errata cited by unit READMEs but not in CONVENTIONS.md's table ({sorted(defined)}): add a row "
        "saying what the course says and what the grader chose:\n" + "\n".join(missing)
    )


def test_unit_readmes_state_their_conventions_and_link_the_page():
    """A README that cites an erratum says what the grader chose there, and links the page that numbers it."""
    for readme in sorted((REPO_ROOT / "solutions").glob("*/README.md")):
        text = readme.read_text()
        if ERRATUM_REF.search(text) or "errata" in text.lower():
            assert "../../CONVENTIONS.md" in text, (
                f"{readme.relative_to(REPO_ROOT)} cites the course's errata but does not link "
                "[CONVENTIONS.md](../../CONVENTIONS.md#course-errata): add the link where it names them"
            )


def test_the_student_release_ships_what_its_readmes_link(tmp_path):
    built = release.build(tmp_path / "rel")
    assert (built.out / "CONVENTIONS.md").is_file(), "release.build must copy CONVENTIONS.md: unit READMEs link it"
    broken = [
        f"{p.relative_to(built.out)} links {t}"
        for p in sorted(built.out.rglob("*.md"))
        for t in _relative_links(p)
        if not (p.parent / t.split("#", 1)[0]).exists()
    ]
    assert not broken, "the released tree has links to files it does not ship:\n" + "\n".join(broken)
