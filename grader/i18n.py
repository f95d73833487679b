"""The learner's language: English or Chinese (中文), from gettext catalogs (``.po`` files read with Babel).

``DRIPSTONE_LANG=zh`` (or ``en``) chooses; without it the system locale does (``LC_ALL``, ``LC_MESSAGES``,
``LANG``: ``zh_CN.UTF-8`` gives Chinese), so ``make grade`` follows the terminal's locale. English is the source
language: every learner-facing string of the grader is written in English inside :func:`_` (or marked with
:func:`N_` where it is defined before the language is known) and translated in ``grader/locale/zh.po``; each
unit's test hints (``@grade(..., hint=...)``) in ``tests/<unit>/zh.po``. A unit's texts have Chinese files beside
the English ones: ``README.zh.md`` and ``HINTS.zh.toml`` (:func:`localized`).

Numbers, code and identifiers are the same in both languages; placeholders are ``str.format`` fields
(``_("{n} tests").format(n=3)``), never f-strings, so the catalog holds one entry per sentence.
Course authors: ``python -m grader.authoring.catalog extract [UNIT ...]`` adds new strings to the catalogs (keeping
every translation), ``python -m grader.authoring.catalog check`` lists what has no translation;
``tests/grader/test_i18n.py`` fails on a learner-facing string of the grader, or of a unit that has a README.zh.md,
without one.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

GRADER = Path(__file__).resolve().parent
REPO = GRADER.parent
LANGUAGES = ("en", "zh")
TRANSLATED = "zh"  # the language the catalogs translate into
LANG_ENV = "DRIPSTONE_LANG"


_SPEAKING: contextvars.ContextVar[str | None] = contextvars.ContextVar("dripstone_speaking", default=None)


def language() -> str:
    """``"zh"`` or ``"en"``: :func:`speaking`'s language inside it, else DRIPSTONE_LANG, else the first locale
    variable that is set (POSIX order)."""
    if _SPEAKING.get():
        return str(_SPEAKING.get())
    chosen = os.environ.get(LANG_ENV, "").strip().lower()
    if not chosen:
        chosen = next((os.environ[v] for v in ("LC_ALL", "LC_MESSAGES", "LANG") if os.environ.get(v)), "").lower()
    return "zh" if chosen.startswith("zh") else "en"


@contextlib.contextmanager
def speaking(lang: str) -> Iterator[None]:
    """Texts in ``lang`` inside the block, whatever the learner's language (this thread only: a text stored in
    English, such as the drill's history, is rendered so while another thread goes on printing in Chinese)."""
    token = _SPEAKING.set(lang if lang in LANGUAGES else "en")
    try:
        yield
    finally:
        _SPEAKING.reset(token)


def catalog_path(unit: str | None = None, root: Path = REPO) -> Path:
    """The grader's catalog, or a unit's (its test hints)."""
    name = f"{TRANSLATED}.po"
    return root / "grader" / "locale" / name if unit is None else root / "tests" / unit / name


@functools.cache
def _read(path: Path) -> dict[str, str]:
    """msgid → msgstr of a ``.po`` file (translated entries only; {} if there is none)."""
    if not path.is_file():
        return {}
    try:
        from babel.messages.pofile import read_po
    except ImportError:  # an environment made before Babel was pinned: English until `make env` installs it
        return {}

    with path.open("rb") as f:
        catalog = read_po(f)
    return {m.id: m.string for m in catalog if m.id and isinstance(m.id, str) and m.string and not m.fuzzy}


def _(text: str, *, unit: str | None = None) -> str:
    """``text`` in the learner's language: the unit's catalog first (its test hints), then the grader's; ``text``
    itself where neither translates it, and always in English."""
    if not text or language() == "en":
        return text
    for path in ((catalog_path(unit),) if unit else ()) + (catalog_path(),):
        found = _read(path).get(text)
        if found:
            return found
    return text


def N_(text: str) -> str:
    """Marks ``text`` for the catalog where it is defined; translate it with :func:`_` where it is shown."""
    return text


def localized(path: Path) -> Path:
    """``README.md`` → ``README.zh.md`` (and so on) in Chinese when that file exists; ``path`` otherwise."""
    if language() == "en":
        return path
    other = path.with_name(f"{path.stem}.{language()}{path.suffix}")
    return other if other.is_file() else path


# ---- text on a terminal: columns, not characters --------------------------------------------------------------

# a wide character (Chinese, full-width forms: East Asian Width W or F) takes two terminal columns
_WIDE = ("W", "F")
# Chinese punctuation that must not start a line (it stays with the character before) or end one (with the next)
_NO_LINE_START = frozenset("，。、；：？！）》」』】〕〉…’”%")
_NO_LINE_END = frozenset("（《「『【〔〈‘“")
_ATOMS = re.compile(r"\s+|\S")


def char_columns(c: str) -> int:
    """The terminal columns of one character: 2 for a wide one, 0 for a combining mark or a format character."""
    if unicodedata.combining(c) or unicodedata.category(c) == "Cf":
        return 0
    return 2 if unicodedata.east_asian_width(c) in _WIDE else 1


def columns(text: str) -> int:
    """How many terminal columns ``text`` takes (a Chinese character two, a Latin letter one)."""
    return sum(char_columns(c) for c in text)


def pad(text: str, width: int) -> str:
    """``text`` followed by spaces up to ``width`` columns (``f"{text:<{width}}"`` counts characters)."""
    return text + " " * max(0, width - columns(text))


def _atoms(line: str) -> list[str]:
    """The pieces a line may break between: runs of whitespace, words of narrow characters, and single wide
    characters (Chinese breaks between any two), each closing punctuation glued to what precedes it and each
    opening one to what follows."""
    atoms: list[str] = []
    for m in _ATOMS.finditer(line):
        c = m.group()
        glue_left = atoms and not atoms[-1].isspace() and (
            c in _NO_LINE_START or atoms[-1][-1] in _NO_LINE_END
            or (not c.isspace() and char_columns(c) < 2 and char_columns(atoms[-1][-1]) < 2))
        if glue_left:
            atoms[-1] += c
        else:
            atoms.append(c)
    return atoms


def wrap(text: str, width: int = 100) -> str:
    """``text`` wrapped to lines of at most ``width`` terminal columns (``textwrap.fill`` counts characters, and a
    Chinese character takes two columns): Latin words break at spaces, Chinese between characters, a word longer
    than a line is cut; each line of ``text`` wraps on its own (blank lines and leading indentation stay)."""
    return "\n".join(_wrap_line(line, max(1, width)) for line in text.split("\n"))


def _wrap_line(line: str, width: int) -> str:
    lines: list[str] = []
    cur, used, space = "", 0, ""
    for atom in _atoms(line):
        if atom.isspace():
            if cur:
                space = atom
            elif not lines:  # the paragraph's indentation
                cur, used = atom, columns(atom)
            continue
        w = columns(atom)
        gap = columns(space) if cur else 0
        if used + gap + w <= width:
            cur, used = cur + (space if cur else "") + atom, used + gap + w
        else:
            if cur.strip():  # (indentation alone, with a word longer than the line after it, is dropped)
                lines.append(cur.rstrip())
            while columns(atom) > width:  # longer than a line: cut it (one character at least per line)
                cut = 1
                while cut < len(atom) and columns(atom[: cut + 1]) <= width:
                    cut += 1
                lines.append(atom[:cut])
                atom = atom[cut:]
            cur, used = atom, columns(atom)
        space = ""
    if cur.strip() or not lines:
        lines.append(cur.rstrip() if cur.strip() else "")
    return "\n".join(lines)


# ---- course authors: extract and check -----------------------------------------------------------------------
