"""Several processes on gloo, for the units whose learner code is distributed (ring all-reduce, DDP, ZeRO, TP).

A test file defines a per-rank check at module level and runs it on ``world_size`` ranks::

    def check_ring(rank: int, world_size: int, numel: int) -> dict:
        x = torch.arange(numel, dtype=torch.float64) * (rank + 1)
        with uncounted():  # the grader's own reference: neither counted nor refused
            want = x.clone(); dist.all_reduce(want)
        return {"got": ring_all_reduce(x), "want": want}

    run = run_ranks(check_ring, 3, 1000, refuse=("all_reduce",))
    run.results[rank]   what check returned on that rank (tensors allowed: shipped as torch.save bytes)
    run.comm[rank]      [(call_name, nbytes), ...]: every outermost torch.distributed call of that rank
    run.sent_bytes(rank)  the bytes it passed to send/isend

Inside a check, ``comm_log()`` is the (call, nbytes) list so far (slice it around one learner call) and
``uncounted()`` hides the grader's own reference calls; ``refuse=COLLECTIVES`` allows point-to-point only.
``rank_seed()`` is the check's secret seed on this rank (drawn in the rank, held by no other process): build what
differs between ranks from it, and the expected values from ``run.seeds`` (every rank's), so that no rank can
rebuild another's inputs from a seed written in the test.
A stub (NotImplementedError on every rank) comes back as NotImplementedError, so the scoreboard reads TODO.

How the ranks run: ``world_size`` (2-4) children forked (:func:`grader.core.child.start`: each dies with its parent
and leads its own process group) from the process where the learner's code runs
(``make grade``: the pytest process; batch grading: the test's worker, through ``where_learner_runs``, so the
judge never loads the submission), each with ``torch.set_num_threads(1)``, ``init_process_group("gloo")``
on 127.0.0.1 (a TCPStore of the parent on a free port), stdout/stderr into a log file of the rank.
Forking costs 0.1-0.3 s for 2-4 ranks; spawning would cost seconds (each child re-imports torch).

Each rank is boxed before any learner code runs in it (see "the rank's box" below): namespaces of its own (the file
system read-only, private temporary folders, its own /proc and IPC), inherited descriptors closed and shared memory
read-only, then, after gloo's set-up, a seccomp filter; a call that could carry data around torch.distributed fails
the check with REFUSED_CALL. What differs between ranks comes from ``rank_seed()``, which no other rank can know.

What fails, as :class:`RankFailure` (an AssertionError: the test fails with it), per rank with its last line:

* a deadlock: every rank still running has been waiting (main thread off the CPU, ``/proc/<pid>/schedstat``)
  for ``stall_s`` seconds: reported within ~2 s, with the call each rank waits in (gloo's blocking ``send``
  waits for the matching ``recv`` at any size, so a ring of "send then recv" on every rank deadlocks);
* an exception in a rank (its type, message and the last line of the learner's code in its traceback);
* a rank that died (exit status or signal, and the last line it printed);
* the wall-clock ``timeout_s`` (every child is killed; the line each rank was running, from faulthandler);
* a refused call: ``refuse=("all_reduce", ...)`` makes those calls raise RuntimeError naming the call and
  the rule (``refuse={"all_reduce": "why"}`` gives the rule per name).

Grouping: processes start once per call. ``run_ranks({"a": check_a, "b": check_b}, P, ...)`` runs the checks
one after the other in the same processes (a barrier between two) and returns a :class:`RankRuns`:
``runs["a"]`` is check a's :class:`RankRun`, or raises check a's RankFailure; one check's exception, deadlock or
crash costs only that check (after a deadlock or a crash the processes are started again for the next one).
Cache the grouped run per world size in the test module (``functools.cache`` on a module-level function) so
that all of a unit's tests of one world size share one start.

The communication log wraps send/recv/isend/irecv and every collective, with ONE wrapper object per function
installed in both ``torch.distributed`` and ``torch.distributed.distributed_c10d`` (``batch_isend_irecv`` tells
a send from a receive by ``op.op is isend``), and ``Work.wait`` (to know where a rank waits). A call made
inside another (``all_gather_into_tensor`` calls ``all_gather_single``) is not logged again, but a refused
name is refused at any depth. The wrappers live only in the children: nothing is patched in this process.
A learner module loaded before the fork that did ``from torch.distributed import all_reduce`` has that name
pointed at the wrapper in each child; any other route to the process group (a function object kept from before
the fork, ``ProcessGroup.allreduce`` called directly, the dispatcher's ``torch.ops.c10d.*`` and functional
collectives, a C++ reducer) is refused, since it could be neither counted nor refused: the pybind methods are
guarded, every c10d op of the dispatcher is refused outside a logged call by a kernel of ours at its Autograd key,
and so are the functional collectives' ops where Python reaches them.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import functools
import io
import linecache
import mmap
import os
import re
import shutil
import signal
import socket
import struct
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from grader.core import child
from grader.i18n import N_

WORLD_SIZES = (2, 3, 4)
STALL_S = 1.5  # every rank off the CPU this long, no call made: a deadlock
POLL_S = 0.05
BUSY_NS = 20_000_000  # a rank whose threads ran or waited for a CPU this long since it last moved is not stuck
KILL_GRACE_S = 0.3  # after SIGUSR1 (faulthandler writes the rank's stack), before SIGKILL
P2P = ("send", "recv", "isend", "irecv")
SENDS = ("send", "isend")
COLLECTIVES = (
    "all_reduce", "all_reduce_coalesced", "all_gather", "all_gather_into_tensor", "all_gather_single",
    "all_gather_coalesced", "all_gather_object", "all_to_all", "all_to_all_single", "barrier", "monitored_barrier",
    "broadcast", "broadcast_object_list", "gather", "gather_object", "reduce", "reduce_scatter",
    "reduce_scatter_tensor", "reduce_scatter_single", "scatter", "scatter_object_list", "send_object_list",
    "recv_object_list",
)
REFUSE_RULE = "this exercise is built from point-to-point calls only (send/recv/isend/irecv, batch_isend_irecv)"
_BLOCKING = {"send", "recv", *COLLECTIVES}

# one slot per rank in a shared page: check index, state, calls made, then two texts (the call, the line)
_SLOT = struct.Struct("<iiq120s200si")  # ..., then how many shared mappings the rank made read-only
_STARTING, _RUNNING, _IN_CALL, _CHECK_DONE, _FINISHED = range(5)
_RECORD = struct.Struct("<iq")  # a check's result in a rank's results file: check index, length, torch.save bytes
_STATE_WORDS = {_STARTING: "starting", _RUNNING: "running", _IN_CALL: "waiting", _CHECK_DONE: "done with the check",
                _FINISHED: "finished"}


class RankFailure(AssertionError):
    """A multi-process check failed: deadlock, a rank's exception or death, the timeout, a refused call."""

    def __init__(self, message: str, per_rank: Mapping[int, str] | None = None, kind: str = "failed",
                 raised: Mapping[int, str] | None = None, comm: list | None = None) -> None:
        super().__init__(message)
        self.per_rank = dict(per_rank or {})
        self.kind = kind  # "deadlock", "raised", "crashed", "timeout", "not run"
        self.raised = dict(raised or {})  # rank -> the type name of what it raised
        self.comm = comm  # "raised": every rank's log (None for a rank that wrote nothing); else None
        self.failure_kind = kind if kind in ("timeout", "deadlock") else "exception"  # for the plugin's hint

    def rebuilt(self) -> BaseException:
        """What a test raises: a stub's NotImplementedError (TODO) or a SubmissionError raised on every rank stays
        what it is, so the scoreboard reads TODO or "fix your file"; anything else is this RankFailure."""
        types = set(self.raised.values())
        if self.kind == "raised" and len(types) == 1 and len(self.raised) == len(self.per_rank):
            (name,) = types
            if name == "NotImplementedError":  # the stub's own message, as a single process shows it
                first = self.per_rank[min(self.per_rank)]
                return NotImplementedError(first.split("NotImplementedError: ", 1)[-1])
            if name == "SubmissionError":
                from grader.core.target import SubmissionError

                return SubmissionError(str(self))
        return RankFailure(str(self), self.per_rank, self.kind, self.raised)


@dataclass
class RankRun:
    """One check's outcome on every rank."""

    world_size: int
    results: list[Any]
    comm: list[list[tuple[str, int]]]
    seconds: float = 0.0  # the check's wall time (the slowest rank)
    startup_s: float = 0.0  # fork + init_process_group of the processes that ran it
    seeds: list[int] = field(default_factory=list)  # each rank's secret seed for this check (rank_seed())

    def sent_bytes(self, rank: int) -> int:
        """Bytes ``rank`` handed to send/isend (batch_isend_irecv's sends included)."""
        return sum(n for name, n in self.comm[rank] if name in SENDS)

    def calls(self, rank: int) -> list[str]:
        return [name for name, _ in self.comm[rank]]

    def largest_send(self, rank: int) -> int:
        return max((n for name, n in self.comm[rank] if name in SENDS), default=0)


def comm_log() -> list[tuple[str, int]]:
    """Inside a rank: the (call, nbytes) this check logged so far (slice it around one learner call)."""
    return list(_CHILD.log)


@contextlib.contextmanager
def uncounted() -> Iterator[None]:
    """Inside a rank: the grader's own torch.distributed calls (a reference), neither logged nor refused."""
    _CHILD.quiet += 1
    try:
        yield
    finally:
        _CHILD.quiet -= 1


# ---------------------------------------------------------------- the parent (where the learner's code runs)


def _time_limit(timeout_s: float) -> float:
    from grader.core import timeout
    from grader.instrument import worker

    limit = timeout_s
    if timeout.limit_s() > 0:
        limit = min(limit, timeout.limit_s())
    if os.environ.get(worker.ISOLATE_ENV) == "1":  # in batch grading's worker: stay within its call limit
        limit = min(limit, max(1.0, worker.call_timeout_s() - 3.0))
    return limit


def run_here(checks: list[tuple[str, Callable[..., Any]]], world_size: int, args: tuple, kwargs: dict,
              timeout_s: float, rules: dict[str, str], stall_s: float) -> dict[str, Any]:
    """Every check, in as few starts as failures allow; plain data (it may cross batch grading's worker)."""
    t0 = time.monotonic()
    deadline = t0 + _time_limit(timeout_s)
    outcomes: dict[str, Any] = {}
    starts, startup = 0, 0.0
    first, failed_starts = 0, 0
    while first < len(checks):
        if time.monotonic() >= deadline:
            break
        group = _Group(checks, first, world_size, args, kwargs, rules, stall_s, deadline)
        group.retry_start = failed_starts < 2
        starts += 1
        try:
            first = group.run(outcomes)
        finally:
            group.close()
        failed_starts += group.start_failed
        startup += group.startup_s
    for name, _ in checks:
        outcomes.setdefault(name, {"failure": {
            "message": f"{name}: not run: earlier checks spent the run's {_time_limit(timeout_s):g} s limit",
            "per_rank": {}, "kind": "not run"}})
    return {"outcomes": outcomes, "starts": starts, "startup_s": startup, "seconds": time.monotonic() - t0}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Group:
    """One start of the processes, running checks[first:] until the end or the first failure."""

    def __init__(self, checks: list, first: int, world_size: int, args: tuple, kwargs: dict,
                 rules: dict[str, str], stall_s: float, deadline: float) -> None:
        self.checks, self.first, self.world = checks, first, world_size
        self.args, self.kwargs, self.rules, self.stall_s, self.deadline = args, kwargs, rules, stall_s, deadline
        self.dir = Path(tempfile.mkdtemp(prefix="dripstone-ranks-"))
        # one shared page per rank, each unmapped in the other ranks (a rank writes only its own)
        self.pages = [mmap.mmap(-1, _SLOT.size) for _ in range(world_size)]
        self._records: dict[int, tuple[int, dict[int, dict[str, Any]]]] = {}
        self.children: list[child.Child] = []
        self.exit: dict[int, str] = {}
        self.startup_s = 0.0
        self.retry_start = True
        self.start_failed = False

    # -- life cycle
    def start(self) -> None:
        import torch  # noqa: F401  (before the fork: the children must not import it)

        t = time.monotonic()
        port = _free_port()  # rank 0 serves the store: no thread of this process may hold a lock at the fork
        for rank in range(self.world):  # each boxed by _child_setup before any learner code runs in it
            self.children.append(child.start(functools.partial(_child_run, self, rank, port),
                                             setup=functools.partial(_child_setup, self, rank)))
        self.t_fork = t

    @property
    def pids(self) -> list[int]:
        return [c.pid for c in self.children]

    def close(self) -> None:
        for c in self.children:
            c.stop()
        self.children = []
        shutil.rmtree(self.dir, ignore_errors=True)
        for page in self.pages:
            with contextlib.suppress(BufferError):
                page.close()

    # -- shared slots
    def slot(self, rank: int) -> tuple[int, int, int, str, str]:
        k, state, calls, call, where, _ = _SLOT.unpack_from(self.pages[rank], 0)
        text = [b.rstrip(b"\0").decode(errors="replace") for b in (call, where)]
        return k, state, calls, text[0], text[1]

    def run(self, outcomes: dict[str, Any]) -> int:
        """Run until every rank finished or a check failed; record outcomes; the index to start from next."""
        self.start()
        started_at = None
        activity: list[tuple[tuple, int]] = [((), 0)] * self.world
        active_at = [time.monotonic()] * self.world
        k_seen = self.first
        check_t0 = time.monotonic()
        while True:
            time.sleep(POLL_S)
            now = time.monotonic()
            self._reap()
            slots = [self.slot(r) for r in range(self.world)]
            if started_at is None and all(s[1] != _STARTING for s in slots):
                started_at = now
                self.startup_s = now - self.t_fork
                check_t0 = now
            k_all = min(s[0] for s in slots) if all(s[1] != _STARTING for s in slots) else self.first
            # a check every rank got past: record it
            while k_seen < len(self.checks) and started_at is not None and all(
                    s[0] > k_seen or s[1] == _FINISHED for s in slots):
                failed = self._record(k_seen, outcomes, now - check_t0)
                check_t0 = now
                k_seen += 1
                if failed:
                    return k_seen
            if k_seen >= len(self.checks):
                return k_seen
            if self.exit:
                return self._fail(k_seen, outcomes, "crashed", slots)
            for r in range(self.world):
                cpu = sum(_cpu_ns(self.pids[r]))
                mark = (slots[r][2], slots[r][1], slots[r][0])
                if mark != activity[r][0] or cpu - activity[r][1] > BUSY_NS:
                    activity[r], active_at[r] = (mark, cpu), now
            waiting = [r for r in range(self.world) if now - active_at[r] >= self.stall_s]
            if len(waiting) == self.world:
                return self._fail(k_all, outcomes, "deadlock", slots)
            if now >= self.deadline:
                return self._fail(k_all, outcomes, "timeout", slots)

    def _reap(self) -> None:
        for r, c in enumerate(self.children):
            if r in self.exit:
                continue
            out = c.poll()
            if out is not None and (self.slot(r)[1] != _FINISHED or out.returncode != 0):
                self.exit[r] = out.how()

    def _load(self, k: int, rank: int) -> dict[str, Any] | None:
        """Check k's record in the rank's results file (written through a descriptor the rank opened before its
        box closed: a rank sees no other rank's files), or None while it has not been written whole."""
        import torch

        done, records = self._records.get(rank, (0, {}))
        with contextlib.suppress(OSError), open(self.dir / f"rank{rank}.out", "rb") as f:
            f.seek(done)
            data = f.read()
            at = 0
            while at + _RECORD.size <= len(data):
                kk, size = _RECORD.unpack_from(data, at)
                if at + _RECORD.size + size > len(data):
                    break
                blob = data[at + _RECORD.size:at + _RECORD.size + size]
                try:
                    records[kk] = torch.load(io.BytesIO(blob), weights_only=True, map_location="cpu")
                except Exception as exc:
                    records[kk] = {"raised": {"type": "Unreadable", "where": "",
                                              "message": f"its result cannot be read back: {exc}"}, "comm": []}
                at += _RECORD.size + size
            self._records[rank] = (done + at, records)
        return records.get(k)

    def _record(self, k: int, outcomes: dict[str, Any], seconds: float) -> bool:
        """Check k finished on every rank: a RankRun, or the ranks' exceptions as its failure."""
        name = self.checks[k][0]
        per = [self._load(k, r) for r in range(self.world)]
        missing = {"type": "Missing", "message": "the rank wrote no result", "where": ""}
        raised = {r: (p["raised"] if p else missing) for r, p in enumerate(per) if p is None or "raised" in p}
        if raised:
            lines = {r: _raised_line(r, x) for r, x in raised.items()}
            who = ", ".join(str(r) for r in lines)
            outcomes[name] = {"failure": {"message": f"{name} on {self.world} ranks: rank(s) {who} raised:\n"
                                          + "\n".join(lines.values()), "per_rank": lines, "kind": "raised",
                                          "raised": {r: x["type"] for r, x in raised.items()},
                                          "comm": [p.get("comm") if p else None for p in per]}}
            return False
        outcomes[name] = {"results": [p["value"] for p in per], "comm": [p["comm"] for p in per],
                          "seconds": seconds, "startup_s": self.startup_s, "seeds": [p["seed"] for p in per]}
        return False

    def _fail(self, k: int, outcomes: dict[str, Any], kind: str, slots: list) -> int:
        """Check k cannot finish: describe every rank, stop them all; the next start runs check k + 1."""
        if self.retry_start and any(s[1] == _STARTING for s in slots):  # init failed (a port taken meanwhile?)
            self.start_failed = True
            return self.first
        stacks = self._stacks() if kind != "crashed" else {}
        name = self.checks[min(k, len(self.checks) - 1)][0]
        lines: dict[int, str] = {}
        boxed = ""
        for r in range(self.world):
            k_r, state, _, call, where = slots[r]
            done = self._load(k, r)
            if r in self.exit:
                log = self.dir / f"rank{r}.log"
                at = _dumped_line(log)
                lines[r] = f"rank {r} died ({self.exit[r]})" + (f" at {at}" if at else f" {_last_output(log)}")
                if "SIGSYS" in self.exit[r]:  # a refused call made while signals were blocked (posix_spawn)
                    boxed = _refused_message()
                elif "SIGSEGV" in self.exit[r] and _SLOT.unpack_from(self.pages[r], 0)[-1]:
                    boxed = _shared_write_message()
            elif done is not None and "raised" in done:
                lines[r] = _raised_line(r, done["raised"]) + " (then waited for the others)"
            elif k_r > k or state in (_CHECK_DONE, _FINISHED):
                lines[r] = f"rank {r} returned from the check and waits for the other ranks"
            elif state == _IN_CALL:
                at = stacks.get(r) or where
                lines[r] = f"rank {r} waiting in {call}" + (f" at {at}" if at else "")
            else:
                lines[r] = f"rank {r} {_STATE_WORDS[state]} at {stacks.get(r) or where or '(no line of yours)'}"
        head = {
            "deadlock": f"deadlock: every rank is waiting ({self.stall_s:g} s without progress)",
            "timeout": "timeout: the ranks did not finish within the run's time limit",
            "crashed": "a rank died",
        }[kind]
        advice = {
            "deadlock": "a blocking send waits until its matching recv is posted (gloo, any size): order the calls "
                        "so that every send meets a recv (isend/irecv, or alternate send/recv by rank parity), and "
                        "every rank makes the same sequence of matching calls",
            "timeout": "an endless loop, or work far too slow for the sizes tested?",
            "crashed": "do not call sys.exit/os._exit; stay within the memory limit",
        }[kind]
        if boxed:
            advice = boxed
        all_sends = kind == "deadlock" and all(slots[r][1] == _IN_CALL and slots[r][3].startswith("send(")
                                                for r in range(self.world))
        if all_sends:
            head = "deadlock: every rank sent before it received (gloo's send blocks until the recv is posted)"
        outcomes[name] = {"failure": {"message": f"{name} on {self.world} ranks: {head}\n"
                                      + "\n".join(lines.values()) + f"\n{advice}",
                                      "per_rank": lines, "kind": kind}}
        return k + 1

    def _stacks(self) -> dict[int, str]:
        """The line each rank is running (faulthandler's dump on SIGUSR1), before they are killed."""
        for r, pid in enumerate(self.pids):
            if r not in self.exit:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGUSR1)
        time.sleep(KILL_GRACE_S)
        return {r: _dumped_line(self.dir / f"rank{r}.log") for r in range(self.world)}


_POLLERS = ("gloo_tcp_loop", "pt_tcpstore")  # threads that wake every few ms even when every rank is stuck


def _cpu_ns(pid: int) -> tuple[int, int]:
    """(on-CPU ns, runnable-waiting ns) summed over the process's threads but gloo's and the store's pollers:
    both stay still while every thread sleeps in a wait; a starved but runnable thread still accrues waiting."""
    run = wait = 0
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, ValueError):
                if not Path(f"/proc/{pid}/task/{tid}/comm").read_text().startswith(_POLLERS):  # named late: no cache
                    r, w, _ = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()
                    run, wait = run + int(r), wait + int(w)
    return run, wait


def _raised_line(rank: int, raised: dict[str, str]) -> str:
    where = f" at {raised['where']}" if raised.get("where") else ""
    return f"rank {rank} raised {raised['type']}: {raised['message']}{where}"


def _last_output(log: Path) -> str:
    with contextlib.suppress(OSError):
        lines = [x for x in log.read_text(errors="replace").splitlines() if x.strip()]
        if lines:
            return f"; its last line: {lines[-1].strip()[:300]}"
    return "; it printed nothing"


_FRAME = re.compile(r'File "(.+)", line (\d+) in (\S+)')
_THREAD = re.compile(r"(?:Current thread|Thread) 0x[0-9a-f]+ [^\n]*\(most recent call first\):")


def _dumped_line(log: Path) -> str:
    """The rank's line from faulthandler's dump of every thread: the main thread's, the one running the checks."""
    with contextlib.suppress(OSError):
        blocks = _THREAD.split(log.read_text(errors="replace"))
        main = [b for b in blocks if "in _child_run" in b]
        if main:
            return _pick_line([(m[1], int(m[2])) for m in _FRAME.finditer(main[-1])])
    return ""


# ---------------------------------------------------------------- the children


@dataclass
class _ChildState:
    rank: int = -1
    page: Any = None
    depth: int = 0  # inside a logged call
    quiet: int = 0  # inside uncounted() or the grader's barrier
    calls: int = 0
    log: list = field(default_factory=list)
    rules: dict = field(default_factory=dict)
    refused: list = field(default_factory=list)  # where the check made a refused system call (the learner's line)
    seed: int | None = None  # the check's secret seed on this rank (rank_seed())
    box: str = ""  # why the rank's files are not private ("" when they are)
    shared: int = 0  # shared mappings inherited from the parent, made read-only
    proc: str = ""  # why /proc still shows the other processes ("" when it shows only this rank)


_CHILD = _ChildState()
_THIS_TAIL = "/grader/instrument/ranks.py"


def _set_slot(k: int | None = None, state: int | None = None, call: str | None = None,
              where: str | None = None) -> None:
    off = 0  # the rank's own page
    k0, s0, _, c0, w0, shared = _SLOT.unpack_from(_CHILD.page, off)
    _SLOT.pack_into(_CHILD.page, off, k0 if k is None else k, s0 if state is None else state, _CHILD.calls,
                    c0 if call is None else call.encode()[:119], w0 if where is None else where.encode()[:199],
                    _CHILD.shared)


def _pick_line(frames: list[tuple[str, int]]) -> str:
    """The innermost frame of the learner's code (the target), else the innermost outside torch and this module."""
    from grader.core.target import target_root

    root = str(target_root())
    mine = [f for f in frames if f[0].startswith(root)]
    others = [f for f in frames if "/torch/" not in f[0] and not f[0].endswith(_THIS_TAIL)
              and "/threading.py" not in f[0]]
    for path, line in mine[:1] or others[:1]:
        text = linecache.getline(path, line).strip()
        return f"{Path(path).name}:{line}" + (f" `{text[:120]}`" if text else "")
    return ""


def _nbytes(args: tuple, kwargs: dict) -> int:
    import torch

    total = 0
    for a in (*args, *kwargs.values()):
        if isinstance(a, torch.Tensor):
            total += a.numel() * a.element_size()
        elif isinstance(a, list | tuple):
            total += sum(t.numel() * t.element_size() for t in a if isinstance(t, torch.Tensor))
    return total


def _peer(name: str, args: tuple, kwargs: dict) -> str:
    key = "dst" if name in ("send", "isend") else "src" if name in ("recv", "irecv") else None
    if key is None:
        return ""
    peer = kwargs.get(key, args[1] if len(args) > 1 else None)
    return f"{key}={peer}, "


def _wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _CHILD.quiet:  # the grader's own calls (uncounted(), the barrier between checks)
            return fn(*args, **kwargs)
        if name in _CHILD.rules:  # at any depth: all_gather_into_tensor reaches all_gather_single
            raise RuntimeError(f"torch.distributed.{name} is refused here: {_CHILD.rules[name]}")
        if _CHILD.depth:  # inside another logged call: counted there
            return fn(*args, **kwargs)
        nbytes = _nbytes(args, kwargs)
        _CHILD.log.append((name, nbytes))
        _CHILD.calls += 1
        blocking = name in _BLOCKING
        if blocking:
            _set_slot(state=_IN_CALL, call=f"{name}({_peer(name, args, kwargs)}{nbytes} B)")
        _CHILD.depth += 1
        try:
            return fn(*args, **kwargs)
        finally:
            _CHILD.depth -= 1
            _CHILD.calls += 1
            if blocking:
                _set_slot(state=_RUNNING)

    return wrapper


def _wrap_wait(fn: Callable[..., Any]) -> Callable[..., Any]:
    def wait(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _CHILD.depth or _CHILD.quiet:
            return fn(self, *args, **kwargs)
        _CHILD.calls += 1
        _set_slot(state=_IN_CALL, call="Work.wait() of an isend/irecv")
        try:
            return fn(self, *args, **kwargs)
        finally:
            _CHILD.calls += 1
            _set_slot(state=_RUNNING)

    return wait


def _install_log() -> Callable[[], None]:
    """Wrap every logged function once, in both namespaces; the unwrapped barrier (the grader's own)."""
    import torch.distributed as dist
    from torch.distributed import distributed_c10d as c10d

    barrier = c10d.barrier
    wrapped: dict[int, Callable[..., Any]] = {}
    for name in (*P2P, *COLLECTIVES):
        fn = getattr(c10d, name, None) or getattr(dist, name, None)
        if fn is None:
            continue
        w = _wrap(name, fn)
        for mod in (dist, c10d):
            if hasattr(mod, name):
                wrapped[id(getattr(mod, name))] = w
                setattr(mod, name, w)
    c10d.Work.wait = _wrap_wait(c10d.Work.wait)
    _rebind_learner_names(wrapped)
    _guard_process_group(c10d.ProcessGroup)
    return barrier


def _rebind_learner_names(wrapped: Mapping[int, Callable[..., Any]]) -> None:
    """``from torch.distributed import all_reduce`` in a learner module loaded before the fork bound the unwrapped
    function: point those globals at the wrappers, so that this honest style is counted (and refused) too."""
    from grader.core.target import target_root

    root = f"{target_root()}{os.sep}"  # learner modules are loaded from the resolved target: a prefix test
    for module in list(sys.modules.values()):  # suffices (resolving ~1,200 paths cost 64 ms per rank start)
        path = getattr(module, "__file__", None)
        if not path or not path.startswith(root):
            continue
        for key, value in list(vars(module).items()):
            if id(value) in wrapped:
                setattr(module, key, wrapped[id(value)])


# ProcessGroup's methods that communicate: every torch.distributed call ends in one of them
_PG_METHODS = (
    "_allgather_base", "_reduce_scatter_base", "all_gather_single", "all_gather_single_coalesced", "all_to_all_single",
    "allgather", "allgather_coalesced", "allgather_into_tensor_coalesced", "allreduce", "allreduce_coalesced",
    "alltoall", "alltoall_base", "barrier", "broadcast", "gather", "monitored_barrier", "recv", "recv_anysource",
    "reduce", "reduce_scatter", "reduce_scatter_single", "reduce_scatter_single_coalesced",
    "reduce_scatter_tensor_coalesced", "scatter", "send",
)


def _guard_process_group(cls: type) -> None:
    """A ProcessGroup method reached outside a logged torch.distributed call (a function object kept from before
    the ranks started, or the process group called directly) would go uncounted and unrefused: refuse it."""
    for method in _PG_METHODS:
        fn = getattr(cls, method, None)
        if fn is not None:
            setattr(cls, method, _guarded(method, fn))


def _guarded(method: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if _CHILD.depth or _CHILD.quiet:
            return fn(*args, **kwargs)
        raise RuntimeError(
            f"ProcessGroup.{method} was reached without a torch.distributed call the grader can see (a function "
            "saved before the ranks started, or the process group called directly): call torch.distributed's "
            "functions by name (dist.send, dist.all_reduce, ...) where you use them")

    return guarded


_REFUSED_ROUTE = (
    "{} was reached without a torch.distributed call the grader can see (torch.ops.c10d, functional collectives, "
    "a library's own reducer): call torch.distributed's functions by name (dist.send, dist.all_reduce, ...) where "
    "you use them")


def _guard_dispatcher() -> list[Any]:
    """Every torch.distributed call ends in a c10d op of the dispatcher; so do ``torch.ops.c10d.*`` called directly
    and a C++ reducer (torch's DDP). A kernel of ours at the ops' Autograd key (which every tensor's dispatch passes
    through; none is registered for c10d) refuses the op outside a logged call, then hands it to the real kernel:
    a Python call per collective, not per torch op. Functional collectives (``_c10d_functional``, which reach the
    process group from C++ without a c10d op) are refused where Python reaches them: their namespace's ops."""
    import torch

    lib = torch.library.Library("c10d", "IMPL")
    for full in torch._C._dispatch_get_all_op_names():
        ns, _, qualified = full.partition("::")
        name, _, overload = qualified.partition(".")
        if ns == "c10d":
            op = getattr(getattr(torch.ops.c10d, name), overload or "default", None)
            if op is not None:
                lib.impl(qualified, _refusing_kernel(op), "Autograd")
        elif ns in ("_c10d_functional", "_c10d_functional_autograd"):
            space = getattr(torch.ops, ns)
            if not isinstance(vars(space).get(name), _RefusedPacket):  # one packet per name, its overloads below
                setattr(space, name, _RefusedPacket(f"torch.ops.{ns}.{name}", getattr(space, name)))
    return [lib]  # kept alive while the checks run


def _refusing_kernel(op: Any) -> Callable[..., Any]:
    import torch

    def kernel(*args: Any, **kwargs: Any) -> Any:
        if not (_CHILD.depth or _CHILD.quiet):
            raise RuntimeError(_REFUSED_ROUTE.format(f"torch.ops.c10d.{op.__name__.split('.')[0]}"))
        with torch._C._AutoDispatchBelowAutograd():
            return op(*args, **kwargs)

    return kernel


class _RefusedPacket:
    """An op namespace's packet (``torch.ops._c10d_functional.all_reduce``): refused outside a logged call."""

    def __init__(self, shown: str, packet: Any) -> None:
        self._shown, self._packet = shown, packet

    def _check(self) -> Any:
        if not (_CHILD.depth or _CHILD.quiet):
            raise RuntimeError(_REFUSED_ROUTE.format(self._shown))
        return self._packet

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._check()(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        inner = getattr(self._packet, name)
        return _RefusedPacket(f"{self._shown}.{name}", inner) if callable(inner) else inner


def rank_seed() -> int:
    """Inside a rank: this check's secret seed on this rank (56 random bits drawn in the rank when the check starts).

    Build the rank's own inputs from it: no other rank can derive them, since no other process ever holds it (it is
    drawn after the fork, and ranks share no memory or file); the test reads every rank's seed back as
    ``run.seeds[rank]`` and computes what each rank should return from them."""
    if _CHILD.seed is None:
        raise RuntimeError("rank_seed() is called inside a check run by run_ranks, on its rank")
    return _CHILD.seed


# ---------------------------------------------------------------- the rank's box
# Ranks exchange data through torch.distributed only (counted in the comm log and, in batch grading, on the wire).
# Every other channel between two processes of one machine is shut at the process level, whatever call reaches it:
# * files: each rank gets a mount namespace of its own (a user namespace: no privilege needed) where the whole file
#   system is read-only and /tmp, /var/tmp, /dev/shm, TMPDIR and the ranks' own folder are empty tmpfs of its own;
#   inherited descriptors are closed (a pipe or socket made before the fork), the other ranks' pages unmapped;
# * processes, shared memory, signals, locks, sockets: a seccomp filter (all threads) refuses starting a process
#   (fork, vfork, clone without CLONE_THREAD, exec), opening a file for writing, changing a path (mkdir, rename,
#   link, unlink, chmod, xattrs, ...), System V and POSIX IPC, keyrings, ptrace and reading another process's
#   memory, a socket other than TCP/UDP over IP (gloo's; the judge counts the loopback), a signal to another
#   process, file locks and leases, inotify, io_uring, userfaultfd, bpf, namespaces and mounts; the rank is not
#   dumpable (its /proc/<pid>/mem, fds and environ are closed to its siblings).
# A refused call raises SIGSYS: the handler notes the learner's line and the check fails with REFUSED_CALL, even if
# the learner's code caught the OSError the call returned.

REFUSED_CALL = N_("ranks exchange data only through torch.distributed: a rank made a system call that could carry "
                  "data around it (a file written, a process started, shared memory, a signal, lock or socket of its "
                  "own), and the grader refuses it in every rank; send tensors with dist.send/isend/recv or a "
                  "collective")
_CLONE_NEWNS, _CLONE_NEWUSER, _CLONE_NEWIPC = 0x00020000, 0x10000000, 0x08000000
_MS_NOSUID, _MS_NODEV, _MS_REC, _MS_PRIVATE = 2, 4, 0x4000, 1 << 18
_PRIVATE_DIRS = ("/tmp", "/var/tmp", "/dev/shm")


SHARED_WRITE = N_("memory mapped before the ranks started is read-only in every rank: ranks exchange data only "
                  "through torch.distributed, not through shared memory")


def _refused_message() -> str:
    from grader.i18n import _

    return _(REFUSED_CALL)


def _shared_write_message() -> str:
    from grader.i18n import _

    return _(SHARED_WRITE)


def _max_fd() -> int:
    with contextlib.suppress(ValueError, OSError):
        return min(os.sysconf("SC_OPEN_MAX"), 1 << 20)
    return 65536


def _private_files(own: Path) -> str:
    """A mount namespace of the rank's own: everything read-only, the temporary folders private and empty.
    "" when done; else why not (a kernel without unprivileged user namespaces): the seccomp filter still refuses
    every write, but another rank's files stay readable."""
    libc = ctypes.CDLL(None, use_errno=True)

    def check(ok: bool, what: str) -> None:
        if not ok:
            err = ctypes.get_errno()
            raise OSError(err, f"{what}: {os.strerror(err)}")

    uid, gid = os.getuid(), os.getgid()
    try:
        check(libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWIPC) == 0, "unshare")
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            fd = os.open(f"/proc/self/{name}", os.O_WRONLY)
            try:
                os.write(fd, text.encode())
            finally:
                os.close(fd)
        check(libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) == 0, "mount --make-rprivate /")
        attr = ctypes.create_string_buffer(struct.pack("<QQQQ", 1, 0, 0, 0))  # MOUNT_ATTR_RDONLY, AT_RECURSIVE:
        check(libc.syscall(_MOUNT_SETATTR, -100, b"/", 0x8000, attr, 32) == 0, "mount_setattr / read-only")
        private = [os.path.realpath(d) for d in dict.fromkeys(
            (str(own), os.environ.get("TMPDIR", ""), tempfile.gettempdir(), *_PRIVATE_DIRS)) if d and os.path.isdir(d)]
        kept = []  # what the rank reads under a private folder (the learner's files, a test's folder): kept, read-only
        for path in _needed(private, os.path.realpath(own)):
            fd = libc.syscall(_OPEN_TREE, -100, path.encode(), 1 | 0x8000)  # OPEN_TREE_CLONE | AT_RECURSIVE
            check(fd >= 0, f"open_tree {path}")
            kept.append((path, fd))
        for path in private:
            check(libc.mount(b"tmpfs", path.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV,
                             b"size=64m,nr_inodes=4096,mode=0700") == 0, f"tmpfs on {path}")
        for path, fd in kept:
            os.makedirs(path, exist_ok=True)
            check(libc.syscall(_MOVE_MOUNT, fd, b"", -100, path.encode(), 4) == 0, f"move_mount {path}")  # F_EMPTY_PATH
            os.close(fd)
    except OSError as exc:
        return str(exc)
    return ""


# What a rank reads in /proc besides its own /proc/<pid>: the machine's, never another process's.
_PROC_KEPT = ("sys", "cpuinfo", "meminfo", "stat", "filesystems", "loadavg", "uptime", "version", "self/mounts")


def _private_proc() -> str:
    """/proc with this rank's own process only (and the machine's files a library reads): another rank's memory size,
    threads, CPU time or state in /proc/<pid> carry nothing. "" when done; else why not."""
    libc = ctypes.CDLL(None, use_errno=True)
    pid = os.getpid()
    kept = []
    try:
        for name in (str(pid), *_PROC_KEPT[:-1]):
            fd = libc.syscall(_OPEN_TREE, -100, f"/proc/{name}".encode(), 1 | 0x8000)  # a clone of that subtree
            if fd < 0:
                if name == str(pid):
                    raise OSError(ctypes.get_errno(), f"open_tree /proc/{name}: {os.strerror(ctypes.get_errno())}")
                continue
            kept.append((name, fd, os.path.isdir(f"/proc/{name}")))
        if libc.mount(b"tmpfs", b"/proc", b"tmpfs", _MS_NOSUID | _MS_NODEV, b"size=1m,nr_inodes=256,mode=0755") != 0:
            raise OSError(ctypes.get_errno(), f"tmpfs on /proc: {os.strerror(ctypes.get_errno())}")
        for name, fd, is_dir in kept:
            target = f"/proc/{name}"
            if is_dir:
                os.mkdir(target)
            else:
                os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o444))
            if libc.syscall(_MOVE_MOUNT, fd, b"", -100, target.encode(), 4) != 0:
                raise OSError(ctypes.get_errno(), f"move_mount {target}: {os.strerror(ctypes.get_errno())}")
        for link, to in (("self", str(pid)), ("thread-self", f"{pid}/task/{pid}"), ("mounts", "self/mounts"),
                         ("net", "self/net")):
            os.symlink(to, f"/proc/{link}")
    except OSError as exc:
        return str(exc)
    finally:
        for _, fd, _ in kept:
            with contextlib.suppress(OSError):
                os.close(fd)
    return ""


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _needed(private: list[str], ranks_folder: str) -> list[str]:
    """Folders under a private one that the rank reads: the learner's files, the repository, sys.path's folders;
    never one that holds the ranks' own folder (the other ranks' logs and results)."""
    from grader.core.target import REPO_ROOT, target_root

    found = set()
    for entry in (str(target_root()), str(REPO_ROOT), *sys.path):
        path = os.path.realpath(entry or os.getcwd())
        if (os.path.isdir(path) and any(_under(path, d) for d in private) and not _under(ranks_folder, path)
                and path not in private):
            found.add(path)
    return sorted(p for p in found if not any(p != q and _under(p, q) for q in found))


def _protect_shared_memory(own: Any) -> int:
    """Memory shared with another process, mapped before the fork (a learner's mapping made at import): read-only
    here, so that no rank writes where another reads. The rank's own slot stays writable. How many were found."""
    libc = ctypes.CDLL(None, use_errno=True)
    view = (ctypes.c_char * 1).from_buffer(own)
    mine = ctypes.addressof(view)
    del view
    found = 0
    with open("/proc/self/maps") as f:
        lines = f.read().splitlines()
    for line in lines:
        span, perms = line.split()[:2]
        if perms[1] != "w" or perms[3] != "s":
            continue
        start, stop = (int(x, 16) for x in span.split("-"))
        if start <= mine < stop:
            continue
        libc.mprotect(ctypes.c_void_p(start), ctypes.c_size_t(stop - start), 1)  # PROT_READ
        found += 1
    return found


# x86_64 system call numbers (the only architecture the filter is built for: elsewhere only the files are boxed)
_AUDIT_ARCH_X86_64 = 0xC000003E
_MOUNT_SETATTR, _OPEN_TREE, _MOVE_MOUNT = 442, 428, 429
_TRAPPED = (
    *(57, 58, 59, 322),  # fork, vfork, execve, execveat
    *(101, 310, 311, 312, 438, 434, 424, 440),  # ptrace, process_vm_readv/writev, kcmp, pidfd_getfd/open/send_signal,
    # process_madvise
    *(272, 308, 165, 166, 155, 161, 442, 428, 429, 430, 431, 432, 433),  # unshare, setns, mounts, chroot
    *(85, 437, 303, 304),  # creat, openat2, name_to_handle_at, open_by_handle_at
    *(29, 30, 31, 64, 65, 66, 68, 69, 70, 71, 220, 240, 241, 242, 243, 244, 245),  # System V and POSIX IPC
    *(248, 249, 250),  # add_key, request_key, keyctl
    *(53, 200, 73, 253, 294, 254, 300, 301),  # socketpair, tkill, flock, inotify, fanotify
    *(49, 50),  # bind, listen: a port held is seen by every rank of the network (EADDRINUSE, /proc/net/tcp)
    # without a byte on the wire; gloo and the store have bound theirs before the filter
    *(321, 323, 298, 319),  # bpf, userfaultfd, perf_event_open, memfd_create
)
# Calls that change a path without opening a file for writing, all refused...
_PATH_CHANGES = (
    *(84, 82, 264, 316, 86, 265, 87, 263, 88, 266, 133, 259, 76),  # rmdir, rename(at/at2), link(at), unlink(at),
    # symlink(at), mknod(at), truncate
    *(90, 268, 452, 92, 94, 260, 132, 235, 280, 261),  # chmod, fchmodat(2), chown, lchown, fchownat, utime(s)...
    *(188, 189, 190, 197, 198, 199, 463, 466),  # setxattr, removexattr and their variants
)
# ... but mkdir, which torch calls for its cache folders when DDP imports torch._dynamo: harmless in the rank's own
# mount namespace (read-only but for its private tmpfs: a folder made there is seen by no other rank), refused where
# the rank has none.
_MKDIR = (83, 258)
_WRITE_FLAGS = 0o1103  # O_WRONLY | O_RDWR | O_CREAT | O_TRUNC
_ALLOW, _TRAP, _KILL = 0x7FFF0000, 0x00030000, 0x80000000
_ERRNO_EPERM, _ERRNO_ENOSYS, _ERRNO_EAFNOSUPPORT = 0x00050000 | 1, 0x00050000 | 38, 0x00050000 | 97
_ERRNO_EINVAL = 0x00050000 | 22
# What a process sets on itself that another of its user can read by pid (getpriority, sched_getaffinity,
# prlimit, getpgid, getsid, ioprio_get): each a few bits per call. Fails quietly (EPERM): libraries try and go on.
_QUIET_SETTERS = (141, 142, 144, 203, 314, 160, 109, 112, 251, 135)  # setpriority, sched_setparam/setscheduler/
# setaffinity/setattr, setrlimit, setpgid, setsid, ioprio_set, personality


def _filter(pid: int, private_files: bool) -> list[tuple[int, int, int, int]]:
    """The seccomp program (classic BPF): (code, jt, jf, k) per instruction."""
    ld = lambda off: (0x20, 0, 0, off)  # BPF_LD|BPF_W|BPF_ABS of seccomp_data
    ret = lambda k: (0x06, 0, 0, k)
    jeq = lambda k, jt, jf: (0x15, jt, jf, k)
    jset = lambda k, jt, jf: (0x45, jt, jf, k)
    arg = lambda i: ld(16 + 8 * i)  # the low 32 bits of argument i
    prog = [ld(4), jeq(_AUDIT_ARCH_X86_64, 1, 0), ret(_KILL), ld(0), (0x35, 0, 1, 0x40000000), ret(_TRAP)]  # x32

    def only_if(nr: int, body: list) -> None:  # the body ends every path with a ret
        prog.extend([jeq(nr, 0, len(body)), *body])

    only_if(435, [ret(_ERRNO_ENOSYS)])  # clone3: glibc falls back to clone, whose flags the filter can read
    only_if(425, [ret(_ERRNO_ENOSYS)])  # io_uring_setup (its ring opens files unseen): libuv's probe takes epoll
    only_if(56, [arg(0), jset(0x00010000, 0, 1), ret(_ALLOW), ret(_TRAP)])  # clone: threads only
    only_if(2, [arg(1), jset(_WRITE_FLAGS, 0, 1), ret(_TRAP), ret(_ALLOW)])  # open: read-only
    only_if(257, [arg(2), jset(_WRITE_FLAGS, 0, 1), ret(_TRAP), ret(_ALLOW)])  # openat: read-only
    # socket: AF_INET and AF_INET6 (gloo's; the judge counts the loopback). Any other family fails quietly, with no
    # SIGSYS: glibc asks nscd over a Unix socket when Python looks a user up (torch's DDP does), then reads /etc.
    only_if(41, [arg(0), jeq(2, 2, 0), jeq(10, 1, 0), ret(_ERRNO_EAFNOSUPPORT), ret(_ALLOW)])
    for nr in (62, 234, 129, 297):  # kill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo: to this process only
        only_if(nr, [arg(0), jeq(pid, 0, 1), ret(_ALLOW), ret(_TRAP)])
    locks = (6, 7, 37, 38, 1024, 1026)  # fcntl: F_SETLK(W), F_OFD_SETLK(W), F_SETLEASE, F_NOTIFY
    only_if(72, [arg(1), *(jeq(c, len(locks) - i, 0) for i, c in enumerate(locks)), ret(_ALLOW), ret(_TRAP)])
    # prctl: PR_SET_DUMPABLE, PR_SET_MM, PR_SET_PTRACER refused; PR_SET_NAME (a thread's name, which the other
    # ranks can read in /proc) fails quietly: the TCPStore and gloo name their threads and go on when they cannot
    options = (4, 35, 0x59616D61)
    only_if(157, [arg(0), jeq(15, len(options) + 2, 0), *(jeq(c, len(options) - i, 0) for i, c in enumerate(options)),
                  ret(_ALLOW), ret(_TRAP), ret(_ERRNO_EPERM)])
    only_if(302, [(0x20, 0, 0, 32), jeq(0, 0, 3), (0x20, 0, 0, 36), jeq(0, 0, 1), ret(_ALLOW),
                  ret(_ERRNO_EPERM)])  # prlimit64: reading (new_limit NULL) only
    for nr in (228, 229, 230, 222):  # clock_gettime/getres/nanosleep, timer_create: not another process's CPU clock
        only_if(nr, [arg(0), jset(0x80000000, 0, 1), ret(_ERRNO_EINVAL), ret(_ALLOW)])
    for nr in _QUIET_SETTERS:
        prog.extend([jeq(nr, 0, 1), ret(_ERRNO_EPERM)])
    for nr in (*_TRAPPED, *_PATH_CHANGES, *(() if private_files else _MKDIR)):
        prog.extend([jeq(nr, 0, 1), ret(_TRAP)])
    prog.append(ret(_ALLOW))
    return prog


def _on_refused(signum: int, frame: Any) -> None:
    """SIGSYS: a refused call. Noted (the check fails with REFUSED_CALL), never raised: the call itself returned an
    error (ENOSYS) the learner's code sees."""
    from grader.core.target import target_root

    root = str(target_root())
    frames = [(f.filename, f.lineno or 0) for f in reversed(traceback.extract_stack(frame))] if frame else []
    mine = [f for f in frames if f[0].startswith(root)]  # the learner's line, if the handler runs while it is there
    _CHILD.refused.append(_pick_line(mine[:1]) if mine else "")


def _seal() -> str:
    """The seccomp filter on every thread of the rank (after gloo's set-up, before any learner code): "" when on."""
    import platform

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
    if platform.machine() != "x86_64":
        return f"no seccomp filter for {platform.machine()}"
    signal.signal(signal.SIGSYS, _on_refused)
    prog = _filter(os.getpid(), not _CHILD.box)
    code = (ctypes.c_ubyte * (8 * len(prog)))()
    for i, ins in enumerate(prog):
        struct.pack_into("<HBBI", code, 8 * i, *ins)
    fprog = ctypes.create_string_buffer(struct.pack("<HxxxxxxQ", len(prog), ctypes.addressof(code)))
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        return f"no_new_privs: {os.strerror(ctypes.get_errno())}"
    if libc.syscall(317, 1, 1, fprog) != 0:  # seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, ...)
        return f"seccomp: {os.strerror(ctypes.get_errno())}"
    return ""


def _child_setup(group: _Group, rank: int) -> None:
    from grader.instrument import worker

    worker._in_worker = True  # the learner's calls run here, in this process (never another fork)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the parent stops the ranks
    log = os.open(group.dir / f"rank{rank}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    out = os.open(group.dir / f"rank{rank}.out", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    for fd, to in ((0, null), (1, log), (2, log), (3, out)):
        os.dup2(to, fd)
    for page in (p for r, p in enumerate(group.pages) if r != rank):  # the other ranks' slots: unmapped here
        page.close()
    os.closerange(4, _max_fd())  # what the parent held (a learner's pipe or socket made at import): not here
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", buffering=0), write_through=True)
    sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", buffering=0), write_through=True)
    faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)
    faulthandler.enable(file=sys.stderr, all_threads=True)  # a crash names its line (a write to read-only memory)
    _CHILD.rank, _CHILD.page, _CHILD.rules = rank, group.pages[rank], group.rules
    _CHILD.depth, _CHILD.quiet, _CHILD.calls, _CHILD.log, _CHILD.refused = 0, 0, 0, [], []
    _CHILD.shared = _protect_shared_memory(group.pages[rank])
    _CHILD.box = _private_files(group.dir)
    _CHILD.proc = _private_proc() if not _CHILD.box else "no mount namespace"


def _child_run(group: _Group, rank: int, port: int) -> None:
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    store = dist.TCPStore("127.0.0.1", port, group.world, is_master=rank == 0, timeout=timedelta(seconds=30))
    dist.init_process_group("gloo", store=store, rank=rank, world_size=group.world,
                            timeout=timedelta(seconds=max(30.0, group.deadline - time.monotonic() + 5)))
    barrier = _install_log()
    guards = _guard_dispatcher()
    _seal()  # from here on, a call that could carry data outside torch.distributed is refused
    for k in range(group.first, len(group.checks)):
        name, check = group.checks[k]
        _CHILD.log, _CHILD.refused = [], []
        _CHILD.seed = int.from_bytes(os.urandom(7), "little")  # this rank's secret inputs for this check
        _set_slot(k=k, state=_RUNNING, call="", where="")
        try:
            payload: dict[str, Any] = {"value": check(rank, group.world, *group.args, **group.kwargs)}
        except BaseException as exc:  # every exception of a check is reported, the next check still runs
            payload = {"raised": _describe(exc)}
        if _CHILD.refused:  # even when the learner's code caught the error: the check fails, saying why
            seen = payload.get("raised", {}).get("where") or _CHILD.refused[0]  # the error's line, else the handler's
            payload = {"raised": {"type": "RefusedCall", "message": _refused_message(), "where": seen}}
        payload["comm"] = list(_CHILD.log)
        payload["seed"] = _CHILD.seed
        _save(payload, k)
        _set_slot(state=_CHECK_DONE)
        _CHILD.quiet += 1  # the grader's barrier: not logged
        barrier()
        _CHILD.quiet -= 1
    del guards  # the kernels are deregistered with their Library object
    _set_slot(k=len(group.checks), state=_FINISHED)
    dist.destroy_process_group()


def _save(payload: dict[str, Any], k: int) -> None:
    """Check k's record, appended whole to the rank's results file (descriptor 3, opened before the box)."""
    import torch

    buf = io.BytesIO()
    try:
        torch.save(payload, buf)
    except Exception as exc:
        buf = io.BytesIO()
        torch.save({"raised": {"type": "Unsendable", "where": "",
                               "message": f"the check returned something torch.save cannot write: {exc}"},
                    "comm": payload["comm"], "seed": payload.get("seed")}, buf)
    data = memoryview(_RECORD.pack(k, buf.getbuffer().nbytes) + buf.getvalue())
    while data:
        data = data[os.write(3, data):]


def _describe(exc: BaseException) -> dict[str, str]:
    from grader.core.target import learner_frame

    mine = learner_frame(exc)
    frames = [(f.filename, f.lineno or 0) for f in reversed(traceback.extract_tb(exc.__traceback__))]
    text = str(exc).strip()
    where = _pick_line([(mine.filename, mine.lineno or 0)] if mine is not None else frames)
    return {"type": type(exc).__name__, "message": text[:2000], "where": where}
