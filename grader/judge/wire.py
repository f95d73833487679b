"""The judge's side of gloo ranks: :func:`run_ranks` and the wire check of what the ranks put on the loopback.

The ranks run where the learner's code runs (grader/instrument/ranks.py: forked children, the comm log, deadlock
and crash detection) and send back data; here the judge rebuilds the outcomes (:class:`RankRuns`) and, in batch
grading's sandbox (a private network namespace per student), reads the kernel's loopback counters before and after
the run and sets the bytes they carried against what the logged calls put on the wire (:class:`Wire`, gloo's model).
Nothing the learner's processes do can change the counters the judge reads.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from grader.i18n import N_, _
from grader.instrument import clean, ranks, worker
from grader.instrument.ranks import COLLECTIVES, P2P, SENDS, RankFailure, RankRun
from grader.judge import gloo_model
from grader.judge.gloo_model import RELATIVE, GlooModel


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


def fresh_ranks_ahead() -> None:
    """At collection, in a test module that calls ``run_ranks(..., fresh=True)``: the process its ranks fork from is
    made now, a fork of this one taken just before the first learner code runs here (:func:`clean.ahead`), not a new
    interpreter started at the first fresh run (~2 s)."""
    clean.ahead()


def run_ranks(
    check: Callable[..., Any] | Mapping[str, Callable[..., Any]],
    world_size: int,
    *args: Any,
    timeout_s: float = 20.0,
    refuse: Any = (),
    stall_s: float = ranks.STALL_S,
    fresh: bool = False,
    **kwargs: Any,
) -> Any:
    """``check(rank, world_size, *args, **kwargs)`` on ``world_size`` gloo ranks (see the module docstring).

    One check: its :class:`RankRun`, or RankFailure raised. A dict of checks: a :class:`RankRuns`.
    ``fresh``: the ranks are forked from a process where no learner code ever ran (:mod:`grader.instrument.clean`),
    so the first check runs in processes the learner's code has not touched before (memory windows).
    """
    if world_size not in ranks.WORLD_SIZES:
        raise ValueError(f"world_size must be one of {ranks.WORLD_SIZES}, got {world_size!r}")
    checks = dict(check) if isinstance(check, Mapping) else {getattr(check, "__name__", "check"): check}
    rules = dict(refuse) if isinstance(refuse, Mapping) else dict.fromkeys(refuse, ranks.REFUSE_RULE)
    def measured(items: list) -> RankRuns:
        before = _net_counters()
        runner = clean.run_here if fresh else ranks.run_here
        raw = worker.where_learner_runs(runner, items, world_size, args, kwargs, float(timeout_s), rules,
                                         float(stall_s))
        after = _net_counters()
        runs = _rebuild(raw, world_size)
        if before is not None and after is not None:
            runs.wire = Wire.between(before, after, runs.starts, len(items), _accounted(runs))
        return runs

    runs = measured(list(checks.items()))
    if runs.wire is not None and not runs.wire.complete:
        # A deadlock, crash or timeout leaves traffic no log accounts for: the checks that logged everything run
        # again on their own; their outcomes and wire replace the first run's (new secret seeds: each outcome carries
        # its own).
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




PRIVATE_NET_ENV = "DRIPSTONE_PRIVATE_NET"  # set by batch grading's sandbox: this process has a network of its own
# gloo's own bytes (its message header per logged send, the TCPStore rendezvous and teardown per start and pair of
# ranks, the grader's barrier between checks per rank, its headers per collective call and ordered pair of ranks,
# each collective's share of its logged bytes per world size) are measured, not typed: grader/judge/gloo_model.py
# measures them with judge-written calls, grader/judge/gloo_models.json stores them per torch release (2-4 ranks,
# 800 B to 400 KB), with room: the bounds they give must hold for every honest run.
SEGMENT_MAX = 65536  # a TCP segment on lo (its MTU): the most one retransmission can carry
# Retransmissions on lo, measured on busy machines: 0-5 per run, almost all without payload (the payload count
# unchanged); in 2 runs of ~40, one or three carried a chunk (+8-11 KB). Two are credited a message each: more
# would let a flood of lo (which drops packets, so gloo's get retransmitted) buy room for hidden traffic.
RETRANSMITS_CREDITED = 2
SKIPPED = N_("the wire check is skipped: {why}")


def torch_release() -> str:
    """The installed torch's release (``2.13.0`` of ``2.13.0+cpu``), read without importing torch."""
    return gloo_model.torch_release()


_SAID: set[str] = set()


def _model() -> tuple[GlooModel | None, str]:
    """The model of this torch's gloo and a note for the messages (see gloo_model.model_for_this_torch); where
    there is none, the wire check is skipped and that is said once, in the judge's log and as a warning."""
    model, note = gloo_model.model_for_this_torch()
    if model is None and note not in _SAID:
        _SAID.add(note)
        said = _(SKIPPED).format(why=note)
        print(said, file=sys.stderr)
        warnings.warn(said, RuntimeWarning, stacklevel=3)
    return model, note


def _payload_share(name: str, nbytes: int, world: int, model: GlooModel) -> tuple[float, float]:
    """(least, most) payload one rank's logged call puts on the wire, gloo's headers for a collective included in
    the most. A send is its bytes (its header: the model's msg_min/msg_max); a receive is the sender's. A call with
    no share in the model (object collectives, coalesced ones, barriers) allows headers only, so its bytes cannot
    widen the bounds."""
    if name in SENDS:
        return nbytes, nbytes
    if name in ("recv", "irecv"):
        return 0, 0
    share = model.share(name, world) * nbytes
    return share, share + model.headers(name, world)


def _well_formed(entry: object) -> bool:
    return (isinstance(entry, tuple) and len(entry) == 2 and entry[0] in (*P2P, *COLLECTIVES)
            and type(entry[1]) is int and 0 <= entry[1] < 2**48)


def _net_counters() -> dict[str, int] | None:
    """The loopback's counters of this process's network namespace; None unless it is private to one student
    (batch grading's sandbox: ``--unshare-net``, where lo is the only interface) and the kernel shows them."""
    if os.environ.get(PRIVATE_NET_ENV) != "1":
        return None
    return gloo_model.lo_counters()


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
        payload, retrans = gloo_model.payload_between(a, b)
        return cls(payload, retrans, starts, checks, complete)

    def bounds(self, logs: list[list[list[tuple[str, int]]]], world: int,
               model: GlooModel | None = None) -> tuple[int, int, int, int]:
        """(lowest, highest) payload the calls allow by ``model`` (this torch's); the bytes they pass and how many
        they are."""
        m = model if model is not None else _model()[0]
        if m is None:
            raise ValueError("no model of gloo's bytes for this torch: see grader/judge/gloo_model.py")
        calls = [(name, n) for check in logs for rank in check for name, n in rank]
        low = high = 0.0
        for name, n in calls:
            least, most = _payload_share(name, n, world, m)
            low += least * (1 - RELATIVE) + (m.msg_min if name in SENDS and n else 0)  # an empty send may be skipped
            high += most * (1 + RELATIVE) + (m.msg_max if name in SENDS else 0)
        pairs = world * (world - 1) // 2
        high += (self.starts * (m.start_base + m.start_per_pair * pairs) + self.checks * m.barrier_per_rank * world
                 + min(self.retransmits, RETRANSMITS_CREDITED) * (min(max((n for _, n in calls), default=0),
                                                                         SEGMENT_MAX) + m.msg_max))
        logged = sum(n for name, n in calls if name not in ("recv", "irecv"))
        return int(low), int(high), logged, len(calls)

    def mismatch(self, logs: list[list[list[tuple[str, int]]]], world: int,
                 model: GlooModel | None = None, note: str = "") -> str | None:
        """None when the payload is within :meth:`bounds` (by ``model``, this torch's by default) of the calls
        ``logs`` holds (per check, per rank); ``note`` (how the model was had) ends a mismatch's message."""
        bad = [e for check in logs for rank in check for e in rank if not _well_formed(e)]
        if bad:  # the wrappers log (name, bytes >= 0) only: anything else was written by something else
            return f"the comm log holds entries no torch.distributed call writes: {bad[:3]}"
        if model is None:
            model, note = _model()
            if model is None:
                return None
        low, high, sent, count = self.bounds(logs, world, model)
        note = f" ({note})" if note else ""
        if low <= self.payload <= high:
            return None
        said = (f"the calls the test counts for {world} ranks ({count}, passing {sent:,} B of tensors) mean "
                f"{low:,}-{high:,} B of payload on the loopback (gloo's headers, the rendezvous and the grader's "
                f"barriers included), but it carried {self.payload:,} B")
        if self.payload > high:
            return (f"{said}: data went by a route the comm log does not see (a socket or store of your own, a "
                    "process group's functions reached some other way); exchange data only with torch.distributed's "
                    "functions" + note)
        return (f"{said}: the log counts traffic that never reached the network (a send nobody received, or a "
                "log written by something other than torch.distributed's calls)" + note)


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
                                          out["seconds"], out["startup_s"], [int(x) for x in out["seeds"]])
    return runs


