"""Rank processes in which no learner code has ever run before their first check (the ranks' memory windows).

A measurement of what the learner's code allocates (:mod:`grader.instrument.allocations`) is only sound if nothing
the learner's code made predates the window: a copy of the learner's module imported earlier in the process can
leave state in a process-wide registry that public API reaches (an attribute set on ``logging.getLogger(name)``,
a function's default, a class attribute of a library), where a fresh copy imported in the window picks it up
without allocating. Ranks are forked (:mod:`grader.instrument.ranks`), so a rank holds whatever its parent held:
the parent must be a process where no learner code ever ran.

:func:`run_here` has :func:`grader.instrument.ranks.run_here`'s signature and result; its ranks are forked

* from this process, where no learner module was ever executed in it (:func:`grader.instrument.loader.learner_code_ran`:
  batch grading's fresh worker, whose parent, the judge, never loads the submission);
* otherwise from a *clean server*, a process that never runs learner code itself: it only forks the ranks and
  reads their results as data, as :func:`ranks.run_here` does. Where a test module asked for it at collection
  (:func:`ahead`), the server is a fork of this process made just before the first learner module executes in it
  (:func:`grader.instrument.loader.before_learner_code`): a copy with the grader, torch and the test modules
  already imported, made in milliseconds. Otherwise (asked too late, or the first server died) it is a new
  interpreter, ``python -m grader.instrument.clean``, that imports torch and the test module (~2 s). Either is
  started through :func:`grader.core.child.start` (it dies with this process, its group is killed after it) and
  ended at exit; a process forked from this one (batch grading's worker) never uses this one's server.

Each rank then runs its checks in order: the first check of a run is the only one whose process had run no learner
code before it (a check that measures starts the run; :func:`pristine` says whether it may, and a measuring check
refuses to measure otherwise).
"""

from __future__ import annotations

import atexit
import importlib.util
import io
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from grader.core import child
from grader.instrument import loader, ranks

REPLY_CAP = 1 << 30  # the ranks' outcomes of one run (values, comm logs, failures): far less
STOP_S = 10.0
_server: _Server | None = None
_AHEAD: list[int] = []  # the pids whose test modules asked for a forked server (ahead)
_server_lock = threading.Lock()


def pristine() -> bool:
    """No learner module was ever executed in this process (nor in the process it was forked from before)."""
    return not loader.learner_code_ran()


def ahead() -> None:
    """Called by a test module at collection: fork the clean server from this process just before learner code
    first runs in it (nothing, where some already has: the first :func:`run_here` then starts an interpreter)."""
    if pristine() and os.getpid() not in _AHEAD:
        _AHEAD.append(os.getpid())
        loader.before_learner_code(_fork_server)


def _fork_server() -> None:
    global _server
    if _server is not None and _server.owner == os.getpid():
        return
    try:
        _server = _Server.fork()
    except OSError:  # no fork now: run_here starts an interpreter when it is needed
        _server = None
        return
    atexit.register(_server.stop)


def run_here(checks: list[tuple[str, Callable[..., Any]]], world_size: int, args: tuple, kwargs: dict,
             timeout_s: float, rules: dict[str, str], stall_s: float) -> dict[str, Any]:
    """:func:`grader.instrument.ranks.run_here`, its ranks forked from a process where no learner code ran."""
    if pristine():
        return ranks.run_here(checks, world_size, args, kwargs, timeout_s, rules, stall_s)
    request = {"checks": [(name, _reference(fn)) for name, fn in checks], "world_size": world_size, "args": args,
               "kwargs": kwargs, "timeout_s": timeout_s, "rules": rules, "stall_s": stall_s,
               "environ": dict(os.environ), "path": list(sys.path)}
    with _server_lock:
        return _ask(request)


def _reference(fn: Callable[..., Any]) -> tuple[str, str, str]:
    """A check by where it is defined (module-level function of a test file): the server imports it there."""
    module = sys.modules.get(fn.__module__)
    path = getattr(module, "__file__", None)
    if path is None or "." in fn.__qualname__ or getattr(module, fn.__qualname__, None) is not fn:
        raise ValueError(f"grader bug: {fn!r} is not a module-level function of a test file")
    return fn.__module__, path, fn.__qualname__


def _ask(request: dict[str, Any]) -> dict[str, Any]:
    import pickle

    import torch

    global _server
    if _server is None or _server.owner != os.getpid() or _server.process.poll() is not None:
        _server = _Server.start()
        atexit.register(_server.stop)
    try:
        child.write_frame(_server.requests, pickle.dumps(request))
        reply = child.read_frame(_server.replies, cap=REPLY_CAP)
    except (OSError, child.TooBig):
        reply = None
    if not reply:
        outcome = _server.stop()
        _server = None
        raise RuntimeError(f"grader: the clean rank server ended ({outcome.kind}, exit status {outcome.code}, "
                           f"signal {outcome.signal}): see the output above")
    return torch.load(io.BytesIO(reply), weights_only=True)


@dataclass
class _Server:
    """The server interpreter, started through :func:`grader.core.child.start` (it dies with this process, leads
    its own group, and its ranks go with it): requests on its stdin, replies on its stdout, its stderr ours."""

    process: child.Child
    requests: int
    replies: int
    owner: int  # the pid that started it: a process forked from that one must start its own

    @classmethod
    def start(cls) -> _Server:
        """A new interpreter (``python -m grader.instrument.clean``)."""
        argv = [sys.executable, "-m", __name__, str(os.getpid())]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        return cls._started(lambda: os.execve(argv[0], argv, env))

    @classmethod
    def fork(cls) -> _Server:
        """A fork of this process, where no learner code has run (the zygote: :func:`ahead`)."""
        return cls._started(_serve_forked)

    @classmethod
    def _started(cls, target: Callable[[], object]) -> _Server:
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()

        def setup() -> None:
            os.dup2(req_r, 0)
            os.dup2(rep_w, 1)
            os.closerange(3, 1 << 16)  # nothing else of this process's: its pipes, sockets, report files

        try:
            process = child.start(target, setup=setup)
        finally:
            os.close(req_r)
            os.close(rep_w)
        return cls(process, req_w, rep_r, os.getpid())

    def stop(self) -> child.Outcome:
        """End it (its requests closed: it exits; killed after STOP_S) and reap it: its CPU, and its ranks', then
        count as this process's children's."""
        if self.requests >= 0:  # once: a descriptor number closed twice may by then be another file's
            os.close(self.requests)
            self.requests = -1
        deadline = time.monotonic() + STOP_S
        while not self.process.exited() and time.monotonic() < deadline:
            time.sleep(0.01)
        outcome = self.process.stop()
        if self.replies >= 0:
            os.close(self.replies)
            self.replies = -1
        return outcome


# ---------------------------------------------------------------- the server (a new interpreter)


def _resolve(module_name: str, path: str, qualname: str) -> Callable[..., Any]:
    module = sys.modules.get(module_name)
    if module is None or getattr(module, "__file__", None) != path:
        spec = importlib.util.spec_from_file_location(module_name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    return getattr(module, qualname)


def _serve(parent: int) -> int:
    """The server as a new interpreter."""
    child.die_with_parent(parent, code=0)  # armed by core.child before the exec too; again here, as a new process
    return _serve_forked()


def _serve_forked() -> int:
    """The server's loop: requests on descriptor 0, replies on 1 (a fork of the grader's process, or :func:`_serve`)."""
    import pickle

    import torch
    import torch.distributed  # before the fork: the ranks must not import it each

    from grader.instrument import allocations  # noqa: F401  (the memory check's, imported once here, not per rank)

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the parent stops it
    replies = os.dup(1)  # the replies' own descriptor, closed in the ranks (closerange)
    os.dup2(2, 1)  # what anything here or in a rank prints goes to stderr, never into the replies
    sys.stdout = sys.stderr
    while (data := child.read_frame(0, cap=REPLY_CAP)) is not None:
        request = pickle.loads(data)
        os.environ.clear()
        os.environ.update(request["environ"])
        sys.path[:] = request["path"]
        checks = [(name, _resolve(*ref)) for name, ref in request["checks"]]
        if not pristine():
            raise RuntimeError("grader bug: the clean rank server ran learner code (importing a test module?)")
        raw = ranks.run_here(checks, request["world_size"], request["args"], request["kwargs"],
                             request["timeout_s"], request["rules"], request["stall_s"])
        buf = io.BytesIO()
        torch.save(raw, buf)
        child.write_frame(replies, buf.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(_serve(int(sys.argv[1])))
