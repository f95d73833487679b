"""gloo's bytes on the wire, measured by the judge: the model the wire check (grader/judge/wire.py) holds runs to.

The wire check sets the payload the loopback carried during a run against what the logged calls put on it: each
send's bytes and gloo's message header, each collective's share of its logged bytes and its headers per pair of
ranks, the rendezvous per start and the grader's barrier per check. Those numbers are gloo's, and another torch
release may change them, so they are data measured by judge-owned code, never typed:

* :func:`measure` runs honest, judge-written calls (sends and receives, every collective the model has a share
  for, barriers, the rendezvous) on 2-4 ranks, 800 B to 400 KB, under the same capture the wire check uses (the
  loopback's counters of a network namespace of the measurement's own, read with :func:`lo_counters` and
  :func:`payload_between`), in a forked process of the judge's (never the learner's worker);
* :func:`derive` turns the raw numbers into a :class:`GlooModel` with :data:`MARGINS` (the room the hand-measured
  constants of torch 2.13.0 carried over what this measurement reads);
* models are stored per torch release in ``grader/judge/gloo_models.json`` (``python -m grader.tools.gloo_model
  --write``), and :func:`model_for_this_torch` picks this torch's: the stored one, else one measured here before
  the first wire check (kept per process, and in a per-release cache outside batch grading's sandbox), else None
  with a message naming both releases and the command (the wire check is then skipped, never failed).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import math
import os
import socket
import statistics
import struct
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.instrument import ranks

MODELS_FILE = Path(__file__).with_name("gloo_models.json")
FORMAT = 1
CACHE_ENV = "DRIPSTONE_GLOO_MODEL_CACHE"  # a folder of measured models, one file per torch release
ISOLATED_ENV = "DRIPSTONE_ISOLATE"  # batch grading's judge (grader/instrument/worker.py::ISOLATE_ENV)
TOOL = "python -m grader.tools.gloo_model --write"

# Per packet on the loopback: Ethernet 14 + IPv4 20 + TCP 20 with the timestamp option 12 (every segment
# between Linux peers); a UDP datagram 14 + 20 + 8 (IPv6: 20 more); ICMP 14 + 20 + 8.
TCP_HEADER, UDP_HEADER, UDP6_HEADER, ICMP_HEADER = 66, 42, 62, 42
RELATIVE = 0.01  # of the logged bytes, either way: what the wire check allows around each call's share

# What the measurement runs: every collective the model gives a share, on every world size, at these sizes (bytes
# of each rank's tensor); sends at the small sizes (at 400 KB the per-segment accounting of lo's large packets
# blurs a 90 B header; the wire check's RELATIVE covers it).
SHARED = ("all_reduce", "broadcast", "reduce", "gather", "scatter", "all_to_all", "all_to_all_single", "all_gather",
          "all_gather_into_tensor", "all_gather_single", "reduce_scatter", "reduce_scatter_tensor",
          "reduce_scatter_single")
SIZES = (800, 40_000, 400_000)
SEND_SIZES = (800, 4_000, 40_000)
REPEATS = 2
RETRIES = 3  # a bracket in which lo retransmitted (a busy machine) is made again, up to this many times
RING_STEPS = 8  # sends per rank in one bracket: a stray message of gloo's in or out of it shifts one send's header
# by an eighth

# The room a derived model leaves over what was measured: the margins the constants measured by hand on torch
# 2.13.0 carried (its message header 88 B read as 75-110; a two-rank start with its one barrier ~750 B as 1,500
# + 1,000 per pair; the grader's barrier ~190 B per rank as 500; an all-reduce's ~375 B of headers per ordered
# pair as 600).
MARGINS = {"msg_min": 0.85, "msg_max": 1.25, "start_base": 2.0, "start_per_pair": 1.3, "barrier_per_rank": 2.6,
           "collective_per_pair": 1.6}
LIST_HEADERS_RATIO = 1.5  # a collective whose headers per pair are this many times an all-reduce's: P sets of them


class ModelFileError(ValueError):
    """The stored models cannot be read: what is wrong, and the command that writes them again."""


class MeasureError(RuntimeError):
    """The model could not be measured here (no user or network namespace, a rank failed): why."""


@dataclass(frozen=True)
class GlooModel:
    """What gloo puts on the wire on one torch release (bytes; see the module docstring)."""

    release: str
    msg_min: int  # gloo's header per logged send, least and most
    msg_max: int
    start_base: int  # the TCPStore rendezvous and teardown of one start: base + per pair of ranks
    start_per_pair: int
    barrier_per_rank: int  # the grader's barrier after each check
    collective_per_pair: int  # a collective call's headers per ordered pair of ranks
    shares: Mapping[str, Mapping[int, float]]  # payload per logged byte, per collective and world size
    list_headers: frozenset[str] = frozenset()  # collectives whose headers are world-size times a call's
    note: str = ""
    source: str = "stored"  # stored | measured here | cached

    def share(self, name: str, world: int) -> float:
        return self.shares.get(name, {}).get(world, 0.0)

    def headers(self, name: str, world: int) -> int:
        """The most headers one rank's call of collective ``name`` adds."""
        return self.collective_per_pair * (world - 1) * (world if name in self.list_headers else 1)

    def to_json(self) -> dict[str, Any]:
        return {"note": self.note, "msg_min": self.msg_min, "msg_max": self.msg_max, "start_base": self.start_base,
                "start_per_pair": self.start_per_pair, "barrier_per_rank": self.barrier_per_rank,
                "collective_per_pair": self.collective_per_pair,
                "shares": {n: {str(p): s for p, s in sorted(per.items())} for n, per in sorted(self.shares.items())},
                "list_headers": sorted(self.list_headers)}

    @classmethod
    def from_json(cls, release: str, data: object, source: str = "stored") -> GlooModel:
        """The model stored as ``data``; ValueError saying what is wrong."""
        if not isinstance(data, dict):
            raise ValueError(f"the model of torch {release} is not an object")
        ints = ("msg_min", "msg_max", "start_base", "start_per_pair", "barrier_per_rank", "collective_per_pair")
        for key in ints:
            if type(data.get(key)) is not int or not 0 <= data[key] < 10**6:
                raise ValueError(f"the model of torch {release}: {key} must be a whole number of bytes, got "
                                 f"{data.get(key)!r}")
        if data["msg_min"] > data["msg_max"]:
            raise ValueError(f"the model of torch {release}: msg_min is above msg_max")
        shares = data.get("shares")
        if not isinstance(shares, dict) or not shares:
            raise ValueError(f"the model of torch {release} has no shares")
        parsed: dict[str, dict[int, float]] = {}
        for name, per in shares.items():
            if name not in ranks.COLLECTIVES or not isinstance(per, dict):
                raise ValueError(f"the model of torch {release}: {name!r} is not a collective with shares per world")
            try:
                parsed[name] = {int(p): float(s) for p, s in per.items()}
            except (TypeError, ValueError):
                raise ValueError(f"the model of torch {release}: {name}'s shares are not numbers") from None
            if any(p not in ranks.WORLD_SIZES or not 0.0 <= s < 8.0 for p, s in parsed[name].items()):
                raise ValueError(f"the model of torch {release}: {name}'s shares are out of range: {per}")
        listed = data.get("list_headers", [])
        if not isinstance(listed, list) or any(n not in ranks.COLLECTIVES for n in listed):
            raise ValueError(f"the model of torch {release}: list_headers must name collectives, got {listed!r}")
        return cls(release, *(data[k] for k in ints), parsed, frozenset(listed), str(data.get("note", "")), source)


# ---------------------------------------------------------------- the stored models


def torch_release() -> str:
    """The installed torch's release (``2.13.0`` of ``2.13.0+cpu``), read without importing torch."""
    import importlib.metadata

    try:
        return importlib.metadata.version("torch").split("+", 1)[0]
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def load_stored(path: Path | None = None) -> dict[str, GlooModel]:
    """Every model of the models file, by torch release; :class:`ModelFileError` saying what is wrong."""
    path = MODELS_FILE if path is None else path
    fix = f"restore it from git, or measure this torch's model again: `{TOOL}`"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ModelFileError(f"gloo's wire models are missing: {path} does not exist; {fix}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"gloo's wire models cannot be read from {path}: {exc}; {fix}") from None
    try:
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("models"), dict):
            raise ValueError(f"expected {{\"format\": {FORMAT}, \"models\": {{release: model}}}}")
        return {release: GlooModel.from_json(release, m) for release, m in data["models"].items()}
    except ValueError as exc:
        raise ModelFileError(f"gloo's wire models in {path} are malformed: {exc}; {fix}") from None


def store(model: GlooModel, path: Path | None = None) -> None:
    """``model`` written into the models file under its release (the others kept; a malformed file is replaced)."""
    path = MODELS_FILE if path is None else path
    try:
        models = {r: m.to_json() for r, m in load_stored(path).items()}
    except ModelFileError:
        models = {}
    models[model.release] = model.to_json()
    text = json.dumps({"format": FORMAT, "models": dict(sorted(models.items()))}, indent=1) + "\n"
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def cache_dir() -> Path:
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path.home() / ".cache" / "dripstone" / "gloo-models"


def _isolated() -> bool:
    return os.environ.get(ISOLATED_ENV) == "1"


def _trusted(path: Path) -> bool:
    """A cached model is read where the learner's code cannot have written it: anywhere outside batch grading's
    sandbox (its code runs as the user anyway), inside only where neither the file nor its folder is writable."""
    if not _isolated():
        return True
    return not os.access(path, os.W_OK) and not os.access(path.parent, os.W_OK)


_MEASURED: dict[str, tuple[GlooModel | None, str]] = {}  # per release, for this process


def model_for_this_torch() -> tuple[GlooModel | None, str]:
    """(the model the wire check uses, a note for its messages): the stored model of this torch's release; else one
    measured for it (cached); else (None, why, naming both releases and the command that stores a model)."""
    release = torch_release()
    problem = ""
    try:
        stored = load_stored()
    except ModelFileError as exc:
        stored, problem = {}, f"{exc}. "
    if release in stored:
        return stored[release], ""
    if release in _MEASURED:
        return _MEASURED[release]
    known = ", ".join(sorted(stored)) or "none"
    cached = cache_dir() / f"{release}.json"
    with contextlib.suppress(OSError, ValueError):
        if cached.is_file() and _trusted(cached):
            model = GlooModel.from_json(release, json.loads(cached.read_text()), "cached")
            _MEASURED[release] = (model, f"gloo's bytes for torch {release} were measured on this machine, "
                                         f"cached in {cached}; stored models: {known}")
            return _MEASURED[release]
    try:
        model = derive(measure(), source="measured here", release=release)
    except MeasureError as exc:
        _MEASURED[release] = (None, f"{problem}the wire check is skipped: grader/judge/gloo_models.json holds gloo's "
                                    f"bytes for torch {known}, this is torch {release}, and measuring them here "
                                    f"failed ({exc}); run `{TOOL}` with this torch")
        return _MEASURED[release]
    if not _isolated():
        with contextlib.suppress(OSError):
            cached.parent.mkdir(parents=True, exist_ok=True)
            cached.write_text(json.dumps(model.to_json(), indent=1) + "\n")
    _MEASURED[release] = (model, f"{problem}gloo's bytes for torch {release} were measured here before the first "
                                 f"wire check; stored models: {known}; `{TOOL}` stores this one")
    return _MEASURED[release]


# ---------------------------------------------------------------- the capture (the wire check's too)


def lo_counters() -> dict[str, int] | None:
    """The loopback's counters of this process's network namespace (bytes sent, and the SNMP counters of every
    protocol); None unless lo is its only interface and the kernel shows them."""
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


def payload_between(a: Mapping[str, int], b: Mapping[str, int]) -> tuple[int, int]:
    """(payload, retransmitted segments) lo carried between two readings: its bytes less each packet's header (the
    smallest of its protocol, so that no packet can hide payload in its header's allowance), retransmissions
    charged their header."""
    d = {k: b.get(k, 0) - a.get(k, 0) for k in b}
    headers = (TCP_HEADER * d.get("TcpOutSegs", 0) + UDP_HEADER * (d.get("UdpOutDatagrams", 0)
               + d.get("UdpLiteOutDatagrams", 0)) + UDP6_HEADER * (d.get("6:Udp6OutDatagrams", 0)
               + d.get("6:UdpLite6OutDatagrams", 0)) + ICMP_HEADER * (d.get("IcmpOutMsgs", 0)
               + d.get("6:Icmp6OutMsgs", 0)))
    retrans = d.get("TcpRetransSegs", 0)
    return d["bytes"] - headers - TCP_HEADER * retrans, retrans


# ---------------------------------------------------------------- the measurement (judge-written calls only)


def _call(name: str, rank: int, world: int, nbytes: int) -> None:
    """One honest ``name`` call whose per-rank tensor has ``nbytes`` bytes (float32)."""
    import torch
    import torch.distributed as dist

    n = nbytes // 4
    x = torch.zeros(n)
    parts = lambda: [torch.zeros(n) for _ in range(world)]
    if name in ("all_reduce",):
        dist.all_reduce(x)
    elif name in ("broadcast", "reduce"):
        getattr(dist, name)(x, 0)
    elif name == "all_gather":
        dist.all_gather(parts(), x)
    elif name in ("all_gather_into_tensor", "all_gather_single"):
        getattr(dist, name)(torch.zeros(world * n), x)
    elif name == "reduce_scatter":
        dist.reduce_scatter(x, parts())
    elif name in ("reduce_scatter_tensor", "reduce_scatter_single"):
        getattr(dist, name)(x, torch.zeros(world * n))
    elif name == "gather":
        dist.gather(x, parts() if rank == 0 else None, 0)
    elif name == "scatter":
        dist.scatter(x, parts() if rank == 0 else None, 0)
    elif name == "all_to_all":
        dist.all_to_all(parts(), parts())
    elif name == "all_to_all_single":
        dist.all_to_all_single(torch.zeros(world * n), torch.zeros(world * n))
    elif name == "barrier":
        dist.barrier()
    elif name == "ring":  # RING_STEPS times, each rank sends to the next and receives from the one before
        buf = torch.empty(n)
        for _ in range(RING_STEPS):
            req = dist.isend(x, (rank + 1) % world)
            dist.recv(buf, (rank - 1) % world)
            req.wait()
    elif name != "nothing":
        raise ValueError(name)


def _bracketed(rank: int, world: int) -> list[tuple[str, int, int, int, list]]:
    """A check for the ranks: every call of the measurement between two readings of lo's counters by rank 0.

    Rank 0 reads, then lets every rank go (a 4 B send each); every rank makes the call, then tells rank 0 it is
    done (4 B each); rank 0 reads again once all are done, so everything the call sent lies between the readings,
    with the same go and done messages each time ("nothing": those alone). Returns (call, size, payload,
    retransmits, the rank's log of the call) per bracket, each retry of one where lo retransmitted included; the
    payload on rank 0 only."""
    import torch
    import torch.distributed as dist

    flag = torch.zeros(1)
    plan = [("nothing", 0)] * (2 * REPEATS) + [("barrier", 0)] * (2 * REPEATS)
    plan += [("ring", n) for n in SEND_SIZES for _ in range(REPEATS)]
    plan += [(name, n) for name in SHARED for n in SIZES for _ in range(REPEATS)]
    out = []
    for name, nbytes in plan:
        for attempt in range(1 + RETRIES):
            with ranks.uncounted():
                if rank == 0:
                    a = lo_counters()
                    for r in range(1, world):
                        dist.send(flag, r)
                else:
                    dist.recv(flag, 0)
            before = len(ranks.comm_log())
            _call(name, rank, world, nbytes)
            logged = [list(e) for e in ranks.comm_log()[before:]]
            payload = retrans = 0
            with ranks.uncounted():
                if rank == 0:
                    for r in range(1, world):
                        dist.recv(flag, r)
                    b = lo_counters()
                    if a is None or b is None:
                        raise MeasureError("lo's counters cannot be read in the ranks")
                    payload, retrans = payload_between(a, b)
                    again = torch.full((1,), float(retrans > 0 and attempt < RETRIES))
                    for r in range(1, world):  # after the reading: outside every bracket
                        dist.send(again, r)
                else:
                    dist.send(flag, 0)
                    again = torch.zeros(1)
                    dist.recv(again, 0)
            out.append((name, nbytes, payload, retrans, logged))
            if not again.item():
                break
    return out


def _idle(rank: int, world: int) -> None:
    return None


def _measure_here(timeout_s: float) -> dict[str, Any]:
    """In a network namespace of this process's own: per world size, one start with an idle check (the rendezvous
    and one barrier) and one with the bracketed calls; raw numbers, plain data."""
    raw: dict[str, Any] = {"release": torch_release(), "worlds": {}}
    t0 = time.monotonic()
    for world in ranks.WORLD_SIZES:
        got = {}
        for name, check in (("idle", _idle), ("calls", _bracketed)):
            a = lo_counters()
            run = ranks.run_here([(name, check)], world, (), {}, timeout_s, {}, ranks.STALL_S)
            b = lo_counters()
            out = run["outcomes"][name]
            if "failure" in out or a is None or b is None:
                raise MeasureError(out.get("failure", {}).get("message", "lo's counters cannot be read"))
            got[name] = (payload_between(a, b), out["results"])
        (idle, idle_retrans), _ = got["idle"]
        results = got["calls"][1]
        brackets = []
        for i, (name, nbytes, payload, retrans, _) in enumerate(results[0]):
            logged = sum(n for per in results for call, n in per[i][4] if call not in ("recv", "irecv"))
            brackets.append([name, nbytes, logged, payload, retrans])
        raw["worlds"][str(world)] = {"idle": idle, "idle_retransmits": idle_retrans, "brackets": brackets}
    raw["seconds"] = round(time.monotonic() - t0, 3)
    return raw


_CLONE_NEWUSER, _CLONE_NEWNET = 0x10000000, 0x40000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1


def _private_network() -> None:
    """This (single-threaded, forked) process in a user and network namespace of its own, its loopback up: its
    counters hold only what the measurement sends (not the learner's worker's, nor another student's)."""
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise MeasureError(f"no network namespace of its own: unshare: {os.strerror(err)}")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        fd = os.open(f"/proc/self/{name}", os.O_WRONLY)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, _SIOCGIFFLAGS, struct.pack("16sH14s", b"lo", 0, b"")))[1]
        fcntl.ioctl(s, _SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | _IFF_UP, b""))


def measure(timeout_s: float = 30.0) -> dict[str, Any]:
    """The raw measurement (see :func:`_measure_here`), made in a forked child of this process in a network of
    its own; :class:`MeasureError` saying why it could not be made."""
    import torch  # noqa: F401  (before the fork, as the ranks need it)

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the measurer: never returns
        code = 0
        try:
            os.close(read)
            try:
                _private_network()
                reply = {"raw": _measure_here(timeout_s)}
            except Exception as exc:
                reply = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
            data = json.dumps(reply).encode()
            while data:
                data = data[os.write(write, data):]
        except BaseException:
            with contextlib.suppress(Exception):
                traceback.print_exc()
            code = 3
        finally:
            os._exit(code)
    os.close(write)
    chunks = []
    with os.fdopen(read, "rb") as f:
        while chunk := f.read(1 << 16):
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    try:
        reply = json.loads(b"".join(chunks) or b"{}")
    except json.JSONDecodeError:
        reply = {}
    if "raw" in reply:
        return reply["raw"]
    raise MeasureError(reply.get("error") or f"the measuring process ended ({status:#x}) with no result")


# ---------------------------------------------------------------- from raw numbers to a model


@dataclass
class Reading:
    """What one measurement read, per world size (bytes; medians over the repeats, retransmitting ones set aside
    where others remain)."""

    release: str
    msg: list[float] = field(default_factory=list)  # gloo's header per send, every bracket of sends
    start: dict[int, float] = field(default_factory=dict)  # one start: rendezvous, teardown, the check's barrier
    barrier: dict[int, float] = field(default_factory=dict)  # one barrier, all ranks
    shares: dict[str, dict[int, float]] = field(default_factory=dict)  # payload per logged byte
    per_pair: dict[str, dict[int, float]] = field(default_factory=dict)  # headers per call and ordered pair
    seconds: float = 0.0


def _quiet(rows: list[list]) -> list[list]:
    """The brackets with no retransmission, if any."""
    return [r for r in rows if r[4] == 0] or rows


def _clean(rows: list[list]) -> list[list]:
    """Per size, the repeat that carried least among those with no retransmission (a retransmitted segment's data
    counts twice), else among all: what disturbs a bracket on a busy machine (a retransmission, a stray message of
    gloo's) only adds bytes."""
    out = []
    for size in dict.fromkeys(r[1] for r in rows):
        same = [r for r in rows if r[1] == size]
        out.append(min([r for r in same if r[4] == 0] or same, key=lambda r: r[3]))
    return out


def read(raw: Mapping[str, Any]) -> Reading:
    """The numbers of a raw measurement (:func:`measure`)."""
    out = Reading(str(raw["release"]), seconds=float(raw.get("seconds", 0.0)))
    for key, per in raw["worlds"].items():
        world = int(key)
        rows = per["brackets"]
        base = statistics.median(r[3] for r in _quiet([r for r in rows if r[0] == "nothing"]))
        out.barrier[world] = statistics.median(r[3] for r in _quiet([r for r in rows if r[0] == "barrier"])) - base
        out.start[world] = per["idle"]
        out.msg += [(r[3] - base - r[2]) / (world * RING_STEPS) for r in _quiet([r for r in rows if r[0] == "ring"])]
        pairs = world * (world - 1)
        for name in SHARED:
            pts = [(r[2], r[3] - base) for r in _clean([r for r in rows if r[0] == name])]
            if len(pts) < 2:
                raise MeasureError(f"{name} on {world} ranks was not measured")
            mx, my = statistics.fmean(x for x, _ in pts), statistics.fmean(y for _, y in pts)
            slope = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
            out.shares.setdefault(name, {})[world] = slope
            out.per_pair.setdefault(name, {})[world] = statistics.median((y - slope * x) / pairs for x, y in pts)
    return out


def _up(x: float, step: int) -> int:
    return int(math.ceil(x / step) * step)


def _near(x: float, step: int) -> int:
    return int(round(x / step) * step)


def derive(raw: Mapping[str, Any], source: str = "measured", release: str | None = None) -> GlooModel:
    """The model a raw measurement gives (for ``release``, by default the one it was made on), with
    :data:`MARGINS` of room."""
    r = read(raw)
    msg = statistics.median(r.msg)
    base_ar = r.per_pair["all_reduce"]
    listed = frozenset(n for n, per in r.per_pair.items()
                       if all(h > LIST_HEADERS_RATIO * base_ar[w] for w, h in per.items()))
    per_pair = max(h for n, per in r.per_pair.items() if n not in listed for h in per.values())
    two = min(r.start)
    return GlooModel(
        release=r.release if release is None else release,
        msg_min=_near(MARGINS["msg_min"] * msg, 5),
        msg_max=_near(MARGINS["msg_max"] * msg, 5),
        start_base=_up(MARGINS["start_base"] * r.start[two], 100),
        start_per_pair=_up(MARGINS["start_per_pair"] * max(s / (w * (w - 1) // 2) for w, s in r.start.items()), 100),
        barrier_per_rank=_up(MARGINS["barrier_per_rank"] * max(b / w for w, b in r.barrier.items()), 100),
        collective_per_pair=_up(MARGINS["collective_per_pair"] * per_pair, 50),
        shares={n: {w: round(s, 5) for w, s in per.items()} for n, per in r.shares.items()},
        list_headers=listed,
        note=f"measured by grader/judge/gloo_model.py in {r.seconds:.1f} s (message header {msg:.0f} B; start "
             + ", ".join(f"{s:.0f}" for _, s in sorted(r.start.items())) + " B and barrier "
             + ", ".join(f"{b:.0f}" for _, b in sorted(r.barrier.items())) + " B on 2, 3, 4 ranks)",
        source=source,
    )


def covers(model: GlooModel, reading: Reading) -> list[str]:
    """What of ``reading`` falls outside ``model``'s room ([] when every number measured is within it): the check
    that the stored model is what the tool measures."""
    bad = []
    msg = statistics.median(reading.msg)
    if not model.msg_min <= msg <= model.msg_max:
        bad.append(f"message header {msg:.0f} B outside {model.msg_min}-{model.msg_max}")
    for w, s in reading.start.items():
        room = model.start_base + model.start_per_pair * (w * (w - 1) // 2) + model.barrier_per_rank * w
        if s > room:
            bad.append(f"a start and its barrier on {w} ranks {s:.0f} B over {room}")
    for w, b in reading.barrier.items():
        if b > model.barrier_per_rank * w:
            bad.append(f"barrier on {w} ranks {b:.0f} B over {model.barrier_per_rank * w}")
    for name, per in reading.shares.items():
        for w, s in per.items():
            want = model.share(name, w)
            if abs(s - want) > RELATIVE * want:
                bad.append(f"{name} on {w} ranks: share {s:.5f}, the model's {want:.5f}")
            h = reading.per_pair[name][w]
            if h * w * (w - 1) > model.headers(name, w) * w:
                bad.append(f"{name} on {w} ranks: headers {h:.0f} B per pair over the model's")
    return bad


