"""Child processes around learner code: the one place that starts, limits, waits for, kills and reaps them.

Every process the grader starts around learner code goes through here: the batch worker
(:mod:`grader.instrument.worker`), a C++ extension's call (``cpp_ext``), the CPU executor's launch processes
(``cuda_cpu``, an exec'd runner binary) and the gloo ranks (``ranks``). Each child:

* dies with its parent: ``PR_SET_PDEATHSIG`` SIGKILL, armed in the child, which then checks that its parent is
  still the process that forked it (a parent that ended before the child could arm: the child exits at once).
  The "parent" of PDEATHSIG is the *thread* that forked: start children from a thread that outlives them;
* is the leader of its own process group, set in both processes (no window without the group): killing the child
  kills the group, so whatever it forked ends with it; when the child ends, its group is killed before it is reaped;
* runs under the resource limits it is given (:class:`Limits`: CPU seconds, address space, open files, file size;
  core dumps off unless asked);
* may run a caller's ``setup`` hook first (the ranks' box and seccomp filter, the worker's closed descriptors);
* in the one-shot helpers (:func:`run_function`, :func:`run_program`) runs under a wall-clock limit and sends its
  result through a pipe capped at ``result_cap`` bytes: data only (bytes, JSON), never objects.

What happened is one :class:`Outcome` (exited with a code / killed by a signal, by name / timed out on the wall
clock or on CPU seconds / result too big / no result); callers turn it into their own learner-facing messages.
Persistent children (the worker with its request/reply protocol, the ranks watched through shared pages) use
:func:`start` and the returned :class:`Child`'s ``poll``/``stop``, with :func:`write_frame`/:func:`read_frame`
for length-prefixed messages under a deadline and a size cap. Linux (PDEATHSIG, pidfd); other systems get the
rest.
"""

from __future__ import annotations

import contextlib
import gc
import os
import resource
import select
import signal
import struct
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

PR_SET_PDEATHSIG = 1  # prctl(2)
EXIT_ORPHAN = 75  # a child whose parent ended before it could arm PDEATHSIG (grader.core.timeout.EXIT_STUCK)
EXIT_RAISED = 3  # a forked function (or its setup) raised: the traceback went to its stderr
EXIT_EXEC_FAILED = 127
POLL_S = 0.05  # where no pidfd tells a child's end: how often it is looked for

EXITED, SIGNALED, WALL, CPU, TOO_BIG, NO_RESULT = "exited", "signaled", "wall", "cpu", "too big", "no result"

_FRAME = struct.Struct("<Q")


class TooBig(Exception):
    """A message or result over its byte cap."""


@dataclass(frozen=True)
class Limits:
    """Resource limits set in the child (``setrlimit``) before anything else of it runs; None leaves one as it is."""

    cpu_s: int | None = None  # RLIMIT_CPU: SIGXCPU at this many CPU seconds, SIGKILL one second later
    address_bytes: int | None = None  # RLIMIT_AS
    open_files: int | None = None  # RLIMIT_NOFILE
    file_bytes: int | None = None  # RLIMIT_FSIZE
    core_dumps: bool = False  # RLIMIT_CORE 0 unless True

    def apply(self) -> None:
        pairs = [(resource.RLIMIT_CPU, self.cpu_s), (resource.RLIMIT_AS, self.address_bytes),
                 (resource.RLIMIT_NOFILE, self.open_files), (resource.RLIMIT_FSIZE, self.file_bytes)]
        if not self.core_dumps:
            pairs.append((resource.RLIMIT_CORE, 0))
        for which, value in pairs:
            if value is not None:
                _, hard = resource.getrlimit(which)
                soft = value if hard == resource.RLIM_INFINITY else min(value, hard)
                # CPU: SIGKILL a second after SIGXCPU, so that ignoring SIGXCPU does not help
                top = soft + 1 if which == resource.RLIMIT_CPU else soft
                resource.setrlimit(which, (soft, top if hard == resource.RLIM_INFINITY else min(top, hard)))


@dataclass(frozen=True)
class Outcome:
    """How a child ended, and what it sent. ``kind`` is one of EXITED, SIGNALED, WALL, CPU, TOO_BIG, NO_RESULT."""

    kind: str
    code: int | None = None  # its exit status, when it exited
    signal: str | None = None  # the signal that ended it, by name ("SIGSEGV"), when one did
    result: bytes = b""  # what it sent through the result pipe (a program's stdout), up to the cap
    output: bytes = b""  # its captured output (the last ``output_cap`` bytes)
    cpu_s: float = 0.0  # CPU seconds it used (user + system)
    wall_s: float = 0.0

    @property
    def returncode(self) -> int:
        """As :mod:`subprocess` says it: the exit status, or minus the signal's number."""
        if self.signal is not None:
            return -int(signal.Signals[self.signal])
        return self.code if self.code is not None else 0

    @property
    def timed_out(self) -> bool:
        return self.kind in (WALL, CPU)

    def how(self) -> str:
        """``killed by SIGSEGV`` or ``exit status 3``: how the process ended, as the callers' messages say it."""
        if self.signal is not None:
            return f"killed by {self.signal}"
        return f"exit status {self.code}"


def _outcome(status: int, usage: resource.struct_rusage | None, limits: Limits | None, **kw: object) -> Outcome:
    cpu = (usage.ru_utime + usage.ru_stime) if usage is not None else 0.0
    if os.WIFSIGNALED(status):
        sig = signal.Signals(os.WTERMSIG(status))
        over_cpu = limits is not None and limits.cpu_s is not None and (
            sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= limits.cpu_s))
        kind = kw.pop("kind", None) or (CPU if over_cpu else SIGNALED)
        return Outcome(kind, None, sig.name, cpu_s=cpu, **kw)  # type: ignore[arg-type]
    kind = kw.pop("kind", None) or EXITED
    return Outcome(kind, os.waitstatus_to_exitcode(status), None, cpu_s=cpu, **kw)  # type: ignore[arg-type]


def die_with_parent(parent: int, code: int = EXIT_ORPHAN) -> None:
    """In a child: SIGKILL when ``parent`` (the pid that forked it) ends; exit ``code`` at once when it already has
    (the race between the fork and this call). Linux only; elsewhere nothing."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(code)


@dataclass
class Child:
    """A started child: its pid (also its process group), and once it ended, its :class:`Outcome`."""

    pid: int
    limits: Limits | None = None
    started: float = field(default_factory=time.monotonic)
    outcome: Outcome | None = None

    def exited(self) -> bool:
        """Whether it ended (without reaping it: its pid and group stay its own)."""
        if self.outcome is not None:
            return True
        try:
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        return info is not None and info.si_pid == self.pid

    def poll(self, **kw: object) -> Outcome | None:
        """Its outcome if it ended (its group is killed, then it is reaped), else None."""
        if self.outcome is None and self.exited():
            return self.stop(**kw)
        return self.outcome

    def kill(self) -> None:
        """SIGKILL to its group and to it, without reaping (no effect on one that already exited)."""
        if self.outcome is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def stop(self, **kw: object) -> Outcome:
        """Kill its group and it (no effect on one that already exited: its status is kept), reap it."""
        if self.outcome is not None:
            return self.outcome
        self.kill()
        wall = time.monotonic() - self.started
        try:
            _, status, usage = os.wait4(self.pid, 0)
        except ChildProcessError:  # reaped elsewhere
            self.outcome = Outcome(NO_RESULT, None, None, wall_s=wall, **kw)  # type: ignore[arg-type]
            return self.outcome
        self.outcome = _outcome(status, usage, self.limits, wall_s=wall, **kw)
        return self.outcome


def _child_prologue(parent: int, limits: Limits | None) -> None:
    die_with_parent(parent)
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    (limits or Limits()).apply()


def start(target: Callable[[], object], *, setup: Callable[[], object] | None = None,
          limits: Limits | None = None) -> Child:
    """Fork a child that runs ``setup()`` then ``target()`` and exits (0; :data:`EXIT_RAISED` with the traceback on
    its stderr if either raised); it never returns into the caller. The caller talks to it through descriptors of
    its own (the child closes what it must not hold in ``setup``)."""
    parent = os.getpid()
    gc.freeze()  # the child's collections leave the parent's objects alone: no copy of their pages
    try:
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                _child_prologue(parent, limits)
                if setup is not None:
                    setup()
                target()
            except BaseException:  # everything ends here: the caller sees the status
                with contextlib.suppress(Exception):
                    traceback.print_exc()
                code = EXIT_RAISED
            finally:
                with contextlib.suppress(Exception):
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(code)
    finally:
        if os.getpid() == parent:
            gc.unfreeze()
    with contextlib.suppress(OSError):
        os.setpgid(pid, pid)  # also here: no window in which the group does not exist yet
    return Child(pid, limits)


def run_function(fn: Callable[[], bytes | None], *, wall_s: float, result_cap: int, output_cap: int = 0,
                 setup: Callable[[], object] | None = None, limits: Limits | None = None) -> Outcome:
    """``fn()`` in a forked child; the bytes it returns are its result (written to a pipe, read here up to
    ``result_cap``). ``output_cap`` > 0: its stdout and stderr (descriptors 1 and 2) are captured, the last
    ``output_cap`` bytes kept; 0: they are the caller's."""
    res_r, res_w = os.pipe()
    out_r, out_w = os.pipe() if output_cap else (-1, -1)

    def setup_child() -> None:
        os.close(res_r)
        if output_cap:
            os.close(out_r)
            os.dup2(out_w, 1)
            os.dup2(out_w, 2)
            os.close(out_w)
            import io  # Python's own streams to those descriptors too (a test runner may have replaced them)

            sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", buffering=0, closefd=False), write_through=True)
            sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", buffering=0, closefd=False), write_through=True)
        if setup is not None:
            setup()

    def target() -> None:
        data = fn()
        view = memoryview(data or b"")
        while view:
            view = view[os.write(res_w, view):]

    try:
        child = start(target, setup=setup_child, limits=limits)
    except BaseException:
        for fd in (res_r, res_w, out_r, out_w):
            if fd >= 0:
                os.close(fd)
        raise
    os.close(res_w)
    if output_cap:
        os.close(out_w)
    return _collect(child, res_r, out_r, wall_s, result_cap, output_cap)


def run_program(argv: Sequence[str], *, wall_s: float, result_cap: int, output_cap: int,
                setup: Callable[[], object] | None = None, limits: Limits | None = None) -> Outcome:
    """``argv`` exec'd in a child (stdin /dev/null, no descriptor but 0-2): its stdout is the result (up to
    ``result_cap``), its stderr the output (the last ``output_cap`` bytes). OSError here if it cannot be exec'd."""
    res_r, res_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()  # close-on-exec: EOF when the exec succeeded, the error's text when it failed
    null = os.open(os.devnull, os.O_RDONLY)
    path, args = str(argv[0]), [str(a) for a in argv]

    def exec_child() -> None:
        for fd, to in ((null, 0), (res_w, 1), (out_w, 2)):
            os.dup2(fd, to)
        os.closerange(3, err_w)
        os.closerange(err_w + 1, 1 << 16)
        if setup is not None:
            setup()
        try:
            os.execv(path, args)
        except OSError as exc:
            os.write(err_w, f"{exc.errno} {exc.strerror}".encode())
            os._exit(EXIT_EXEC_FAILED)

    try:
        child = start(exec_child, limits=limits)
    finally:
        for fd in (res_w, out_w, err_w, null):
            os.close(fd)
    try:
        failed = _read_all(err_r)
    finally:
        os.close(err_r)
    if failed:
        os.close(res_r)
        os.close(out_r)
        child.stop()
        errno, _, text = failed.decode(errors="replace").partition(" ")
        raise OSError(int(errno) if errno.isdigit() else 0, text, path)
    return _collect(child, res_r, out_r, wall_s, result_cap, output_cap)


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _pidfd(pid: int) -> int:
    try:
        return os.pidfd_open(pid)
    except (OSError, AttributeError):
        return -1


def _collect(child: Child, res_r: int, out_r: int, wall_s: float, result_cap: int, output_cap: int) -> Outcome:
    """Read the result and output pipes until the child ends (or the deadline, or the cap), then kill its group and
    reap it. The pipes are closed here."""
    deadline = child.started + wall_s
    pidfd = _pidfd(child.pid)
    result, output = bytearray(), bytearray()
    open_fds = {res_r: result, **({out_r: output} if out_r >= 0 else {})}
    kind = None
    try:
        kind = _pump(child, res_r, out_r, open_fds, pidfd, deadline, result_cap, output_cap)
        if len(result) > result_cap:  # killed before its pipe closes: a write to a closed pipe would end it first
            child.kill()
    except BaseException:  # Ctrl-C while waiting: the child goes all the same
        child.stop()
        raise
    finally:
        for fd in open_fds:
            os.close(fd)
        if pidfd >= 0:
            os.close(pidfd)
    if len(result) > result_cap:
        kind = TOO_BIG
    keep = bytes(output[-output_cap:]) if output_cap else b""
    if kind is None and not result:
        outcome = child.stop(output=keep)
        if outcome.kind == EXITED:
            outcome = Outcome(NO_RESULT, outcome.code, None, b"", keep, outcome.cpu_s, outcome.wall_s)
        return outcome
    return child.stop(result=bytes(result[:result_cap]), output=keep, **({"kind": kind} if kind else {}))


def _pump(child: Child, res_r: int, out_r: int, open_fds: dict[int, bytearray], pidfd: int, deadline: float,
          result_cap: int, output_cap: int) -> str | None:
    """Move what the child writes into the buffers until it ends (None), the deadline passes (WALL) or the result
    passes its cap (None: the caller sees the size). Descriptors at EOF are closed and dropped from ``open_fds``."""
    result = open_fds[res_r]
    output = open_fds.get(out_r, bytearray())
    while True:
        if child.exited():
            for fd in open_fds:  # what it wrote before it ended; a grandchild holding the pipe does not count
                os.set_blocking(fd, False)
                with contextlib.suppress(BlockingIOError):
                    while chunk := os.read(fd, 1 << 16):
                        open_fds[fd].extend(chunk)
                        if fd == res_r and len(result) > result_cap:
                            break
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            return WALL
        watched = [*open_fds, *([pidfd] if pidfd >= 0 else [])]
        ready = select.select(watched, [], [], left if pidfd >= 0 else min(left, POLL_S))[0]
        for fd in ready:
            if fd == pidfd:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                os.close(fd)
                del open_fds[fd]
                continue
            open_fds[fd].extend(chunk)
            if fd == out_r and len(output) > 2 * max(output_cap, 1 << 16):
                del output[:-output_cap]
        if len(result) > result_cap:
            return None


# ---- length-prefixed messages between a parent and a persistent child (the batch worker's protocol)


def write_frame(fd: int, data: bytes) -> None:
    """``data`` with its length in front, all of it."""
    view = memoryview(_FRAME.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def read_frame(fd: int, *, cap: int, deadline: float | None = None, tick: Callable[[], None] | None = None,
               tick_s: float = 0.1) -> bytes | None:
    """One message written by :func:`write_frame`; None at EOF. TooBig for a message over ``cap`` bytes (said by its
    header, before it is read), TimeoutError at ``deadline`` (monotonic), and ``tick()`` every ``tick_s`` while
    waiting (it may raise to stop waiting)."""
    header = _read_exact(fd, _FRAME.size, deadline, tick, tick_s)
    if header is None:
        return None
    (size,) = _FRAME.unpack(header)
    if size > cap:
        raise TooBig(size)
    return _read_exact(fd, size, deadline, tick, tick_s)


def _read_exact(fd: int, n: int, deadline: float | None, tick: Callable[[], None] | None,
                tick_s: float) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if not select.select([fd], [], [], min(left, tick_s) if tick else left)[0]:
                if tick is not None:
                    tick()
                continue
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)
