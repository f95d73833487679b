"""The judge's side of gloo ranks: :func:`run_ranks` and the wire check of what the ranks put on the loopback.

The ranks run where the learner's code runs (grader/instrument/ranks.py: forked children, the comm log, deadlock
and crash detection) and send back data; here the judge rebuilds the outcomes (:class:`RankRuns`) and, in batch
grading's sandbox (a private network namespace per student), reads the kernel's loopback counters before and after
the run and sets the bytes they carried against what the logged calls put on the wire (:class:`Wire`, gloo's model).
Nothing the learner's processes do can change the counters the judge reads.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.instrument import clean, ranks, worker
from grader.instrument.ranks import COLLECTIVES, P2P, SENDS, RankFailure, RankRun


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
            "implementation fails here, the model in grader/instrument/ranks.py needs measuring again on this release)")


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


