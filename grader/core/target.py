"""Where learner code comes from: the *target* folder, laid out like ``exercises/``.

Tests never import ``exercises`` or ``solutions`` by name: the target is ``exercises/`` by default, ``solutions/``
for the self-test, or any submission folder (``DRIPSTONE_TARGET``); :func:`target_root` says which, and
grader/instrument/loader.py loads a unit's module from it by file path. A broken submission must cost only what it
breaks: every way loading can fail is a :class:`SubmissionError` naming the file, the problem and the fix.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import traceback
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
TARGET_ENV = "DRIPSTONE_TARGET"
# A unit folder: a lecture ``lNN_slug`` (two digits) or a capstone ``cN_slug`` / ``cNN_slug``.
UNIT_RE = re.compile(r"^(l\d{2}|c\d{1,2})_\w+$")


def is_unit(name: str) -> bool:
    """Whether ``name`` is a unit folder's name (``l23_online_softmax``, ``c3_serving``, ``c10_demo``)."""
    return UNIT_RE.fullmatch(name) is not None


class SubmissionError(Exception):
    """The learner's code could not be loaded or does not match the exercise's contract."""


_ROOTS: dict[str, Path] = {}


def target_root() -> Path:
    """The folder graded in this process: $DRIPSTONE_TARGET, else ``exercises/`` (resolved once per value: every
    learner call asks, and resolving walks the path)."""
    given = os.environ.get(TARGET_ENV) or ""
    if given not in _ROOTS:
        _ROOTS[given] = Path(given or REPO_ROOT / "exercises").resolve()
    return _ROOTS[given]


def display_path(path: Path) -> str:
    """A path as the learner knows it: relative to the repo when inside it."""
    with contextlib.suppress(ValueError):
        return str(path.relative_to(REPO_ROOT))
    return str(path)


def learner_frame(exc: BaseException, within: Path | None = None) -> traceback.FrameSummary | None:
    """The innermost frame of ``exc``'s traceback in the learner's code: in a file under ``within`` (a folder; the
    target by default) or in ``within`` itself (a file). The one place that says which line of a submission raised:
    the loader, the worker, the plugin and the rank runner all ask it."""
    root = within if within is not None else target_root()
    resolved = root.resolve()
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        path = Path(frame.filename)
        if path == root or path.is_relative_to(root) or path.resolve().is_relative_to(resolved):
            return frame
    return None


def tree_digest(folder: Path, skip: re.Pattern[str] | None = None) -> str:
    """SHA-256 of every file under ``folder``: its path (relative, POSIX) and bytes; a link as its target's text,
    never followed; paths ``skip`` matches left out (caches, corpora). Grade again when it changes."""
    h = hashlib.sha256()
    for p in sorted(q for q in folder.rglob("*") if q.is_symlink() or q.is_file()):
        rel = p.relative_to(folder).as_posix()
        if skip is not None and skip.search(rel):
            continue
        body = os.readlink(p).encode("utf-8", "surrogateescape") if p.is_symlink() else p.read_bytes()
        name = rel.encode("utf-8", "surrogateescape")
        h.update(b"%d:%s:%d:" % (len(name), name, len(body)) + body)
    return h.hexdigest()
