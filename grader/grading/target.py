"""Where learner code comes from: the *target* folder, laid out like ``exercises/``.

Tests never import ``exercises`` or ``solutions`` by name. They ask this module for a unit's module
(``load_module("l23_online_softmax", "softmax")``) and get it loaded by file path from the target:
``exercises/`` by default, ``solutions/`` for the self-test, or any submission folder.

A broken submission must cost only what it breaks, so every way loading can fail becomes a
:class:`SubmissionError` with a message that names the file, the problem and the fix; the test that
needed the module fails with it, and every other test still runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import re
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

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


@contextlib.contextmanager
def triton_mode(*, interpret: bool) -> Iterator[None]:
    """Decorate kernels interpreted (CPU tiers) or compiled (gpu_perf): Triton reads this at @jit."""
    old = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "1" if interpret else "0"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TRITON_INTERPRET", None)
        else:
            os.environ["TRITON_INTERPRET"] = old


_CACHE: dict[tuple[Path, bool], ModuleType] = {}  # by the path asked for and by the resolved path


def load_file(path: Path, *, interpret: bool = True, label: str | None = None) -> ModuleType:
    """Load one Python file as a fresh module (cached per file and Triton mode)."""
    if (path, interpret) in _CACHE:  # every learner call asks: resolving the path each time cost ~0.4 ms
        return _CACHE[path, interpret]
    key = (path.resolve(), interpret)
    if key in _CACHE:
        _CACHE[path, interpret] = _CACHE[key]
        return _CACHE[key]
    shown = label or display_path(path)
    if not path.is_file():
        raise SubmissionError(f"{shown} not found: restore it from exercises/ (git checkout -- {shown})")
    name = f"_dripstone_{'interp' if interpret else 'gpu'}_{abs(hash(key)):x}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up here
    sys.dont_write_bytecode = True  # never write __pycache__ into a learner's folder
    try:
        with triton_mode(interpret=interpret):
            spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(name, None)
        raise SubmissionError(
            f"{shown} line {exc.lineno}: syntax error: {exc.msg}; fix it and grade again"
        ) from None
    except KeyboardInterrupt:  # Ctrl-C while the module loads: the learner's, not the module's (grading stops)
        sys.modules.pop(name, None)
        raise
    except BaseException as exc:  # anything at import time is the submission's fault
        sys.modules.pop(name, None)
        where = _last_frame_in(path, exc)
        raise SubmissionError(
            f"{shown}{where}: importing it raised {type(exc).__name__}: {exc}; "
            "code at module level must only define functions and kernels"
        ) from None
    if interpret and _uses_triton(module):  # kernels graded on the CPU must compute what the GPU computes
        from grader.kernels import interpreter_fixes  # (patches the interpreter before any kernel runs)

        interpreter_fixes.install()
    _CACHE[key] = _CACHE[path, interpret] = module
    return module


def _uses_triton(module: ModuleType) -> bool:
    """Whether a module imported triton or defines kernels (ledger modules don't: no torch for them)."""
    return any(type(v).__module__.startswith("triton") or getattr(v, "__name__", "").startswith("triton")
               for v in vars(module).values())


def _last_frame_in(path: Path, exc: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]
    return f" line {frames[-1].lineno}" if frames else ""


def load_module(unit: str, module: str, *, interpret: bool = True) -> ModuleType:
    """The target's ``<unit>/<module>.py``."""
    root = target_root()
    path = root / unit / f"{module}.py"
    return load_file(path, interpret=interpret, label=f"{display_path(root)}/{unit}/{module}.py")


def load_reference(module: str, *, interpret: bool = True) -> ModuleType:
    """A tuned reference kernel from ``kernels_ref/`` (trusted; never part of a submission)."""
    return load_file(REPO_ROOT / "kernels_ref" / f"{module}.py", interpret=interpret)


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
