"""L04 · Linux baselines: the load average, /proc/stat deltas, ps states (USE triage), folded stacks.

Lecture 04 (01_性能工程与系统前置/04_Linux系统基线与性能分析核心工具箱.md): "load 128 on 128 cores" does not
mean the CPUs are busy. The kernel's load average is an exponentially decaying average, sampled every
5 seconds, of the tasks that are runnable (R) *or* in uninterruptible sleep (D). A node whose training
processes are stuck writing a checkpoint to a dead NFS mount shows a load above its core count while its
CPUs idle. Telling the two apart takes three readings: /proc/stat deltas (where did the jiffies go),
``ps`` states (R or D, and what the D tasks wait on) and, to find the hot code, a flame graph, which is
nothing more than folded stack counts.

Conventions: pure functions; counts are exact ints (``check_int``), reals finite; percentages are of
the jiffies of the interval (0..100). Invalid arguments raise ValueError naming the argument.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

TICK_S = 5  # LOAD_FREQ: the kernel samples the active count every 5 s
FSHIFT = 11  # include/linux/sched/loadavg.h: bits of fixed-point precision
FIXED_1 = 1 << FSHIFT  # 1.0 as fixed point (2048)
EXP_1, EXP_5, EXP_15 = 1884, 2014, 2037  # FIXED_1 · e^(−5 s / window) for windows of 1, 5 and 15 min

# /proc/stat cpu line columns, in order (proc(5)); guest and guest_nice are already counted in
# user and nice, so a total over all ten would count guest time twice.
STAT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice")
TIME_FIELDS = STAT_FIELDS[:8]
PS_STATES = frozenset("DIRSTtWXZKP")  # first letter of ps(1)'s STAT / S column
_LOAD_NUMBER = re.compile(r"^[0-9]+(\.[0-9]+)?$")
_COUNT = re.compile(r"^[0-9]+$")


# ---------------------------------------------------------------------------------------------
# Given: argument checks
# ---------------------------------------------------------------------------------------------


def _check_counts(name: str, counts: object) -> list[int]:
    """A sequence of exact ints >= 0 (one active-task count per 5-s tick), or ValueError naming ``name``."""
    if isinstance(counts, str | bytes) or not isinstance(counts, Sequence):
        raise ValueError(f"{name} must be a sequence of task counts (ints), got {counts!r}")
    for i, n in enumerate(counts):
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"{name}[{i}] must be an int >= 0 (a count of R + D tasks), got {n!r}")
    return list(counts)


def _check_text(name: str, text: object) -> str:
    """A str (the text of a file or of a command's output), or ValueError naming ``name``."""
    if not isinstance(text, str):
        raise ValueError(f"{name} must be the text of the file or command output (str), got {type(text).__name__}")
    return text


def _check_lines(name: str, lines: object) -> Iterable[str]:
    """An iterable of str lines (not one str), or ValueError naming ``name``."""
    if isinstance(lines, str | bytes):
        raise ValueError(f"{name} must be an iterable of lines, not one string: pass text.splitlines()")
    if not isinstance(lines, Iterable):
        raise ValueError(f"{name} must be an iterable of lines (str), got {lines!r}")
    return lines


# ---------------------------------------------------------------------------------------------
# 1. The load average: the float model and the kernel's fixed point
# ---------------------------------------------------------------------------------------------


def loadavg_ema(active_counts: Sequence[int], window_s: int = 60, start: float = 0.0) -> float:
    """The load average after the ticks ``active_counts`` (R + D tasks seen at each 5-s tick), in real numbers.

    Each tick decays the old value by d = e^(−5/window_s) and mixes in the new count:
    L ← L·d + n·(1 − d), starting from ``start``. From 0 with a constant n for k ticks this is the
    closed form n·(1 − e^(−5k/window_s)): 128 tasks for one minute (12 ticks) give
    ``loadavg_ema([128] * 12)`` = 128·(1 − e⁻¹) = 80.9114, not 128. After 120 ticks at 128 and 12
    idle ticks the 1-minute load is still 47.0864.

    Errors: a count that is not an int >= 0 → ValueError naming ``active_counts``; ``window_s`` not an
    int >= 1 → ``window_s``; ``start`` not a finite real >= 0 → ``start``.
    """
    counts = _check_counts("active_counts", active_counts)
    window = check_int("window_s", window_s, 1)
    if isinstance(start, bool) or not isinstance(start, int | float) or not math.isfinite(start) or start < 0:
        raise ValueError(f"start must be a finite load >= 0, got {start!r}")
    # TODO: decay the running value once per tick by e^(-TICK_S / window) and mix in each count.
    raise NotImplementedError('TODO: decay the running value once per tick by e^(-TICK_S / window) and mix in each count.')


def kernel_loadavg(active_counts: Sequence[int], exp: int = EXP_1, start_raw: int = 0) -> str:
    """The load average as /proc/loadavg prints it, computed with the kernel's integer arithmetic.

    The kernel keeps the load as a fixed-point integer with 11 fraction bits (FIXED_1 = 2048). At each
    tick, with active = n·FIXED_1 (``calc_load`` in kernel/sched/loadavg.c, since Linux 4.6):

        new = load·exp + active·(FIXED_1 − exp);  new += FIXED_1 − 1 if active >= load;  load = new // FIXED_1

    (the round-up lets a constant load reach n exactly instead of stalling just below it). ``exp`` is
    FIXED_1·e^(−5/window): 1884 for 1 min, 2014 for 5, 2037 for 15. Starting from ``start_raw`` (a raw
    fixed-point value), it returns the final value printed like fs/proc/loadavg.c: x = load + FIXED_1/200
    (integer division: + 10, to round to 2 decimals), then "%d.%02d" of x >> 11 and ((x & 2047)·100) >> 11.

    ``kernel_loadavg([128] * 12)`` = "80.99" (the float model says 80.91); with exp 2014 "23.30", with
    2037 "8.01". After 120 ticks at 128: "128.00"; 12 idle ticks later: "47.01".

    Errors: a count that is not an int >= 0 → ValueError naming ``active_counts``; ``exp`` not an int
    in 1..2047 → ``exp``; ``start_raw`` not an int >= 0 → ``start_raw``.
    """
    counts = _check_counts("active_counts", active_counts)
    e = check_int("exp", exp, 1)
    if e >= FIXED_1:
        raise ValueError(f"exp must be < FIXED_1 = {FIXED_1} (a decay factor below 1.0), got {e}")
    raw = check_int("start_raw", start_raw)
    # TODO: run calc_load once per tick (with the round-up), then format like /proc/loadavg.
    raise NotImplementedError('TODO: run calc_load once per tick (with the round-up), then format like /proc/loadavg.')


# ---------------------------------------------------------------------------------------------
# 2. Where the jiffies went: two /proc/stat snapshots
# ---------------------------------------------------------------------------------------------


def cpu_breakdown(stat_before: str, stat_after: str, cpu: str = "cpu") -> dict[str, float]:
    """Percent of the interval's jiffies per state, from two /proc/stat snapshots, for line ``cpu``.

    ``cpu`` is the aggregate line "cpu" (every CPU) or one CPU ("cpu17"). Its columns are
    user nice system idle iowait irq softirq steal guest guest_nice; kernels older than 2.6.33 print
    fewer (missing columns count as 0). The interval's total is the sum of the deltas of the first
    eight columns: guest and guest_nice are already inside user and nice, so they are not added again.
    Returns {"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"} in percent of the
    total (they sum to 100), "busy" = 100 − idle − iowait (iowait is an idle CPU), and
    "total_jiffies", the total as an int. Other lines (intr, ctxt, cpuN, ...) may come in any order.

    10 s on 128 CPUs (128,000 jiffies at 100 Hz): user 1.2 %, system 0.6 %, idle 88.2 %, iowait 10.0 %,
    busy 1.8 %: the CPUs are idle, whatever the load average says.

    Errors: text that is not a str, a ``cpu`` line with fewer than 4 numbers or a non-integer column
    → ValueError naming that snapshot; ``cpu`` missing (or twice) in a snapshot → ValueError naming
    ``cpu``; a counter that went down, or an interval of 0 jiffies → ValueError naming ``stat_after``.
    """
    before, after = _check_text("stat_before", stat_before), _check_text("stat_after", stat_after)
    if not isinstance(cpu, str) or not re.fullmatch(r"cpu\d*", cpu):
        raise ValueError(f"cpu must be 'cpu' (all CPUs) or 'cpuN', got {cpu!r}")
    # TODO: read the cpu line's columns in both snapshots, take the deltas, and turn them into percentages.
    raise NotImplementedError("TODO: read the cpu line's columns in both snapshots, take the deltas, and turn them into percentages.")


def _stat_columns(name: str, text: str, cpu: str) -> list[int]:
    """The ten jiffy counters of line ``cpu`` (missing trailing columns as 0)."""
    # TODO: find exactly one line whose first word is `cpu` and read its integer columns.
    raise NotImplementedError('TODO: find exactly one line whose first word is `cpu` and read its integer columns.')


# ---------------------------------------------------------------------------------------------
# 3. Task states and the USE triage
# ---------------------------------------------------------------------------------------------


def ps_states(ps_text: str) -> dict:
    """Count the tasks of a ``ps`` listing by state, and the D tasks by what they wait on.

    The first non-blank line is the header; the state is the first letter of the column headed STAT
    (``ps aux``, ``ps -eo pid,stat,wchan:32,comm``) or S (``ps -el``): "Dl" and "Ds" are D, "Ss+" is S.
    The other letters (l, s, +, <, N) are flags. When the header has a WCHAN column, each D task is
    also counted under its wait channel. Columns are separated by runs of spaces; the last column
    (the command) may contain spaces. Blank lines and repeated header lines are skipped.

    Returns {"states": {letter: count}, "total": number of tasks, "d_wchan": {wchan: count}} (d_wchan is
    {} without a WCHAN column). The lecture's incident: R 3, D 121 (90 of them in rpc_wait_bit_killable,
    the NFS client waiting for the server), S 4, I 1, Z 1; total 130.

    Errors: ``ps_text`` not a str, no header with a STAT or S column, a line with fewer columns than
    the header or a state letter ps(1) does not define → ValueError naming ``ps_text`` (and the line).
    """
    text = _check_text("ps_text", ps_text)
    # TODO: find the header and the STAT/S (and WCHAN) columns, then count each data line's state.
    raise NotImplementedError("TODO: find the header and the STAT/S (and WCHAN) columns, then count each data line's state.")


def _parse_loadavg(text: str) -> tuple[float, float, float]:
    """(load1, load5, load15) from /proc/loadavg ("128.40 97.12 45.03 3/2113 48211") or an ``uptime`` line."""
    _, marker, tail = text.partition("load average:")
    words = tail.replace(",", " ").split() if marker else text.split()
    if len(words) < 3 or not all(_LOAD_NUMBER.match(w) for w in words[:3]):
        raise ValueError(f"loadavg_text must be /proc/loadavg or uptime output, got {text!r}")
    return float(words[0]), float(words[1]), float(words[2])


def use_triage(loadavg_text: str, stat_before: str, stat_after: str, ps_text: str, n_cpus: int) -> dict:
    """The USE method's first minute on a node: is a high load CPU saturation or tasks blocked on I/O?

    Reads the 1/5/15-min loads from ``loadavg_text`` (/proc/loadavg, or an ``uptime`` line), the CPU
    breakdown of the interval from the two /proc/stat snapshots (line "cpu") and the task states from
    ``ps_text``. With R and D the counts of running and uninterruptible tasks:

    - "io_blocked" when load1 > n_cpus, busy < 50 % and D >= R (the load is made of D tasks);
    - "cpu_saturated" when load1 > n_cpus and busy >= 90 % (the run queue is longer than the CPUs);
    - "ok" otherwise.

    Returns {"verdict", "load1", "load5", "load15", "load_per_cpu" (load1 / n_cpus), "busy", "iowait"
    (percent), "running" (R), "blocked" (D), "top_d_wchan" (the most common D wait channel, or None)}.
    The lecture's incident, load "128.40 97.12 45.03" on 128 CPUs, busy 1.8 %, R 3, D 121 → "io_blocked"
    (128.40 > 128: compare the load itself, never its integer part).

    Errors: unreadable ``loadavg_text`` → ValueError naming it; ``n_cpus`` not an int >= 1 → ``n_cpus``;
    the snapshots and ``ps_text`` as in ``cpu_breakdown`` and ``ps_states``.
    """
    n = check_int("n_cpus", n_cpus, 1)
    load1, load5, load15 = _parse_loadavg(_check_text("loadavg_text", loadavg_text))
    # TODO: combine cpu_breakdown and ps_states, then apply the three rules in order.
    raise NotImplementedError('TODO: combine cpu_breakdown and ps_states, then apply the three rules in order.')


# ---------------------------------------------------------------------------------------------
# 4. Flame graphs are folded stacks
# ---------------------------------------------------------------------------------------------


def fold_stacks(lines: Iterable[str]) -> dict[str, dict[str, int]]:
    """Self and inclusive sample counts per function from folded stacks (stackcollapse output).

    Each line is "root;caller;...;leaf count": the frames of one distinct stack, outermost first,
    separated by ';', then a space and the number of samples that had exactly that stack (frames may
    contain spaces, so the count is the last word). A function's *self* count is the samples where it
    is the leaf (the top of a flame graph); its *inclusive* count is the samples where it appears
    anywhere in the stack (the width of its box), counted once per sample even when it recurses:
    "main;recurse;recurse;leaf 4" gives recurse inclusive 4, not 8. The same stack on several lines
    adds up. Blank lines and lines without a stack and a non-negative integer count are skipped,
    as flamegraph.pl does.

    Returns {function: {"self": int, "inclusive": int}}; Σ self = Σ counts, and a root present in
    every stack has inclusive = Σ counts.

    Errors: ``lines`` given as one str, or an item that is not a str → ValueError naming ``lines``.
    """
    items = _check_lines("lines", lines)
    # TODO: split each line into its stack and its count; add the count to the leaf's self and, once, to
    # the inclusive count of every distinct function on the stack.
    raise NotImplementedError("TODO: split each line into its stack and its count; add the count to the leaf's self and, once, to the inclusive count of every distinct function on the stack.")
