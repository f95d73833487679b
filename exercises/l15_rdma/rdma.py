"""L15 · RDMA and GPUDirect RDMA: memory-bus bytes per path, the verbs rules, GDR readiness.

Lecture 15 (02_GPU硬件与集群互联_M1/15_RDMA与GPUDirect_RDMA_QP_WQE_CQ_MR_ZeroCopy.md).

Memory bus. Sending P bytes of a GPU tensor to another node costs host memory bandwidth that
depends on the path. Over TCP the tensor is copied to a user buffer (a D2H DMA: PCIe P, DRAM
write P), copied by the CPU into kernel socket buffers (``send()``: DRAM read P + write P, CPU copy
P) and read by the NIC's DMA (PCIe P, DRAM read P): 4P of DRAM traffic, 2P over PCIe, P copied by
the CPU, 2 copies landing in host memory. Host-staged RDMA drops the CPU copy (D2H into a pinned
MR, then the NIC reads it): 2P / 2P / 0 / 1. GPUDirect RDMA lets the NIC read GPU memory
peer-to-peer: 0 / P / 0 / 0. At 50 GB/s on the wire, TCP moves 200 GB/s through DRAM.

Verbs. One reliable connection (RC) between sides "A" and "B". A two-sided SEND (and a WRITE with
immediate) consumes the oldest RECV the peer posted (the receive queue is FIFO); with none posted
the responder answers RNR (receiver not ready). A one-sided WRITE needs the peer's rkey and must stay
inside that memory region; it completes at the initiator only: the target's CPU sees nothing.
Queue pairs go RESET → INIT → RTR (ready to receive) → RTS (ready to send).

GDR readiness. GPUDirect RDMA fails silently: without the ``nvidia_peermem`` kernel module NCCL
logs ``GPU Direct RDMA Disabled`` and stages through host memory, and the job only gets slower.
``gdr_readiness`` reads the three captures an operator checks: ``lsmod``, ``ibv_devinfo`` and an
``NCCL_DEBUG=INFO`` log.

Units: bytes (int). Invalid arguments raise ValueError naming the argument.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

PATHS = ("tcp", "rdma_host", "gdr")
SIDES = ("A", "B")
PEER = {"A": "B", "B": "A"}
QP_STATES = ("RESET", "INIT", "RTR", "RTS")
# ibv_modify_qp(3) / IBTA QP state table, for the four states modelled here: any state may go back
# to RESET; RESET → INIT; INIT → INIT | RTR; RTR → RTS; RTS → RTS.
QP_TRANSITIONS = {
    "RESET": ("RESET", "INIT"),
    "INIT": ("RESET", "INIT", "RTR"),
    "RTR": ("RESET", "RTS"),
    "RTS": ("RESET", "RTS"),
}
# arity of each verbs op: (name, side, ...) and the kind of each further field
OP_FIELDS = {
    "reg_mr": ("rkey", "int"),  # ("reg_mr", side, rkey, size)
    "post_recv": ("int",),  # ("post_recv", side, length)
    "send": ("int",),  # ("send", side, n)
    "write": ("rkey", "int", "int"),  # ("write", side, rkey, offset, n)
    "write_imm": ("rkey", "int", "int"),  # ("write_imm", side, rkey, offset, n)
    "modify_qp": ("state",),  # ("modify_qp", side, state)
}
PEERMEM_MODULES = ("nvidia_peermem", "nv_peer_mem")  # NVIDIA driver ≥ 470; MLNX_OFED's older module
LSMOD_HEADER = re.compile(r"^Module\s+Size\s+Used by$")
LSMOD_ROW = re.compile(r"^(\S+)\s+(\d+)\s+(-?\d+)(?:\s+\S.*)?$")
PORT_STATE_LINE = re.compile(r"^\s*state:")
PORT_ACTIVE = re.compile(r"^\s*state:\s*PORT_ACTIVE\s*\(4\)")
PORT_STATE_VALUE = re.compile(r"^\s*state:\s*PORT_[A-Z_]+\s*\(\d+\)\s*$")
NO_DEVICES = ("No IB devices found", "Failed to get IB devices list")
NCCL_GDR_DISABLED = re.compile(r"gpu\s*direct\s*rdma\s*(is\s*)?disabled", re.IGNORECASE)


# ---------------------------------------------------------------------------------------------
# Argument checks (given)
# ---------------------------------------------------------------------------------------------


def _check_path(path: str) -> str:
    if not isinstance(path, str) or path not in PATHS:
        raise ValueError(f"path must be one of {PATHS}, got {path!r}")
    return path


def _check_text(name: str, text: str) -> str:
    if not isinstance(text, str):
        raise ValueError(f"{name} must be a str (the tool's output), got {type(text).__name__}")
    return text


def _check_ops(ops: Sequence[tuple]) -> list[tuple]:
    """Each op as a tuple with a known name, a side "A"/"B", exact ints ≥ 0; else ValueError naming ops[i]."""
    if isinstance(ops, (str, bytes, dict)) or not isinstance(ops, Sequence):
        raise ValueError(f"ops must be a sequence of op tuples, got {ops!r}")
    out, registered = [], set()
    for i, op in enumerate(ops):
        where = f"ops[{i}]"
        if not isinstance(op, (tuple, list)) or not op or not isinstance(op[0], str) or op[0] not in OP_FIELDS:
            raise ValueError(f"{where}: expected a tuple starting with one of {tuple(OP_FIELDS)}, got {op!r}")
        fields = OP_FIELDS[op[0]]
        if len(op) != 2 + len(fields):
            raise ValueError(f"{where}: {op[0]} takes {1 + len(fields)} fields after its name, got {op!r}")
        if op[1] not in SIDES:
            raise ValueError(f"{where}: the side must be 'A' or 'B', got {op[1]!r}")
        for kind, value in zip(fields, op[2:], strict=True):
            if kind == "int":
                check_int(where, value)
            elif kind == "rkey" and (isinstance(value, bool) or not isinstance(value, (str, int))):
                raise ValueError(f"{where}: an rkey is a str or an int, got {value!r}")
            elif kind == "state" and value not in QP_STATES:
                raise ValueError(f"{where}: the QP state must be one of {QP_STATES}, got {value!r}")
        if op[0] == "reg_mr":
            if (op[1], op[2]) in registered:
                raise ValueError(f"{where}: side {op[1]} already registered a region with rkey {op[2]!r}")
            registered.add((op[1], op[2]))
        out.append(tuple(op))
    return out


# ---------------------------------------------------------------------------------------------
# 1. Memory-bus bytes per path
# ---------------------------------------------------------------------------------------------


def memory_bus_bytes(payload_bytes: int, path: str) -> dict[str, int]:
    """Host DRAM, PCIe and CPU-copy bytes to send ``payload_bytes`` of GPU memory over ``path``.

    Keys (exact ints): ``host_dram_bytes`` (reads + writes of host memory), ``pcie_bytes`` (bytes
    crossing the sender's PCIe between GPU, host and NIC), ``cpu_copy_bytes`` (bytes a CPU memcpy
    moves), ``host_copies`` (copies that land in host memory).

        "tcp"        D2H to a user buffer + send() memcpy into sk_buffs + NIC DMA read   4P / 2P / P / 2
        "rdma_host"  D2H into a pinned MR + NIC DMA read                                  2P / 2P / 0 / 1
        "gdr"        the NIC reads GPU memory peer-to-peer                                 0 / P / 0 / 0

    Example: ``memory_bus_bytes(10**9, "tcp")`` = ``{"host_dram_bytes": 4_000_000_000,
    "pcie_bytes": 2_000_000_000, "cpu_copy_bytes": 1_000_000_000, "host_copies": 2}``: at 50 GB/s
    on the wire, 200 GB/s of DRAM traffic.

    Errors: payload_bytes not an exact int ≥ 0 → ValueError naming payload_bytes; path not one of
    ``PATHS`` → ValueError naming path.
    """
    p = check_int("payload_bytes", payload_bytes)
    _check_path(path)
    # TODO: count each step of the path: a DMA crosses PCIe once and touches DRAM once, a memcpy reads and writes DRAM.
    raise NotImplementedError('TODO: count each step of the path: a DMA crosses PCIe once and touches DRAM once, a memcpy reads and writes DRAM.')


# ---------------------------------------------------------------------------------------------
# 2. The verbs rules on one RC connection
# ---------------------------------------------------------------------------------------------


def simulate_verbs(ops: Sequence[tuple]) -> list[dict]:
    """Play verbs on one RC connection between sides "A" and "B"; one result per op, in order.

    Each result is ``{"op": <op name>, "status": <str>, "cqe": <sides that get a completion>}``;
    ``cqe`` lists sides in the order A, B. Both queue pairs start connected (RTS), no memory region
    is registered, no RECV is posted.

    Ops (``side`` is "A" or "B"; sizes, offsets and lengths are exact ints ≥ 0; an rkey is a str or int):
      ("reg_mr", side, rkey, size)     side registers a region of size bytes under rkey: SUCCESS, []
      ("post_recv", side, length)      a RECV of length bytes at the back of side's receive queue
      ("send", side, n)                a SEND of n bytes to the peer
      ("write", side, rkey, offset, n) a one-sided RDMA WRITE into the peer's region rkey
      ("write_imm", side, rkey, offset, n)  a WRITE with immediate (consumes a peer RECV)
      ("modify_qp", side, state)       moves side's QP to RESET, INIT, RTR or RTS

    Rules, in the order they are checked:
    - modify_qp: allowed RESET → INIT, INIT → INIT | RTR, RTR → RTS, RTS → RTS, any → RESET:
      SUCCESS, []; another move is refused: INVALID_STATE, [] (the state is unchanged). Going to
      RESET empties that side's receive queue.
    - post_recv: side's QP must be INIT, RTR or RTS (else INVALID_STATE, [], nothing queued): SUCCESS, [].
    - send / write / write_imm: side's QP must be RTS (else INVALID_STATE, []); the peer's QP must be
      RTR or RTS to take packets (else RETRY_EXC_ERR, [side]: the requester's retries run out).
    - write / write_imm: an rkey the peer did not register, or offset + n > its size →
      REM_ACCESS_ERR, [side].
    - send / write_imm: no RECV in the peer's queue → RNR, [] (nothing consumed). Otherwise the
      oldest RECV is consumed; a SEND longer than it → LOC_LEN_ERR, both sides (write_imm carries
      no payload into the RECV, so any length fits).
    - Success: SEND and WRITE_IMM complete on both sides; WRITE on the initiator only (the target's
      CPU sees nothing).
    An error completion leaves the QP as it was (real RC QPs move to the error state; see README).

    Example: ``[("reg_mr", "B", "kv", 4096), ("write", "A", "kv", 0, 4096), ("send", "A", 64)]`` →
    ``[{"op": "reg_mr", "status": "SUCCESS", "cqe": []}, {"op": "write", "status": "SUCCESS",
    "cqe": ["A"]}, {"op": "send", "status": "RNR", "cqe": []}]``.

    Errors: ops not a sequence → ValueError naming ops; a malformed op (unknown name, wrong arity,
    bad side, a float or negative size, an unknown QP state, an rkey registered twice on one side)
    → ValueError naming ``ops[i]``.
    """
    ops = _check_ops(ops)
    # TODO: keep each side's QP state, memory regions {rkey: size} and FIFO receive queue; apply the rules in order.
    raise NotImplementedError("TODO: keep each side's QP state, memory regions {rkey: size} and FIFO receive queue; apply the rules in order.")


# ---------------------------------------------------------------------------------------------
# 3. Is GPUDirect RDMA really on?
# ---------------------------------------------------------------------------------------------


def gdr_readiness(lsmod: str, ibv_devinfo: str, nccl_log: str) -> dict[str, object]:
    """``{"ready": bool, "reasons": [...]}`` from the output of lsmod, ibv_devinfo and an NCCL INFO log.

    Checks, in this order; each failing one appends its reason:
    - ``"peermem_not_loaded"``: no lsmod row whose first column (the module name) is
      ``nvidia_peermem`` or ``nv_peer_mem``. lsmod prints module names with underscores (modprobe
      accepts ``nvidia-peermem``); the "Used by" column lists other modules and is not a row.
    - ``"no_active_port"``: no ibv_devinfo line matching ``^\\s*state:\\s*PORT_ACTIVE\\s*\\(4\\)``
      (any HCA, any port; ``phys_state: LINK_UP (5)`` is the physical link, not the port state).
    - ``"nccl_gdr_disabled"``: a log line matching ``gpu\\s*direct\\s*rdma\\s*(is\\s*)?disabled``,
      case-insensitive (NCCL prints ``NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)``).
    ``ready`` is True when no reason was found.

    Captures are refused (ValueError naming the argument) when they are not the tool's output:
    - lsmod: its first non-blank line must be the header ``Module  Size  Used by``, and every other
      non-blank line a row ``name size use_count [holders]`` (size and use count integers);
    - ibv_devinfo: it must hold an ``hca_id:`` line, or say ``No IB devices found`` / ``Failed to get
      IB devices list`` (then no port is active); a ``state:`` line must read ``PORT_<NAME> (<n>)``;
    - nccl_log: it must hold at least one ``NCCL INFO`` line (else NCCL_DEBUG=INFO was not set and
      the log proves nothing). Other lines (Python, torch, NCCL WARN) are skipped.
    Lines may carry leading and trailing whitespace.

    Example: a node after a kernel upgrade (no ``nvidia_peermem`` row, every port active, NCCL
    logging ``GPU Direct RDMA Disabled``) → ``{"ready": False, "reasons": ["peermem_not_loaded",
    "nccl_gdr_disabled"]}``.

    Errors: an argument that is not a str, or not a capture of its tool (above) → ValueError naming it.
    """
    _check_text("lsmod", lsmod)
    _check_text("ibv_devinfo", ibv_devinfo)
    _check_text("nccl_log", nccl_log)
    # TODO: parse lsmod's rows (header first, module name in column 1), find an active port line,
    # look for the NCCL 'GPU Direct RDMA ... disabled' line; refuse captures that are not the tool's output.
    raise NotImplementedError("TODO: parse lsmod's rows (header first, module name in column 1), find an active port line, look for the NCCL 'GPU Direct RDMA ... disabled' line; refuse captures that are not the tool's output.")
