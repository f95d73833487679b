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

import functools
import os
from pathlib import Path

GRADER = Path(__file__).resolve().parent
REPO = GRADER.parent
LANGUAGES = ("en", "zh")
TRANSLATED = "zh"  # the language the catalogs translate into
LANG_ENV = "DRIPSTONE_LANG"


def language() -> str:
    """``"zh"`` or ``"en"``: DRIPSTONE_LANG, else the first locale variable that is set (POSIX order)."""
    chosen = os.environ.get(LANG_ENV, "").strip().lower()
    if not chosen:
        chosen = next((os.environ[v] for v in ("LC_ALL", "LC_MESSAGES", "LANG") if os.environ.get(v)), "").lower()
    return "zh" if chosen.startswith("zh") else "en"


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


# ---- course authors: extract and check -----------------------------------------------------------------------
