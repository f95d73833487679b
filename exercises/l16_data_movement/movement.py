"""L16 · moving data inside one machine: the mbarrier's phases, overlap's k factor, offload vs recompute.

Lecture 16 (02_GPU硬件与集群互联/16_机内数据搬运_LSU_TMA_CopyEngine_mbarrier_IPC.md) ranks the engines
that move bytes by how much SM time they cost: the SM's own load/store units (every byte passes
through registers), TMA (one instruction per tile, the hardware writes shared memory), the Copy
Engine (a DMA engine outside the SMs, driven from a stream) and the host-staged copy.

Moving data without the SM is only half of it: the *completion* must be SM-free too. An mbarrier
(PTX ISA, "mbarrier") keeps, for its current phase, a pending arrival count and a transaction
count (tx-count, in bytes). A phase completes when BOTH reach zero; the barrier then starts the
next phase (pending = the count it was initialised with, tx = 0). Waiters never read counters:
they test the parity of a phase (``mbarrier.try_wait.parity``), true once the phase with that
parity has completed.

Overlap is not free either: communication run beside compute slows down by a factor k (the
lecture: k ≈ 1.1-1.4, from L2, HBM controller and scheduler contention), so
    T = max(k_comp·T_comp, k_comm·T_comm).

Activation offloading moves each saved activation over PCIe twice (device → host after its
forward, host → device before its backward); each transfer is free only while it hides under the
compute window beside it. Recomputation always costs its FLOPs at the achieved throughput.

Units: bytes and FLOPs are exact ints, times seconds (float), rates per second. Invalid arguments
raise ValueError naming the argument.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

# Lecture 16 §4.4: PCIe 5.0 x16 gives about 64 GB/s per direction (decimal GB).
PCIE5_X16_BYTES_PER_S = 64e9

# The event kinds of mbarrier_run and the number of arguments each takes.
EVENT_ARITY = {"arrive": 0, "arrive_expect_tx": 1, "expect_tx": 1, "complete_tx": 1, "try_wait": 1}


def _check_real(name: str, value: object, *, minimum: float = 0.0, above: bool = False) -> float:
    """A finite real number >= minimum (> minimum with ``above``), or ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < minimum or (above and value == minimum):
        raise ValueError(f"{name} must be {'>' if above else '>='} {minimum}, got {value}")
    return float(value)


def _check_event(i: int, event: object) -> tuple[str, int | None]:
    """The event ``events[i]`` as (kind, argument): bytes an exact int >= 0, parity 0 or 1."""
    where = f"events[{i}]"
    if not isinstance(event, tuple | list) or not event or not isinstance(event[0], str):
        raise ValueError(f"{where} must be a tuple such as ('arrive',) or ('complete_tx', 4096), got {event!r}")
    kind = event[0]
    if kind not in EVENT_ARITY:
        raise ValueError(f"{where} has unknown kind {kind!r}; expected one of {sorted(EVENT_ARITY)}")
    if len(event) != 1 + EVENT_ARITY[kind]:
        raise ValueError(f"{where} = {event!r}: {kind!r} takes {EVENT_ARITY[kind]} argument(s)")
    if kind == "arrive":
        return kind, None
    arg = event[1]
    if isinstance(arg, bool) or not isinstance(arg, int):
        raise ValueError(f"{where} = {event!r}: the argument must be an exact int")
    if kind == "try_wait" and arg not in (0, 1):
        raise ValueError(f"{where} = {event!r}: a parity is 0 or 1")
    if arg < 0:
        raise ValueError(f"{where} = {event!r}: a byte count is >= 0")
    return kind, arg


def mbarrier_run(count: int, events: Sequence[tuple]) -> list:
    """Play ``events`` on one mbarrier initialised with arrival count ``count``; one output per event.

    State: phase = 0 (phases completed so far), pending = count, tx = 0. Events:

        ("arrive",)                 pending -= 1
        ("arrive_expect_tx", b)     tx += b, then pending -= 1 (the producer's usual call)
        ("expect_tx", b)            tx += b
        ("complete_tx", b)          tx -= b (bytes landed; tx may go negative when the bytes beat
                                    the expectation)
        ("try_wait", parity)        -> (phase & 1) != parity: True once the phase of that parity has
                                    completed (phase 0 has parity 0, the next one parity 1, ...)

    After every event but try_wait: if pending == 0 and tx == 0, the phase completes: phase += 1,
    pending = count, tx = 0. A non-wait event outputs the state ``(phase, pending, tx)``.

    Worked example (a TMA load of 64 KiB, count 1):
        [("arrive_expect_tx", 65536), ("try_wait", 0), ("complete_tx", 32768),
         ("complete_tx", 32768), ("try_wait", 0), ("try_wait", 1)]
        -> [(0, 0, 65536), False, (0, 0, 32768), (1, 1, 0), True, False]

    Raises ValueError naming ``count`` (not an exact int >= 1), ``events`` (not a list or tuple) or
    ``events[i]`` (malformed, bytes not an exact int >= 0, parity not 0/1, an arrive when no
    arrival is pending).
    """
    check_int("count", count, 1)
    if not isinstance(events, list | tuple):
        raise ValueError(f"events must be a list of event tuples, got {type(events).__name__}")
    # TODO: play the events on (phase, pending, tx); complete a phase when both counts reach 0.
    raise NotImplementedError('TODO: play the events on (phase, pending, tx); complete a phase when both counts reach 0.')


def overlap_time(t_comp: float, t_comm: float, k_comp: float = 1.0, k_comm: float = 1.0) -> float:
    """Time of compute and communication overlapped on one GPU: max(k_comp·t_comp, k_comm·t_comm).

    Each k >= 1 is the slowdown of that side while the other runs beside it (lecture 16 §4.1:
    k ≈ 1.1-1.4). Any time unit, returned in the same unit.
    Example: overlap_time(45, 35, 1.3) = 58.5 (serial 80; ideal overlap 45).

    Raises ValueError naming ``t_comp`` / ``t_comm`` (not finite or < 0) or ``k_comp`` / ``k_comm``
    (not finite or < 1).
    """
    # TODO: validate, then take the slower of the two inflated sides.
    raise NotImplementedError('TODO: validate, then take the slower of the two inflated sides.')


def offload_or_recompute(
    act_bytes: int,
    pcie_bytes_per_s: float,
    recompute_flops: int,
    peak_flops: float,
    mfu: float,
    window_s: float,
) -> dict[str, object]:
    """Offload a layer's activations over PCIe, or recompute them in the backward?

        offload_s         = act_bytes / pcie_bytes_per_s            (one direction)
        exposed_offload_s = 2 · max(0, offload_s − window_s)        (D2H after the forward and H2D
                                                                      before the backward, each hidden
                                                                      under a compute window of window_s)
        recompute_s       = recompute_flops / (peak_flops · mfu)    (always on the critical path)
        choice            = "offload" if exposed_offload_s <= recompute_s else "recompute"

    Example: 4 GiB (4,294,967,296 B) at 50 GB/s with a 0.2 s window: offload 0.0859 s, fully hidden;
    recomputing 2e13 FLOPs at 50 % of 989 TFLOP/s costs 0.0404 s -> "offload". At 12 GB/s (pageable
    or cross-NUMA memory) offload 0.358 s, exposed 0.316 s -> "recompute".

    Returns {"offload_s", "exposed_offload_s", "recompute_s", "choice"}.
    Raises ValueError naming ``act_bytes`` / ``recompute_flops`` (not exact ints >= 0),
    ``pcie_bytes_per_s`` / ``peak_flops`` (not finite or <= 0), ``mfu`` (not in (0, 1]) or
    ``window_s`` (not finite or < 0).
    """
    # TODO: validate, then compare the exposed transfer time with the recompute time.
    raise NotImplementedError('TODO: validate, then compare the exposed transfer time with the recompute time.')
