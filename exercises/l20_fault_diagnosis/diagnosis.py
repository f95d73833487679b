"""L20 · Fault diagnosis: Xid triage, slow GPUs in DCGM telemetry, the straggler inversion, NCCL hangs.

Lecture 20 (02_GPU硬件与集群互联/20_Benchmark_监控与AI集群故障诊断_Xid_SlowNode_NCCL_Hang.md).

Xid. The NVIDIA driver reports GPU faults to the kernel log as
``NVRM: Xid (PCI:0000:18:00): 31, pid=88001, name=python, <detail>``. The code says who is at fault:
13/31/43/45 are the application's (31 is an MMU fault: a bad pointer, not bad memory), 48/95 are
uncorrectable ECC errors, 74 is NVLink, 79 means the GPU fell off the PCIe bus. ``XID_ACTIONS`` maps
each code to the action a cluster operator takes; a code it does not list must be investigated.

Slow GPU. A throttled GPU is alive and silent: only telemetry (``dcgmi dmon``) shows its clock at
765 MHz while its peers run at 1410. The robust z-score of Iglewicz and Hoaglin,
``z = 0.6745 · (x − median) / MAD`` with ``MAD = median(|x − median|)``, is not dragged by the
outlier it looks for (a mean and standard deviation are); |z| > 3.5 flags an outlier.

Straggler. In a synchronous job every rank waits for the slowest at the collective: the victims
show the longest wait, the culprit the longest compute and the *shortest* wait.

Hang. With ``NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL`` each rank logs every collective it enqueues,
``AllReduce: opCount 1f4 ... comm 0x55d1c8a0 [nranks=8]``; the opCount is hexadecimal and counts
the collectives of that communicator. In a hang, the rank whose last opCount is behind (or that
never reached the communicator), or that called a different collective at the same count, is the
one to look at.

Invalid arguments raise ValueError naming the argument.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Sequence

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

# Action classes, least to most severe. An Xid that XID_ACTIONS does not list is "investigate".
ACTIONS = ("app", "monitor", "investigate", "reset_gpu", "drain_node")
XID_ACTIONS = {
    13: "app",  # graphics engine exception: the kernel did something illegal
    31: "app",  # GPU memory page fault (MMU fault): usually an application bug
    43: "app",  # GPU stopped processing: the application's context was killed
    45: "app",  # preemptive cleanup: follows another Xid or a killed process
    63: "monitor",  # row-remapping event (ECC): recorded, takes effect at the next reset
    92: "monitor",  # high single-bit ECC error rate
    94: "monitor",  # contained ECC error: only the affected application was stopped
    74: "reset_gpu",  # NVLink error
    119: "reset_gpu",  # GSP RPC timeout
    120: "reset_gpu",  # GSP error
    48: "drain_node",  # double-bit (uncorrectable) ECC error
    64: "drain_node",  # row-remapping failure: the GPU needs replacing
    79: "drain_node",  # GPU has fallen off the bus
    95: "drain_node",  # uncontained ECC error
}
XID_LINE = re.compile(r"NVRM: Xid \(PCI:([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})(?:\.[0-7])?\): (\d+),(.*)$")
HIGH_IS_BAD = ("TMPTR",)  # every other dmon field reads low on a slow GPU
COLL_LINE = re.compile(r"NCCL INFO (\w+): opCount ([0-9A-Fa-f]+) .*?\bcomm (0x[0-9A-Fa-f]+)\b")


# ---------------------------------------------------------------------------------------------
# Argument checks (given)
# ---------------------------------------------------------------------------------------------


def _check_text(name: str, text: str) -> str:
    if not isinstance(text, str):
        raise ValueError(f"{name} must be a str (the tool's output), got {type(text).__name__}")
    return text


def _check_reals(name: str, values: Sequence[float], minimum: float | None = None) -> list[float]:
    """A non-empty sequence of finite reals (bools refused), each >= minimum when given."""
    if isinstance(values, (str, bytes, dict)) or not isinstance(values, Sequence) or not values:
        raise ValueError(f"{name} must be a non-empty sequence of numbers, got {values!r}")
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"{name}[{i}] must be a finite number, got {v!r}")
        if minimum is not None and v < minimum:
            raise ValueError(f"{name}[{i}] must be >= {minimum}, got {v!r}")
        out.append(float(v))
    return out


def _check_threshold(threshold: float) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold < math.inf:
        raise ValueError(f"threshold must be a finite number > 0, got {threshold!r}")
    return float(threshold)


def normalize_pci(address: str) -> str:
    """``0000:3A:00``, ``00000000:3a:00.0`` → ``0000:3a:00`` (4-digit domain, lower case, no function)."""
    m = re.fullmatch(r"([0-9A-Fa-f]{4,8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})(?:\.[0-7])?", address.strip())
    if m is None:
        raise ValueError(f"not a PCI bus id: {address!r}")
    return f"{int(m.group(1), 16):04x}:{m.group(2).lower()}:{m.group(3).lower()}"


def _check_pci_map(pci_to_gpu: dict[str, int]) -> dict[str, int]:
    if not isinstance(pci_to_gpu, dict):
        raise ValueError(f"pci_to_gpu must be a dict {{PCI bus id: GPU index}}, got {pci_to_gpu!r}")
    out: dict[str, int] = {}
    for key, gpu in pci_to_gpu.items():
        try:
            bus = normalize_pci(key) if isinstance(key, str) else normalize_pci("")
        except ValueError:
            raise ValueError(f"pci_to_gpu: {key!r} is not a PCI bus id such as 0000:18:00") from None
        if bus in out:
            raise ValueError(f"pci_to_gpu lists the bus {bus} twice")
        out[bus] = check_int(f"pci_to_gpu[{key!r}]", gpu)
    return out


def _check_logs(rank_logs: dict[int, str]) -> dict[int, str]:
    if not isinstance(rank_logs, dict) or not rank_logs:
        raise ValueError(f"rank_logs must be a non-empty dict {{rank: log text}}, got {rank_logs!r}")
    for rank, text in rank_logs.items():
        check_int("rank_logs (a key)", rank)
        _check_text(f"rank_logs[{rank}]", text)
    return rank_logs


# ---------------------------------------------------------------------------------------------
# 1. Xid events in the kernel log
# ---------------------------------------------------------------------------------------------


def parse_xid(dmesg_text: str) -> list[dict]:
    """The Xid events of a kernel log, in order: ``{"pci", "xid", "pid", "name"}`` each.

    A line counts when it holds ``NVRM: Xid (PCI:<bus id>): <code>,``; any prefix (``[12345.678]``,
    ``[Tue Mar  5 10:21:33 2024]``, ``node kernel:``) is allowed. ``pci`` is normalized to
    ``0000:3a:00`` (lower case, no function); ``pid=1234`` gives an int, ``pid='<unknown>'`` or no
    pid gives None; ``name=python`` gives the name, ``name=<unknown>`` or none gives None. NVSwitch
    ``SXid`` lines, other NVRM lines (``GPU has fallen off the bus`` echoes) and lines cut short are
    skipped.

    Example: ``NVRM: Xid (PCI:0000:18:00): 31, pid=88001, name=python, Ch 00000008`` →
    ``{"pci": "0000:18:00", "xid": 31, "pid": 88001, "name": "python"}``; an Xid 74 NVLink line has
    no pid and no name.

    Errors: dmesg_text not a str → ValueError naming dmesg_text.
    """
    _check_text("dmesg_text", dmesg_text)
    # TODO: match each line against XID_LINE (a SXid line must not match: search for "NVRM: Xid");
    # read pid= and name= from the fields after the code, mapping '<unknown>' to None.
    raise NotImplementedError('TODO: match each line against XID_LINE (a SXid line must not match: search for "NVRM: Xid"); read pid= and name= from the fields after the code, mapping \'<unknown>\' to None.')


def triage_xid(dmesg_text: str, pci_to_gpu: dict[str, int]) -> dict[int, dict]:
    """Per GPU with at least one Xid: ``{"action": <most severe>, "xids": <sorted distinct codes>}``.

    The action of a code is ``XID_ACTIONS[code]`` (``"investigate"`` when unlisted); a GPU's action is
    the most severe of its codes in the order ``ACTIONS`` (app < monitor < investigate < reset_gpu <
    drain_node). ``pci_to_gpu`` maps bus ids to GPU indices, as ``nvidia-smi --query-gpu=index,pci.bus_id``
    prints them (``00000000:18:00.0``) or as the kernel does (``0000:18:00``), any case.

    Example: Xid 31 then 45 on GPU 0 → ``{0: {"action": "app", "xids": [31, 45]}}``; 48 and 95 on
    GPU 7 → drain_node.

    Errors: dmesg_text not a str → naming dmesg_text; pci_to_gpu not a dict of bus id → index ≥ 0,
    or an Xid on a bus it does not list → ValueError naming pci_to_gpu.
    """
    _check_text("dmesg_text", dmesg_text)
    buses = _check_pci_map(pci_to_gpu)
    # TODO: group the parsed events by GPU; keep the distinct codes; pick the most severe action.
    raise NotImplementedError('TODO: group the parsed events by GPU; keep the distinct codes; pick the most severe action.')


# ---------------------------------------------------------------------------------------------
# 2. Slow GPUs in DCGM telemetry
# ---------------------------------------------------------------------------------------------


def _dmon_header(line: str) -> list[str] | None:
    """Field names of a ``#Entity`` header line, else None."""
    tokens = line.lstrip("#").split()
    if line.lstrip().startswith("#") and tokens and tokens[0].lower() == "entity":
        return tokens[1:]
    return None


def parse_dcgm_dmon(text: str) -> dict[int, dict[str, list[float | None]]]:
    """``dcgmi dmon`` output → ``{gpu: {field: [one value per sample]}}``, ``N/A`` → None.

    The header ``#Entity  TMPTR  POWER  SMCLK ...`` names the fields (short names of DCGM fields 150,
    155, 100, 101, 203, 1002, ...); dcgmi repeats it every few rows, and a repeat must name the same
    fields. The units row (``ID  C  W  MHZ``), blank lines and other text are skipped; rows of other
    entities (``GPU-I 0``, ``Switch 1``) too. A ``GPU <i>`` row before any header, with a different
    number of values than the header, or with a value that is neither a number nor ``N/A``, is
    refused. GPUs and fields keep the order they appear in.

    Example: ``#Entity TMPTR SMCLK`` / ``GPU 0   45  1410`` / ``GPU 0  N/A  1410`` →
    ``{0: {"TMPTR": [45.0, None], "SMCLK": [1410.0, 1410.0]}}``.

    Errors: text not a str, or a refused row → ValueError naming text (and the line number).
    """
    _check_text("text", text)
    # TODO: track the current header; for each "GPU <i>" row, zip the values with the header's fields.
    raise NotImplementedError('TODO: track the current header; for each "GPU <i>" row, zip the values with the header\'s fields.')


def _dmon_value(token: str, number: int) -> float | None:
    if token == "N/A":
        return None
    try:
        value = float(token)
    except ValueError:
        raise ValueError(f"text line {number}: {token!r} is neither a number nor N/A") from None
    if not math.isfinite(value):
        raise ValueError(f"text line {number}: {token!r} is not finite")
    return value


def robust_z(values: Sequence[float]) -> list[float]:
    """Modified z-scores ``0.6745 · (x − median) / MAD``, ``MAD = median(|x − median|)``.

    Medians are the statistical median (even count: the mean of the two middle values). When MAD
    is 0 (more than half the values equal), a value at the median gets 0 and any other ±inf.

    Example: [80, 82, 79, 81, 130, 80, 83, 78] → median 80.5, MAD 1.5, the 130 scores 22.2585.

    Errors: values empty or not a sequence → ValueError naming values; a value not finite (or a
    bool) → naming values[i].
    """
    xs = _check_reals("values", values)
    # TODO: median, MAD, then the scaled deviations (mind MAD == 0).
    raise NotImplementedError('TODO: median, MAD, then the scaled deviations (mind MAD == 0).')


def slow_gpus(dmon: dict[int, dict[str, list[float | None]]], field: str = "SMCLK",
              threshold: float = 3.5) -> list[int]:
    """GPUs whose mean ``field`` (N/A samples left out) is a robust outlier on the slow side.

    For every field but ``TMPTR`` slow reads low: flagged when ``robust_z < −threshold``; for TMPTR a
    hot GPU is flagged when ``robust_z > threshold``. A GPU with no sample of the field is left out
    of the comparison. Returns sorted GPU indices.

    Example: 8 A100s at 1410 MHz save GPU 6 at 765 → MAD 0, z(6) = −inf → [6].

    Errors: dmon not a parse_dcgm_dmon dict → ValueError naming dmon; field absent from every GPU →
    naming field; threshold not a finite number > 0 → naming threshold.
    """
    threshold = _check_threshold(threshold)
    if not isinstance(dmon, dict) or not dmon or not all(isinstance(v, dict) for v in dmon.values()):
        raise ValueError(f"dmon must be the dict parse_dcgm_dmon returns, got {dmon!r}")
    if not any(field in fields for fields in dmon.values()):
        known = sorted({f for fields in dmon.values() for f in fields})
        raise ValueError(f"field {field!r} is in no GPU of dmon (its fields: {known})")
    # TODO: average each GPU's non-None samples, score the averages with robust_z, keep the slow side.
    raise NotImplementedError("TODO: average each GPU's non-None samples, score the averages with robust_z, keep the slow side.")


# ---------------------------------------------------------------------------------------------
# 3. The straggler inversion
# ---------------------------------------------------------------------------------------------


def find_straggler(compute_ms: Sequence[float], wait_ms: Sequence[float], threshold: float = 3.5) -> dict:
    """``{"culprit": rank, "z": its robust z of compute, "confirmed": bool}`` for one synchronous step.

    The culprit is the rank with the longest compute (lowest rank on ties); it is confirmed when its
    robust z-score over ``compute_ms`` exceeds ``threshold`` *and* its wait is the shortest of all
    (ties allowed): the slow rank arrives last at the collective and waits for no one.

    Example: compute [80, 82, 79, 81, 130, 80, 83, 78], wait [50, 48, 51, 49, 0.5, 50, 47, 52] →
    culprit 4, z 22.2585, confirmed; [80, 80, 80, 130] / [50, 50, 50, 0] → culprit 3, z inf.

    Errors: compute_ms empty or a value not finite ≥ 0 → ValueError naming compute_ms (or
    compute_ms[i]); wait_ms likewise or of another length → naming wait_ms; threshold → naming threshold.
    """
    compute = _check_reals("compute_ms", compute_ms, 0.0)
    wait = _check_reals("wait_ms", wait_ms, 0.0)
    if len(wait) != len(compute):
        raise ValueError(f"wait_ms has {len(wait)} ranks, compute_ms {len(compute)}: one value per rank each")
    threshold = _check_threshold(threshold)
    # TODO: argmax of compute (first on ties), its robust z, and the inversion check on wait.
    raise NotImplementedError('TODO: argmax of compute (first on ties), its robust z, and the inversion check on wait.')


# ---------------------------------------------------------------------------------------------
# 4. NCCL hang: who is behind
# ---------------------------------------------------------------------------------------------


def nccl_hang_report(rank_logs: dict[int, str]) -> dict[str, dict]:
    """Per communicator: ``{"last_op", "collective", "lagging", "mismatch"}`` from NCCL COLL logs.

    ``rank_logs`` maps each rank to its ``NCCL_DEBUG=INFO`` output. A collective line is
    ``<host>:<pid>:<tid> [<dev>] NCCL INFO <Coll>: opCount <hex> ... comm 0x<addr> [nranks=N] ...``
    (``[<dev>]`` is the local CUDA device, not the rank); other lines are skipped. A communicator is
    keyed by its ``comm`` address as printed. Per communicator: ``last_op`` is the highest opCount
    any rank reached (the count is hexadecimal); ``lagging`` the sorted ranks of ``rank_logs`` whose
    highest opCount is lower, or that never logged it; ``collective`` the name most ranks called at
    ``last_op`` (a tie goes to the lowest such rank's name); ``mismatch`` the sorted ranks that called
    another collective at ``last_op``.

    Example: ranks 0–7 on comm 0x55d1c8a0, rank 7 stuck at opCount 1f3, rank 5 calling AllGather
    at 1f4 where the others call AllReduce → ``{"last_op": 500, "collective": "AllReduce",
    "lagging": [7], "mismatch": [5]}``.

    Errors: rank_logs not a non-empty dict, or a key not an int ≥ 0 → ValueError naming rank_logs;
    a log not a str → naming rank_logs[rank].
    """
    _check_logs(rank_logs)
    # TODO: for each rank and comm keep the highest opCount and the collective at it; then compare ranks.
    raise NotImplementedError('TODO: for each rank and comm keep the highest opCount and the collective at it; then compare ranks.')
