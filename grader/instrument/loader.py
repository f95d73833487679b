"""Learner code loaded by file path from the target (``load_module("l23_online_softmax", "softmax")``).

Nothing is imported by name from ``exercises`` or ``solutions``: the file is read from the target folder
(grader/core/target.py), executed as a module of its own name, and cached by path. Every way loading can fail is a
:class:`SubmissionError` naming the file, the problem and the fix. A module that uses Triton and is loaded to be
interpreted on the CPU gets the interpreter's fixes first (grader/instrument/interpreter_fixes.py), so kernels
graded on the CPU compute what the GPU computes.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

from grader.core import target
from grader.core.target import SubmissionError, display_path, learner_frame, target_root


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
_FRESH = [0]  # copies made by load_fresh (their names)
_RAN = [False]  # a learner module was executed in this process (or in the one it was forked from, before the fork)
_BEFORE_FIRST: list[tuple[int, Callable[[], object]]] = []  # (pid that asked, hook): run once, before _RAN is set


def before_learner_code(hook: Callable[[], object]) -> bool:
    """Run ``hook()`` in this process just before the first learner module executes in it (False, and nothing
    registered, where one already has). A process forked from this one does not run it."""
    if _RAN[0]:
        return False
    _BEFORE_FIRST.append((os.getpid(), hook))
    return True


def learner_code_ran() -> bool:
    """Whether any learner module's code has run in this process: objects it made may still be reachable
    (:mod:`grader.instrument.clean`)."""
    return _RAN[0]


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
    module = _execute(path, name, shown, interpret)
    if interpret and _uses_triton(module):  # kernels graded on the CPU must compute what the GPU computes
        from grader.instrument import interpreter_fixes  # torch and Triton: only modules with kernels need them

        interpreter_fixes.install()  # (patches the interpreter before any kernel runs)
    _CACHE[key] = _CACHE[path, interpret] = module
    return module


def _execute(path: Path, name: str, shown: str, interpret: bool) -> ModuleType:
    """Run ``path`` as a new module named ``name`` (kept in sys.modules); SubmissionError for what it raised."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    if not _RAN[0]:
        hooks, _BEFORE_FIRST[:] = list(_BEFORE_FIRST), []
        for pid, hook in hooks:
            if pid == os.getpid():
                hook()
    sys.modules[name] = module  # dataclasses and pickling look modules up here
    _RAN[0] = True  # from here on, objects the learner's code makes may outlive it in this process
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
    return module


def load_fresh(unit: str, module: str, *, interpret: bool = True) -> ModuleType:
    """A new copy of the target's ``<unit>/<module>.py``, its module-level code run again (never cached).

    For a measurement of what the learner's code allocates (:mod:`grader.instrument.allocations`): made inside the
    measured window, in a process where the cached copy was loaded before it, everything the new copy allocates,
    at import or later, is the window's, and nothing it references predates the window (its own globals, classes
    and closures are new; the old copy's are not reachable from its code without reflection, which the audit
    refuses)."""
    root = target_root()
    path = root / unit / f"{module}.py"
    shown = f"{display_path(root)}/{unit}/{module}.py"
    if not path.is_file():
        raise SubmissionError(f"{shown} not found: restore it from exercises/ (git checkout -- {shown})")
    _FRESH[0] += 1
    return _execute(path, f"_dripstone_fresh_{_FRESH[0]}_{os.getpid()}_{path.stem}", shown, interpret)


def _uses_triton(module: ModuleType) -> bool:
    """Whether a module imported triton or defines kernels (ledger modules don't: no torch for them)."""
    return any(type(v).__module__.startswith("triton") or getattr(v, "__name__", "").startswith("triton")
               for v in vars(module).values())


def _last_frame_in(path: Path, exc: BaseException) -> str:
    frame = learner_frame(exc, path)
    return f" line {frame.lineno}" if frame is not None else ""


def load_module(unit: str, module: str, *, interpret: bool = True) -> ModuleType:
    """The target's ``<unit>/<module>.py``."""
    root = target_root()
    path = root / unit / f"{module}.py"
    return load_file(path, interpret=interpret, label=f"{display_path(root)}/{unit}/{module}.py")


def load_reference(module: str, *, interpret: bool = True) -> ModuleType:
    """A tuned reference kernel from ``kernels_ref/`` (trusted; never part of a submission)."""
    return load_file(target.REPO_ROOT / "kernels_ref" / f"{module}.py", interpret=interpret)
