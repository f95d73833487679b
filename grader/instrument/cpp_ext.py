"""C++ extensions (pybind11) written by the learner: compiled by g++, cached, called across a process boundary.

A unit's ``<module>.cpp`` defines ``PYBIND11_MODULE(<module>, m)`` (or, written against CPython's C API alone,
``PyInit_<module>``: l01's corpus holds both kinds, and the C API's compile in 0.2 s, not 3.5 s); a test declares
each function it grades (``cpp_function(unit, module, name)``) and calls ``fn.run(check, *args)``: ``check`` is
trusted test code at module level of the test file, ``check(f, *args)`` with ``f`` the compiled function, and
returns plain data (JSON: numbers, strings, bools, lists, dicts), never the learner's objects.

* Build: ``g++ -O0 -shared -fPIC`` with pybind11's and Python's headers, cached per source hash under
  ``~/.cache/dripstone/cpp_ext`` (``$DRIPSTONE_CPP_EXT_CACHE`` overrides; in batch grading HOME is the sandbox's
  /tmp). pybind11 because its headers compile a small module in ~4 s cold; torch's ``cpp_extension`` (torch's
  headers, ninja) takes ~30 s or more, and ctypes releases the GIL around every call by itself, which would hide
  what ``py::gil_scoped_release`` teaches. A compile error is a SubmissionError naming the learner's file and line;
  it costs the tests of that file's functions only.
* A function whose body still holds the stub's ``DRIPSTONE_TODO("TODO: ...")`` is NotImplementedError (TODO),
  found in the text before anything is compiled.
* Run: each ``run`` forks a child (:func:`grader.core.child.run_function`) that loads the module and calls ``check``;
  what it returns travels back as JSON through a pipe (at most :data:`RESULT_CAP` bytes). A crash (SIGSEGV,
  abort) or a call past ``timeout_s`` (wall clock) fails that test only.
  In batch grading the whole of it (compile included) runs in the test's worker (``where_learner_runs``).
"""

from __future__ import annotations

import builtins
import contextlib
import faulthandler
import importlib.util
import json
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.core import child, target
from grader.core.target import SubmissionError
from grader.i18n import _
from grader.instrument import worker
from grader.instrument.cuda import CudaSource
from grader.instrument.cuda_cpu import digest, fresh_dir, user_cache

CACHE_ENV = "DRIPSTONE_CPP_EXT_CACHE"
CXX = "g++"
FLAGS = ("-O0", "-shared", "-fPIC", "-std=c++17", "-fvisibility=hidden", "-w")
CALL_S = 10.0  # a native call here takes milliseconds: a hang is stopped long before the worker's own limit
RESULT_CAP = 64 * 2**20  # the JSON answer of one call (the worker's own reply cap is 256 MiB)
OUTPUT_TAIL = 2000  # bytes of the child's stdout and stderr shown after a crash or a hang


class CppCompileError(SubmissionError):
    """g++ rejected the learner's .cpp file."""

    failure_kind = "submission"


class NativeCrash(AssertionError):
    """The learner's native code killed its process (a signal, or an exit)."""

    failure_kind = "exception"


class NativeTimeout(AssertionError):
    """The learner's native call did not return within the wall-clock limit."""

    failure_kind = "timeout"


def cache_root() -> Path:
    return user_cache("cpp_ext", CACHE_ENV)


def include_dirs() -> list[str]:
    import pybind11

    return [pybind11.get_include(), sysconfig.get_paths()["include"]]


def build(text: str, label: str, module: str) -> Path:
    """The extension built from ``text`` (cached by hash): its ``.so`` path; CppCompileError names the line."""
    if shutil.which(CXX) is None:
        raise RuntimeError(f"{CXX} not found: C++ exercises need a C++ compiler (Debian/Ubuntu: build-essential)")
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    final = cache_root() / digest(text, module, *FLAGS, *include_dirs(), sys.version)  # not the label: any folder hits
    if not (final / f"{module}{suffix}").is_file():
        with fresh_dir(final) as tmp:
            (tmp / f"{module}.cpp").write_text(text)
            incs = [f"-I{d}" for d in include_dirs()]
            cmd = [CXX, *FLAGS, *incs, f"{module}.cpp", "-o", f"{module}{suffix}"]
            done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, timeout=300)
            if done.returncode:
                raise CppCompileError(compile_error(done.stderr, f"{module}.cpp", label, text))
    return final / f"{module}{suffix}"


def compile_error(log: str, name: str, label: str, text: str) -> str:
    """``label line N: compile error (g++): <message>: `<the line>` `` then the log's tail."""
    log = re.sub(rf"(?m)^{re.escape(name)}:", f"{label}:", log)
    lines = text.splitlines()
    m = (re.search(rf"^{re.escape(label)}:(\d+):\d+: (?:fatal )?error: (.*)$", log, flags=re.M)
         or re.search(rf"^{re.escape(label)}:(\d+):\d+:\s+(required from here)", log, flags=re.M))
    if m is None:
        return f"{label}: g++ could not compile it:\n{log.strip()[-3000:]}"
    lineno = int(m.group(1))
    code = lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""
    return f"{label} line {lineno}: compile error (g++): {m.group(2).strip()}: `{code}`\n{log.strip()[-3000:]}"


@dataclass(frozen=True)
class CppFunction:
    """A function of the target's ``<unit>/<module>.cpp`` that a test grades (``grade`` takes it)."""

    unit: str
    module: str
    name: str

    def run(self, check: Callable[..., Any], *args: Any, timeout_s: float = CALL_S) -> Any:
        """``check(f, *args)`` in a forked child, ``f`` the compiled function; its result (JSON data) here."""
        kind, *rest = worker.where_learner_runs(_build_and_run, self, check, args, timeout_s)
        if kind == "value":
            return rest[0]
        if kind == "raised":
            exc_type = getattr(builtins, rest[0], None)
            if isinstance(exc_type, type) and issubclass(exc_type, Exception):
                raise exc_type(rest[1])
            raise RuntimeError(f"{rest[0]}: {rest[1]}")
        exc = {"todo": NotImplementedError, "compile": CppCompileError, "crash": NativeCrash,
               "timeout": NativeTimeout}[kind]
        raise exc(rest[0])


def cpp_function(unit: str, module: str, name: str) -> CppFunction:
    """Declare a C++ extension function exercise: ``name`` of the target's ``<unit>/<module>.cpp``."""
    return CppFunction(unit, module, name)


def _build_and_run(fn: CppFunction, check: Callable[..., Any], args: tuple[Any, ...], timeout_s: float) -> list:
    """Where the learner's code runs: TODO check, build, then the call in a child; a tagged list (plain data)."""
    root = target.target_root()
    path = root / fn.unit / f"{fn.module}.cpp"
    label = f"{target.display_path(root)}/{fn.unit}/{fn.module}.cpp"
    if not path.is_file():
        return ["compile", f"{label} not found: restore it from exercises/ (git checkout -- {label})"]
    try:
        CudaSource(path, label, path.read_text()).require_done(fn.name)
        so = build(path.read_text(), label, fn.module)
    except NotImplementedError as exc:
        return ["todo", str(exc)]
    except CppCompileError as exc:
        return ["compile", str(exc)]
    return _in_child(so, fn, check, args, timeout_s)


def _in_child(so: Path, fn: CppFunction, check: Callable[..., Any], args: tuple[Any, ...], timeout_s: float) -> list:
    out = child.run_function(lambda: _child(so, fn, check, args), wall_s=timeout_s, result_cap=RESULT_CAP,
                             output_cap=OUTPUT_TAIL)
    tail = out.output.decode(errors="replace").strip()
    output = f"\nits output:\n{tail}" if tail else ""
    if out.kind == child.WALL:
        return ["timeout", f"{fn.name} did not return within {timeout_s:g} s (wall clock): an endless loop? "
                           f"It was stopped.{output}"]
    if out.kind == child.TOO_BIG:
        return ["crash", _("{name} returned more than {mib} MiB: it was stopped").format(
            name=fn.name, mib=RESULT_CAP >> 20)]
    if out.signal is not None:
        sig = signal.Signals[out.signal]
        return ["crash", f"{fn.name} crashed the process: {sig.name}, {_SIGNALS.get(sig, 'killed by a signal')}"
                         f"{output}"]
    with contextlib.suppress(ValueError):
        reply = json.loads(out.result)
        if isinstance(reply, list) and reply:
            return reply
    return ["crash", f"{fn.name} ended its process (exit status {out.code}) without an "
                     f"answer{output}"]


_SIGNALS = {
    signal.SIGSEGV: "segmentation fault: a read or write through a pointer to memory the process does not own "
                    "(a null or stale pointer, an index past the end)",
    signal.SIGBUS: "bus error: a pointer to memory that is not mapped as it should be",
    signal.SIGABRT: "abort: an uncaught C++ exception outside pybind11, or a failed assert",
    signal.SIGFPE: "arithmetic fault: an integer division by zero",
}


def _child(so: Path, fn: CppFunction, check: Callable[..., Any], args: tuple[Any, ...]) -> bytes:
    """In the child: load the module, run ``check``, the tagged answer as JSON (never returns into the grader)."""
    faulthandler.disable()  # pytest's handler writes to its own copy of stderr: a crash is reported here instead
    try:
        if "torch" in sys.modules:  # OpenMP's pool does not survive a fork
            sys.modules["torch"].set_num_threads(1)
        spec = importlib.util.spec_from_file_location(fn.module, so)
        mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
        f = getattr(mod, fn.name, None)
        if f is None:
            reply = ["compile", f"{fn.unit}/{fn.module}.cpp defines no `{fn.name}`: keep the stub's m.def(...)"]
        else:
            try:
                reply = ["value", check(f, *args)]
            except Exception as exc:  # the learner's error (pybind11 turns C++ exceptions into these)
                reply = ["raised", type(exc).__name__, str(exc)]
        return json.dumps(reply).encode()
    except BaseException as exc:
        return json.dumps(["crash", f"{fn.name}: {type(exc).__name__}: {exc}"]).encode()
