"""L40 · Checkpointing: what a save costs, how often to save, what a failure costs, and saving safely.

A training job pays for checkpoints twice. Every save blocks the step loop for ``save_s`` seconds,
and every failure throws away the work done since the last save that finished. Saving often makes
the first cost large, saving rarely makes the second large; in between sits an optimum:

* efficiency of a blocking save every N steps: N·T_step / (N·T_step + T_save);
* async staging: the loop only waits for the device-to-host copy of its own shard,
  (state_bytes / n_ranks) / d2h_bandwidth; the write to storage runs in the background;
* Young (1974): τ = √(2·C·M) for checkpoint cost C and mean time between failures M; Daly (2006)
  adds the higher-order terms: τ = √(2CM)·[1 + ⅓·√(C/2M) + ⅑·(C/2M)] − C for C < 2M, else τ = M;
* a deterministic simulator of the run that checks those formulas against the wall time they claim
  to minimise;
* ``atomic_save``: a checkpoint that a crash can tear is worse than none, so write a temporary file
  in the same directory, flush and fsync it, then rename it over the old one (rename is atomic).

Conventions: times in seconds, bandwidths in B/s, bytes as exact ints. Invalid arguments raise
ValueError naming the argument.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import torch

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

METHODS = ("young", "daly")


def _check_real(name: str, value: object, *, positive: bool = False) -> float:
    """``value`` as a finite real >= 0 (> 0 when ``positive``), or ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a real number of seconds or B/s, got {value!r} ({type(value).__name__})")
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"{name} must be finite and {bound}, got {value!r}")
    return float(value)


# ---------------------------------------------------------------------------------------------
# 1. The ledger: a blocking save, and async staging
# ---------------------------------------------------------------------------------------------


def checkpoint_efficiency(steps_between: int, step_s: float, save_s: float) -> float:
    """Fraction of wall time spent training when every ``steps_between`` steps block for ``save_s``.

    efficiency = N·T_step / (N·T_step + T_save), a number in (0, 1]; multiply the raw MFU by it to get
    the MFU the cluster delivers. Worked example (the lecture's): N = 500 steps of 1.5 s between saves
    and a 900 s synchronous save → 750 / 1650 = 0.454545; with a 2.5 s async stall → 750 / 752.5 =
    0.996678.

    Errors: ``steps_between`` not an int >= 1, ``step_s`` not finite > 0, ``save_s`` not finite >= 0.
    """
    check_int("steps_between", steps_between, 1)
    step_s = _check_real("step_s", step_s, positive=True)
    save_s = _check_real("save_s", save_s)
    # TODO: compute time between two saves, over that time plus the save.
    ### BEGIN SOLUTION
    compute = steps_between * step_s
    return compute / (compute + save_s)
    ### END SOLUTION


def async_stage_seconds(state_bytes: int, n_ranks: int, d2h_bytes_per_s: float) -> float:
    """Seconds the training loop stalls to stage its shard of the state into pinned host memory.

    Each of ``n_ranks`` GPUs copies only its shard, state_bytes / n_ranks, over its own PCIe link at
    ``d2h_bytes_per_s``; the copies run in parallel, so the stall is one shard's copy. Writing the
    staged bytes to storage happens later in a background thread and is not counted. Worked example:
    a 70B model's 1.1 TB of training state over 64 GPUs at 50 GB/s → 17.1875 GB each → 0.34375 s.

    Errors: ``state_bytes`` not an int >= 0, ``n_ranks`` not an int >= 1, ``d2h_bytes_per_s`` not
    finite > 0.
    """
    check_int("state_bytes", state_bytes)
    check_int("n_ranks", n_ranks, 1)
    bandwidth = _check_real("d2h_bytes_per_s", d2h_bytes_per_s, positive=True)
    # TODO: the bytes of one rank's shard, over one link's bandwidth.
    ### BEGIN SOLUTION
    return state_bytes / n_ranks / bandwidth
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 2. The optimal interval: Young and Daly
# ---------------------------------------------------------------------------------------------


def optimal_interval(ckpt_s: float, mtbf_s: float, method: str = "young") -> float:
    """Compute time between checkpoints that minimises the expected wall time, in seconds.

    ``method="young"``: τ = √(2·C·M) (Young 1974, first order in C/M).
    ``method="daly"``: τ = √(2CM)·[1 + ⅓·√(C/2M) + ⅑·(C/2M)] − C when C < 2M, else τ = M (Daly 2006).
    Worked example: C = 600 s, M = 12 h = 43 200 s → Young 7200.0 s (2 h), Daly 6805.56 s.

    Errors: ``ckpt_s`` or ``mtbf_s`` not finite > 0; ``method`` not one of ``METHODS``.
    """
    c = _check_real("ckpt_s", ckpt_s, positive=True)
    m = _check_real("mtbf_s", mtbf_s, positive=True)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    # TODO: Young's square root; Daly's correction of it (and its C >= 2M case).
    ### BEGIN SOLUTION
    young = math.sqrt(2 * c * m)
    if method == "young":
        return young
    if c >= 2 * m:
        return m
    r = c / (2 * m)
    return young * (1 + math.sqrt(r) / 3 + r / 9) - c
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 3. Simulating a run with failures
# ---------------------------------------------------------------------------------------------


def _check_failures(failure_times: Sequence[float]) -> list[float]:
    if isinstance(failure_times, str | bytes) or not isinstance(failure_times, Sequence):
        raise ValueError(f"failure_times must be a sequence of wall-clock seconds, got {failure_times!r}")
    return sorted(_check_real(f"failure_times[{i}]", t) for i, t in enumerate(failure_times))


def simulate_run(
    work_s: float, interval_s: float, ckpt_s: float, restart_s: float, failure_times: Sequence[float]
) -> dict[str, float]:
    """Wall time of a job of ``work_s`` seconds of compute that saves every ``interval_s`` of compute.

    The work is cut into ⌈work_s / interval_s⌉ segments of ``interval_s`` (the last one shorter if it
    does not divide). After every segment but the last the job blocks ``ckpt_s`` writing a
    checkpoint. ``failure_times`` are wall-clock instants (any order). A failure:

    * during a segment loses the compute done in it since the segment began;
    * during a write loses that write and the whole segment before it (the checkpoint never landed);
    * is followed by ``restart_s`` of restart, after which the segment is redone from its start;
    * that falls inside a restart is deferred to the restart's end (and then costs another restart).

    Intervals are half-open: a failure at the instant a segment's write completes hits the next
    segment at offset 0 (nothing lost but a restart); failures at or after the job's end never happen.

    Returns ``{"wall_s", "failures", "lost_s", "ckpts"}``: total wall time, failures that struck,
    compute seconds thrown away (not counting torn writes or restarts), checkpoints completed.
    Worked example: work 36 000, τ 7200, C 600, R 300: no failure → wall 38 400, 4 ckpts; a failure
    at 18 000 → wall 41 100, lost 2400; a failure at 7300 (inside the first write) → wall 46 000,
    lost 7200.

    Errors: ``work_s`` or ``interval_s`` not finite > 0, ``ckpt_s``/``restart_s`` not finite >= 0,
    ``failure_times[i]`` not finite >= 0.
    """
    work = _check_real("work_s", work_s, positive=True)
    interval = _check_real("interval_s", interval_s, positive=True)
    ckpt = _check_real("ckpt_s", ckpt_s)
    restart = _check_real("restart_s", restart_s)
    pending = _check_failures(failure_times)
    # TODO: walk segment by segment; before finishing one, see whether the next failure strikes first.
    ### BEGIN SOLUTION
    n_segments = math.ceil(work / interval)
    now = lost = 0.0
    failures = ckpts = 0
    k = 0  # the segment being worked on (segments before k are safely checkpointed)
    while k < n_segments:
        segment = min(interval, work - k * interval)
        compute_end = now + segment
        end = compute_end + (ckpt if k < n_segments - 1 else 0.0)
        if pending and max(pending[0], now) < end:
            hit = max(pending.pop(0), now)  # a failure during a restart strikes when it ends
            lost += min(hit, compute_end) - now
            failures += 1
            now = hit + restart
            continue
        now = end
        ckpts += k < n_segments - 1
        k += 1
    return {"wall_s": now, "failures": failures, "lost_s": lost, "ckpts": ckpts}
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 4. A crash-safe save
# ---------------------------------------------------------------------------------------------


def atomic_save(state: dict, path: str) -> None:
    """``torch.save(state, path)`` such that a crash at any instant leaves ``path`` whole.

    Either ``path`` keeps its previous content (the old checkpoint) or it holds all of ``state``:
    write the state to a temporary file next to ``path`` (same directory, so the rename stays on one
    filesystem), flush and ``os.fsync`` it, ``os.replace`` it onto ``path`` (POSIX rename is atomic),
    then fsync the directory so the rename itself is durable. ``path`` is never opened for writing.
    If anything fails (``torch.save`` raising halfway, the rename refused), remove the temporary file
    and re-raise: no ``.tmp`` litter is left behind.

    Errors: ``state`` not a dict, ``path`` not a non-empty str → ValueError naming it.
    """
    if not isinstance(state, dict):
        raise ValueError(f"state must be a dict (a state_dict), got {type(state).__name__}")
    if not isinstance(path, str) or not path:
        raise ValueError(f"path must be a non-empty str, got {path!r}")
    # TODO: temporary file in the same directory → save, flush, fsync → replace → fsync the directory;
    # on any failure remove the temporary file and re-raise.
    ### BEGIN SOLUTION
    tmp = path + ".tmp"
    try:
        with open(tmp, "wb") as f:
            torch.save(state, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    directory = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    ### END SOLUTION
