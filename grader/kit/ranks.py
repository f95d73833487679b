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
A stub (NotImplementedError on every rank) comes back as NotImplementedError, so the scoreboard reads TODO.

How the ranks run: ``world_size`` (2-4) children forked from the process where the learner's code runs
(``make grade``: the pytest process; batch grading: the test's worker, through ``where_learner_runs``, so the
judge never loads the submission), each with ``torch.set_num_threads(1)``, ``init_process_group("gloo")``
on 127.0.0.1 (a TCPStore of the parent on a free port), stdout/stderr into a log file of the rank.
Forking costs 0.1-0.3 s for 2-4 ranks; spawning would cost seconds (each child re-imports torch).

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
import gc
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
_SLOT = struct.Struct("<iiq120s200s")
_STARTING, _RUNNING, _IN_CALL, _CHECK_DONE, _FINISHED = range(5)
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
                from grader.grading.target import SubmissionError

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

    def sent_bytes(self, rank: int) -> int:
        """Bytes ``rank`` handed to send/isend (batch_isend_irecv's sends included)."""
        return sum(n for name, n in self.comm[rank] if name in SENDS)

    def calls(self, rank: int) -> list[str]:
        return [name for name, _ in self.comm[rank]]

    def largest_send(self, rank: int) -> int:
        return max((n for name, n in self.comm[rank] if name in SENDS), default=0)


@dataclass
class RankRuns(Mapping[str, RankRun]):
    """The outcomes of a grouped run: ``runs[name]`` is a RankRun or raises that check's RankFailure."""

    world_size: int
    outcomes: dict[str, RankRun | RankFailure] = field(default_factory=dict)
    starts: int = 0  # how many times processes were started
    startup_s: float = 0.0
    seconds: float = 0.0
    wire: Wire | None = None  # what the loopback carried during the run, where the judge can count it

    def wire_mismatch(self, expected: Mapping[str, list[list[tuple[str, int]]]] | None = None) -> str | None:
        """None when the wire carried what the calls say (or cannot be counted here); else what differs.

        Counted only in batch grading's sandbox (a private network namespace per student, see :class:`Wire`),
        for a run whose traffic all goes through logged calls (no ``uncounted()`` calls in its checks): the judge
        reads the kernel's counters before and after the run, so nothing in the learner's processes can change
        them, and sets them against what the calls put on the wire (:func:`_payload_share`). The calls are, for a
        check named in ``expected`` that finished, the ones the test expects of a right implementation on each
        rank (the judge's own account: nothing the ranks report); for any other check, the ranks' logs. Name
        every check whose calls the test can derive: a log is the learner's claim.
        """
        if self.wire is None:
            return None
        if not self.wire.complete:
            return ("the loopback's bytes could not be matched to the comm log: a check deadlocked, crashed or timed "
                    "out, and again when the others ran on their own; fix that check first")
        logs = []
        for name, out in self.outcomes.items():
            log = expected[name] if expected and name in expected and isinstance(out, RankRun) else _logs(out)
            if log is not None:
                logs.append(log)
        return self.wire.mismatch(logs, self.world_size)

    def assert_wire(self, what: str, expected: Mapping[str, list[list[tuple[str, int]]]] | None = None) -> None:
        """AssertionError naming ``what`` unless the wire carried what the calls say (see :meth:`wire_mismatch`):
        call it in every test that awards points on a log of this run."""
        said = self.wire_mismatch(expected)
        assert said is None, f"{what} on {self.world_size} ranks: {said}"

    def __getitem__(self, name: str) -> RankRun:
        out = self.outcomes[name]
        if isinstance(out, RankFailure):
            raise out.rebuilt()
        return out

    def __iter__(self) -> Iterator[str]:
        return iter(self.outcomes)

    def __len__(self) -> int:
        return len(self.outcomes)

    @property
    def failures(self) -> dict[str, RankFailure]:
        return {k: v for k, v in self.outcomes.items() if isinstance(v, RankFailure)}


def run_ranks(
    check: Callable[..., Any] | Mapping[str, Callable[..., Any]],
    world_size: int,
    *args: Any,
    timeout_s: float = 20.0,
    refuse: Any = (),
    stall_s: float = STALL_S,
    **kwargs: Any,
) -> Any:
    """``check(rank, world_size, *args, **kwargs)`` on ``world_size`` gloo ranks (see the module docstring).

    One check: its :class:`RankRun`, or RankFailure raised. A dict of checks: a :class:`RankRuns`.
    """
    if world_size not in WORLD_SIZES:
        raise ValueError(f"world_size must be one of {WORLD_SIZES}, got {world_size!r}")
    checks = dict(check) if isinstance(check, Mapping) else {getattr(check, "__name__", "check"): check}
    rules = dict(refuse) if isinstance(refuse, Mapping) else dict.fromkeys(refuse, REFUSE_RULE)
    from grader.grading import harness

    def measured(items: list) -> RankRuns:
        before = _net_counters()
        raw = harness.where_learner_runs(_run_here, items, world_size, args, kwargs, float(timeout_s), rules,
                                         float(stall_s))
        after = _net_counters()
        runs = _rebuild(raw, world_size)
        if before is not None and after is not None:
            runs.wire = Wire.between(before, after, runs.starts, len(items), _accounted(runs))
        return runs

    runs = measured(list(checks.items()))
    if runs.wire is not None and not runs.wire.complete:
        # A deadlock, crash or timeout leaves traffic no log accounts for: the checks that logged everything run
        # again on their own; their outcomes and wire replace the first run's (the same seeds, the same values).
        logged = [(name, fn) for name, fn in checks.items() if _logs(runs.outcomes[name]) is not None]
        again = measured(logged) if logged else None
        if again is not None:
            runs.outcomes.update(again.outcomes)
        runs.wire = again.wire if again is not None else None  # nothing logged: nothing to verify
    if isinstance(check, Mapping):
        return runs
    return runs[next(iter(checks))]


def _logs(outcome: RankRun | RankFailure) -> list[list[tuple[str, int]]] | None:
    """Every rank's log of a check, or None where some rank's traffic went unlogged (a deadlock, crash, timeout)."""
    if isinstance(outcome, RankRun):
        return outcome.comm
    comm = outcome.comm
    return comm if comm is not None and all(c is not None for c in comm) else None


def _accounted(runs: RankRuns) -> bool:
    return all(_logs(out) is not None for out in runs.outcomes.values())


# ---------------------------------------------------------------- the wire, counted by the kernel


PRIVATE_NET_ENV = "DRIPSTONE_PRIVATE_NET"  # set by batch grading's sandbox: this process has a network of its own
# Per packet on the loopback: Ethernet 14 + IPv4 20 + TCP 20 with the timestamp option 12 (every segment
# between Linux peers); a UDP datagram 14 + 20 + 8 (IPv6: 20 more); ICMP 14 + 20 + 8.
TCP_HEADER, UDP_HEADER, UDP6_HEADER, ICMP_HEADER = 66, 42, 62, 42
# gloo's own bytes per logged send (its message header, measured 88-91 B on gloo 2.x / torch 2.13), the
# TCPStore rendezvous and teardown per start and pair of ranks (545-800 B measured), the grader's barrier
# between checks per rank (180-380 B), gloo's headers per collective call and ordered pair of ranks (~375 B
# measured), with room: the bounds below must hold for every honest run.
MSG_MIN, MSG_MAX = 75, 110
START_PER_PAIR, START_BASE, BARRIER_PER_RANK, COLLECTIVE_PER_PAIR = 1000, 1500, 500, 600
RELATIVE = 0.01  # of the logged bytes, either way
SEGMENT_MAX = 65536  # a TCP segment on lo (its MTU): the most one retransmission can carry
# Retransmissions on lo, measured on busy machines: 0-5 per run, almost all without payload (the payload count
# unchanged); in 2 runs of ~40, one or three carried a chunk (+8-11 KB). Two are credited a message each: more
# would let a flood of lo (which drops packets, so gloo's get retransmitted) buy room for hidden traffic.
RETRANSMITS_CREDITED = 2
# The torch release whose gloo the shares below and the header sizes were measured on (requirements.txt pins it).
GLOO_MEASURED_ON = "2.13.0"


def torch_release() -> str:
    """The installed torch's release (``2.13.0`` of ``2.13.0+cpu``), read without importing torch."""
    import importlib.metadata

    try:
        return importlib.metadata.version("torch").split("+", 1)[0]
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _model_note() -> str:
    """What a mismatch message adds when this torch's gloo is not the one the wire model was measured on."""
    now = torch_release()
    if now == GLOO_MEASURED_ON:
        return ""
    return (f" (gloo's bytes were measured on torch {GLOO_MEASURED_ON}, this is torch {now}: if a right "
            "implementation fails here, the model in grader/kit/ranks.py needs measuring again on this release)")


# What one rank's logged call puts on the wire, as a fraction of its logged bytes (every tensor argument); measured
# on 2-4 ranks, 800 B to 400 KB (torch 2.13, gloo). all_reduce: a ring, 2(P-1)/P·n per rank. broadcast: the
# root's n to each other rank. reduce: (P-1)·n + (P-1)/P·n per call. gather/scatter: (P-1)·n per call, logged
# (P+1)·n at the root and n elsewhere; all_to_all: P(P-1)·n per call, logged 2P·n per rank (summed over the
# ranks, both come to (P-1)/2P of the log). all-gathers: (P-1)·n_in per rank, logged (P+1)·n_in. reduce-scatters:
# an all-reduce of the P·n input, logged (P+1)·n; the list form's headers are P times an all-reduce's
# (LIST_HEADERS). Barriers: headers only.
_SHARES: dict[str, Callable[[int], float]] = {
    "all_reduce": lambda p: 2 * (p - 1) / p,
    "broadcast": lambda p: (p - 1) / p,
    "reduce": lambda p: (p * p - 1) / (p * p),
    **dict.fromkeys(("gather", "scatter", "all_to_all", "all_to_all_single"), lambda p: (p - 1) / (2 * p)),
    **dict.fromkeys(("all_gather", "all_gather_into_tensor", "all_gather_single"), lambda p: (p - 1) / (p + 1)),
    **dict.fromkeys(("reduce_scatter", "reduce_scatter_tensor", "reduce_scatter_single"),
                    lambda p: 2 * (p - 1) / (p + 1)),
}
LIST_HEADERS = frozenset({"reduce_scatter"})


def _payload_share(name: str, nbytes: int, world: int) -> tuple[float, float]:
    """(least, most) payload one rank's logged call puts on the wire, gloo's headers for a collective included in
    the most. A send is its bytes (its header: MSG_MIN/MSG_MAX); a receive is the sender's. A call with no model
    here (object collectives, coalesced ones) allows headers only, so its bytes cannot widen the bounds."""
    if name in SENDS:
        return nbytes, nbytes
    if name in ("recv", "irecv"):
        return 0, 0
    share = _SHARES[name](world) * nbytes if name in _SHARES else 0.0
    headers = COLLECTIVE_PER_PAIR * (world - 1) * (world if name in LIST_HEADERS else 1)
    return share, share + headers


def _well_formed(entry: object) -> bool:
    return (isinstance(entry, tuple) and len(entry) == 2 and entry[0] in (*P2P, *COLLECTIVES)
            and type(entry[1]) is int and 0 <= entry[1] < 2**48)


def _net_counters() -> dict[str, int] | None:
    """The loopback's counters of this process's network namespace; None unless it is private to one student
    (batch grading's sandbox: ``--unshare-net``, where lo is the only interface) and the kernel shows them."""
    if os.environ.get(PRIVATE_NET_ENV) != "1":
        return None
    try:
        dev = Path("/proc/self/net/dev").read_text().splitlines()[2:]
        names = {line.split(":", 1)[0].strip(): line.split(":", 1)[1].split() for line in dev}
        if set(names) != {"lo"}:
            return None
        out = {"bytes": int(names["lo"][8])}
        for path in ("/proc/self/net/snmp", "/proc/self/net/snmp6"):
            lines = Path(path).read_text().splitlines()
            if path.endswith("6"):
                pairs = [line.split() for line in lines if line.strip()]
                out.update({f"6:{k}": int(v) for k, v in pairs})
                continue
            for head, values in zip(lines[::2], lines[1::2], strict=False):
                proto, *keys = head.split()
                out.update({f"{proto.rstrip(':')}{k}": int(v) for k, v in zip(keys, values.split()[1:], strict=False)})
        return out
    except (OSError, ValueError, IndexError):
        return None


@dataclass
class Wire:
    """Payload bytes the loopback carried during one run (read by the judge, in the kernel's counters).

    ``payload`` = the bytes lo sent minus each packet's headers (TCP segments, UDP and ICMP datagrams of v4 and
    v6, by the namespace's SNMP counters): what every process of the student put on the network, whatever route
    it took (gloo, a TCPStore, a socket of its own). Each packet is charged the smallest header of its protocol,
    so no packet can hide payload in its header's allowance. Retransmitted segments are charged their header; up to
    RETRANSMITS_CREDITED of them may carry a message each.
    """

    payload: int
    retransmits: int
    starts: int
    checks: int
    complete: bool = True

    @classmethod
    def between(cls, a: dict[str, int], b: dict[str, int], starts: int, checks: int, complete: bool) -> Wire:
        d = {k: b.get(k, 0) - a.get(k, 0) for k in b}
        headers = (TCP_HEADER * d.get("TcpOutSegs", 0) + UDP_HEADER * (d.get("UdpOutDatagrams", 0)
                   + d.get("UdpLiteOutDatagrams", 0)) + UDP6_HEADER * (d.get("6:Udp6OutDatagrams", 0)
                   + d.get("6:UdpLite6OutDatagrams", 0)) + ICMP_HEADER * (d.get("IcmpOutMsgs", 0)
                   + d.get("6:Icmp6OutMsgs", 0)))
        retrans = d.get("TcpRetransSegs", 0)
        return cls(d["bytes"] - headers - TCP_HEADER * retrans, retrans, starts, checks, complete)

    def bounds(self, logs: list[list[list[tuple[str, int]]]], world: int) -> tuple[int, int, int, int]:
        """(lowest, highest) payload the calls allow; the bytes they pass and how many they are."""
        calls = [(name, n) for check in logs for rank in check for name, n in rank]
        low = high = 0.0
        for name, n in calls:
            least, most = _payload_share(name, n, world)
            low += least * (1 - RELATIVE) + (MSG_MIN if name in SENDS and n else 0)  # an empty send may be skipped
            high += most * (1 + RELATIVE) + (MSG_MAX if name in SENDS else 0)
        pairs = world * (world - 1) // 2
        high += (self.starts * (START_BASE + START_PER_PAIR * pairs) + self.checks * BARRIER_PER_RANK * world
                 + min(self.retransmits, RETRANSMITS_CREDITED) * (min(max((n for _, n in calls), default=0),
                                                                         SEGMENT_MAX) + MSG_MAX))
        logged = sum(n for name, n in calls if name not in ("recv", "irecv"))
        return int(low), int(high), logged, len(calls)

    def mismatch(self, logs: list[list[list[tuple[str, int]]]], world: int) -> str | None:
        """None when the payload is within :meth:`bounds` of the calls ``logs`` holds (per check, per rank)."""
        bad = [e for check in logs for rank in check for e in rank if not _well_formed(e)]
        if bad:  # the wrappers log (name, bytes >= 0) only: anything else was written by something else
            return f"the comm log holds entries no torch.distributed call writes: {bad[:3]}"
        low, high, sent, count = self.bounds(logs, world)
        if low <= self.payload <= high:
            return None
        said = (f"the calls the test counts for {world} ranks ({count}, passing {sent:,} B of tensors) mean "
                f"{low:,}-{high:,} B of payload on the loopback (gloo's headers, the rendezvous and the grader's "
                f"barriers included), but it carried {self.payload:,} B")
        if self.payload > high:
            return (f"{said}: data went by a route the comm log does not see (a socket or store of your own, a "
                    "process group's functions reached some other way); exchange data only with torch.distributed's "
                    "functions" + _model_note())
        return (f"{said}: the log counts traffic that never reached the network (a send nobody received, or a "
                "log written by something other than torch.distributed's calls)" + _model_note())


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


def _rebuild(raw: dict[str, Any], world_size: int) -> RankRuns:
    runs = RankRuns(world_size, starts=raw["starts"], startup_s=raw["startup_s"], seconds=raw["seconds"])
    for name, out in raw["outcomes"].items():
        if "failure" in out:
            f = out["failure"]
            comm = f.get("comm")
            runs.outcomes[name] = RankFailure(
                f["message"], {int(k): v for k, v in f["per_rank"].items()}, f["kind"],
                {int(k): v for k, v in f.get("raised", {}).items()},
                None if comm is None else [None if c is None else [tuple(x) for x in c] for c in comm])
        else:
            runs.outcomes[name] = RankRun(world_size, out["results"], [[tuple(c) for c in r] for r in out["comm"]],
                                          out["seconds"], out["startup_s"])
    return runs


def _time_limit(timeout_s: float) -> float:
    from grader.grading import boundary, timeout

    limit = timeout_s
    if timeout.limit_s() > 0:
        limit = min(limit, timeout.limit_s())
    if os.environ.get(boundary.ISOLATE_ENV) == "1":  # in batch grading's worker: stay within its call limit
        limit = min(limit, max(1.0, boundary.call_timeout_s() - 3.0))
    return limit


def _run_here(checks: list[tuple[str, Callable[..., Any]]], world_size: int, args: tuple, kwargs: dict,
              timeout_s: float, rules: dict[str, str], stall_s: float) -> dict[str, Any]:
    """Every check, in as few starts as failures allow; plain data (it may cross batch grading's boundary)."""
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
        self.page = mmap.mmap(-1, _SLOT.size * world_size)
        self.pids: list[int] = []
        self.exit: dict[int, str] = {}
        self.startup_s = 0.0
        self.retry_start = True
        self.start_failed = False

    # -- life cycle
    def start(self) -> None:
        import torch  # noqa: F401  (before the fork: the children must not import it)

        t = time.monotonic()
        port = _free_port()  # rank 0 serves the store: no thread of this process may hold a lock at the fork
        gc.freeze()  # the children's collector must not write into every inherited object (copy-on-write)
        try:
            for rank in range(self.world):
                pid = os.fork()
                if pid == 0:
                    _child_main(self, rank, port)  # never returns
                self.pids.append(pid)
        finally:
            gc.unfreeze()
        self.t_fork = t

    def close(self) -> None:
        for pid in self.pids:
            if pid not in self._reaped():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        for pid in self.pids:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        self.pids = []
        shutil.rmtree(self.dir, ignore_errors=True)

    def _reaped(self) -> set[int]:
        return {self.pids[r] for r in self.exit}

    # -- shared slots
    def slot(self, rank: int) -> tuple[int, int, int, str, str]:
        k, state, calls, call, where = _SLOT.unpack_from(self.page, rank * _SLOT.size)
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
        for r, pid in enumerate(self.pids):
            if r in self.exit:
                continue
            with contextlib.suppress(ChildProcessError):
                got, status = os.waitpid(pid, os.WNOHANG)
                if got:
                    if os.WIFSIGNALED(status):
                        how = f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
                    else:
                        how = f"exit status {os.waitstatus_to_exitcode(status)}"
                    if self.slot(r)[1] != _FINISHED or os.waitstatus_to_exitcode(status) != 0:
                        self.exit[r] = how

    def _load(self, k: int, rank: int) -> dict[str, Any] | None:
        import torch

        path = self.dir / f"{k}.{rank}.pt"
        if not path.exists():
            return None
        try:
            return torch.load(path, weights_only=True, map_location="cpu")
        except Exception as exc:
            return {"raised": {"type": "Unreadable", "message": f"its result cannot be read back: {exc}", "where": ""},
                    "comm": []}

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
                          "seconds": seconds, "startup_s": self.startup_s}
        return False

    def _fail(self, k: int, outcomes: dict[str, Any], kind: str, slots: list) -> int:
        """Check k cannot finish: describe every rank, stop them all; the next start runs check k + 1."""
        if self.retry_start and any(s[1] == _STARTING for s in slots):  # init failed (a port taken meanwhile?)
            self.start_failed = True
            return self.first
        stacks = self._stacks() if kind != "crashed" else {}
        name = self.checks[min(k, len(self.checks) - 1)][0]
        lines: dict[int, str] = {}
        for r in range(self.world):
            k_r, state, _, call, where = slots[r]
            done = self._load(k, r)
            if r in self.exit:
                lines[r] = f"rank {r} died ({self.exit[r]}) {_last_output(self.dir / f'rank{r}.log')}"
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


_CHILD = _ChildState()
_THIS_TAIL = "/grader/kit/ranks.py"


def _set_slot(k: int | None = None, state: int | None = None, call: str | None = None,
              where: str | None = None) -> None:
    off = _CHILD.rank * _SLOT.size
    k0, s0, _, c0, w0 = _SLOT.unpack_from(_CHILD.page, off)
    _SLOT.pack_into(_CHILD.page, off, k0 if k is None else k, s0 if state is None else state, _CHILD.calls,
                    c0 if call is None else call.encode()[:119], w0 if where is None else where.encode()[:199])


def _pick_line(frames: list[tuple[str, int]]) -> str:
    """The innermost frame of the learner's code (the target), else the innermost outside torch and this module."""
    from grader.grading.target import target_root

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
    from grader.grading.target import target_root

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


def _child_main(group: _Group, rank: int, port: int) -> None:
    code = 0
    try:
        _child_setup(group, rank)
        _child_run(group, rank, port)
    except BaseException:
        with contextlib.suppress(Exception):
            traceback.print_exc()
        code = 3
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _child_setup(group: _Group, rank: int) -> None:
    from grader.grading import boundary

    boundary._in_worker = True  # the learner's calls run here, in this process (never another fork)
    with contextlib.suppress(Exception):
        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: die with the parent
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the parent stops the ranks
    log = os.open(group.dir / f"rank{rank}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    for fd in (1, 2):
        os.dup2(log, fd)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", buffering=0), write_through=True)
    sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", buffering=0), write_through=True)
    faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)
    _CHILD.rank, _CHILD.page, _CHILD.rules = rank, group.page, group.rules
    _CHILD.depth, _CHILD.quiet, _CHILD.calls, _CHILD.log = 0, 0, 0, []


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
    for k in range(group.first, len(group.checks)):
        name, check = group.checks[k]
        _CHILD.log = []
        _set_slot(k=k, state=_RUNNING, call="", where="")
        try:
            payload: dict[str, Any] = {"value": check(rank, group.world, *group.args, **group.kwargs)}
        except BaseException as exc:  # every exception of a check is reported, the next check still runs
            payload = {"raised": _describe(exc)}
        payload["comm"] = list(_CHILD.log)
        _save(payload, group.dir / f"{k}.{rank}.pt")
        _set_slot(state=_CHECK_DONE)
        _CHILD.quiet += 1  # the grader's barrier: not logged
        barrier()
        _CHILD.quiet -= 1
    del guards  # the kernels are deregistered with their Library object
    _set_slot(k=len(group.checks), state=_FINISHED)
    dist.destroy_process_group()


def _save(payload: dict[str, Any], path: Path) -> None:
    import torch

    tmp = path.with_suffix(".tmp")
    try:
        torch.save(payload, tmp)
    except Exception as exc:
        torch.save({"raised": {"type": "Unsendable", "where": "",
                               "message": f"the check returned something torch.save cannot write: {exc}"},
                    "comm": payload["comm"]}, tmp)
    os.replace(tmp, path)


def _describe(exc: BaseException) -> dict[str, str]:
    frames = [(f.filename, f.lineno or 0) for f in reversed(traceback.extract_tb(exc.__traceback__))]
    text = str(exc).strip()
    return {"type": type(exc).__name__, "message": text[:2000], "where": _pick_line(frames)}
