"""L04 · the load average (float model and the kernel's fixed point), /proc/stat deltas, ps states and
the USE triage, folded stacks. Parsers run on fixtures in the real tools' formats (tests/l04_linux_tools/
fixtures) and on hypothesis-built variants."""

from __future__ import annotations

import math
import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.kit import assert_exact, assert_number, assert_rejects_all, grade, learner

UNIT = "l04_linux_tools"
loadavg_ema = learner(UNIT, "linux_tools", "loadavg_ema")
kernel_loadavg = learner(UNIT, "linux_tools", "kernel_loadavg")
cpu_breakdown = learner(UNIT, "linux_tools", "cpu_breakdown")
ps_states = learner(UNIT, "linux_tools", "ps_states")
use_triage = learner(UNIT, "linux_tools", "use_triage")
fold_stacks = learner(UNIT, "linux_tools", "fold_stacks")

FIXTURES = Path(__file__).parent / "fixtures"
STAT_T0 = (FIXTURES / "proc_stat_t0.txt").read_text()
STAT_T10 = (FIXTURES / "proc_stat_t10.txt").read_text()
PS_INCIDENT = (FIXTURES / "ps_incident.txt").read_text()
PS_EL = (FIXTURES / "ps_el_busy.txt").read_text()
PS_AUX = (FIXTURES / "ps_aux_mixed.txt").read_text()
TRAIN_FOLDED = (FIXTURES / "train.folded").read_text()
PERF_FOLDED = (FIXTURES / "perf_mixed.folded").read_text()
INCIDENT_LOADAVG = "128.40 97.12 45.03 3/2113 48211\n"

PCT_KEYS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
STAT_COLUMNS = PCT_KEYS + ("guest", "guest_nice")


def check(got: object, want: object, call: str, why: str) -> None:
    assert type(got) is type(want) and got == want, f"{call} = {got!r}, expected {want!r}: {why}"


# ---- loadavg_ema --------------------------------------------------------------------------------


def ema_oracle(counts: list[int], window: int, start: float) -> float:
    """The unrolled sum: start·d^k + Σ n_i·(1 − d)·d^(k−1−i), d = e^(−5/window)."""
    d, k = math.exp(-5 / window), len(counts)
    return start * d**k + sum(n * (1 - d) * d ** (k - 1 - i) for i, n in enumerate(counts))


@grade(loadavg_ema, "correctness", points=2,
       hint="How many 5-second ticks are in one minute, and what fraction of the old value survives each?")
def test_loadavg_ema_worked_numbers():
    cases = [
        (([128] * 12,), {}, 128 * (1 - math.exp(-1)), "one minute of 128 tasks reaches 128·(1 − 1/e) = 80.9114"),
        (([128] * 120 + [0] * 12,), {}, 47.08643065224348, "ten minutes at 128 then one idle minute: 47.0864"),
        (([128] * 12,), {"window_s": 300}, 128 * (1 - math.exp(-0.2)), "the 5-minute average after 1 minute"),
        (([0] * 12,), {"start": 10.0}, 10 * math.exp(-1), "an idle minute divides the load by e"),
        (([],), {"start": 3.5}, 3.5, "no tick: the start value"),
    ]
    for args, kwargs, want, why in cases:
        got = loadavg_ema(*args, **kwargs)
        assert_number(got, want, f"loadavg_ema(<{len(args[0])} ticks>, {kwargs}) ({why})", rel=1e-9, abs_tol=1e-12)


@grade(loadavg_ema, "correctness", points=2,
       hint="Unroll the recurrence: what weight does the i-th of k ticks carry at the end?")
@settings(max_examples=40)
@given(counts=st.lists(st.integers(0, 4096), max_size=60), window=st.sampled_from([5, 60, 300, 900, 37]),
       start=st.floats(0, 1000))
def test_loadavg_ema_matches_unrolled_sum(counts, window, start):
    got = loadavg_ema(counts, window, start)
    want = ema_oracle(counts, window, start)
    assert_number(got, want, f"loadavg_ema({counts}, {window}, {start})", rel=1e-9, abs_tol=1e-9)


@grade(loadavg_ema, "correctness", points=1,
       hint="From 0 with a constant n, what closed form does the average follow, and where does it end?")
@settings(max_examples=25)
@given(n=st.integers(1, 2000), k=st.integers(1, 400), window=st.sampled_from([60, 300, 900]))
def test_loadavg_ema_closed_form(n, k, window):
    got = loadavg_ema([n] * k, window)
    assert_number(got, n * (1 - math.exp(-5 * k / window)), f"loadavg_ema([{n}] * {k}, {window})", rel=1e-9)
    assert got <= n, f"loadavg_ema([{n}] * {k}, {window}) = {got}: a constant load n is approached from below"


@grade(loadavg_ema, "correctness", points=1, validation=True, hint="What is a load window of 0 seconds?")
def test_loadavg_ema_rejects():
    assert_rejects_all(loadavg_ema, [
        (([1, -1],), "active_counts"), (([1.5],), "active_counts"), (([True],), "active_counts"),
        (("128",), "active_counts"), (([1], 0), "window_s"), (([1], 60.0), "window_s"),
        (([1], 60, -1.0), "start"), (([1], 60, math.nan), "start"), (([1], 60, math.inf), "start"),
    ])


# ---- kernel_loadavg -----------------------------------------------------------------------------


def kernel_oracle(counts: list[int], exp: int, raw: int) -> str:
    """calc_load (Linux >= 4.6) tick by tick, then fs/proc/loadavg.c's LOAD_INT / LOAD_FRAC."""
    for n in counts:
        active = n * 2048
        total = raw * exp + active * (2048 - exp) + (2047 if active >= raw else 0)
        raw = total // 2048
    whole, frac = divmod(raw + 2048 // 200, 2048)
    return f"{whole}.{frac * 100 // 2048:02d}"


@grade(kernel_loadavg, "correctness", points=3,
       hint="After computing load·exp + active·(2048 − exp), when does the kernel add 2047 before dividing?")
def test_kernel_loadavg_worked_numbers():
    cases = [
        (([128] * 12,), "80.99", "the 1-min average after 1 minute at 128 (the float model says 80.91)"),
        (([128] * 12, 2014), "23.30", "the 5-min average after 1 minute"),
        (([128] * 12, 2037), "8.01", "the 15-min average after 1 minute"),
        (([128] * 120,), "128.00", "10 minutes at 128: the round-up lets the average reach 128 exactly"),
        (([128] * 120 + [0] * 12,), "47.01", "then one idle minute"),
        (([0] * 12, 1884, 262138), "47.01", "the same from the raw value after the 120 busy ticks"),
        (([],), "0.00", "no tick"),
        (([], 1884, 2038), "1.00", "raw 2038 + 10 = 2048 = FIXED_1 prints 1.00"),
        (([], 1884, 2037), "0.99", "raw 2037 + 10 = 2047 is still below 1.0"),
    ]
    for args, want, why in cases:
        shown = ", ".join([f"<{len(args[0])} ticks>", *map(str, args[1:])])
        check(kernel_loadavg(*args), want, f"kernel_loadavg({shown})", why)


@grade(kernel_loadavg, "correctness", points=2,
       hint="Is every step integer arithmetic (no float), and is the result printed like /proc/loadavg?")
@settings(max_examples=40)
@given(counts=st.lists(st.integers(0, 3000), max_size=80), exp=st.sampled_from([1884, 2014, 2037, 1]),
       raw=st.integers(0, 2**24))
def test_kernel_loadavg_matches_fixed_point(counts, exp, raw):
    check(kernel_loadavg(counts, exp, raw), kernel_oracle(counts, exp, raw),
          f"kernel_loadavg({counts}, {exp}, {raw})", "the kernel's calc_load, tick by tick, in integers")


@grade(kernel_loadavg, "correctness", points=1,
       hint="Held long enough at n tasks, does the kernel's average print n.00, and how far from the float model?")
@settings(max_examples=25)
@given(n=st.integers(0, 1000), k=st.integers(1, 80),
       window=st.sampled_from([(1884, 60, 200), (2014, 300, 1000), (2037, 900, 3000)]))
def test_kernel_loadavg_steady_state(n, k, window):
    exp, seconds, ticks = window
    check(kernel_loadavg([n] * ticks, exp), f"{n}.00", f"kernel_loadavg([{n}] * {ticks}, {exp})",
          "a constant load converges to n exactly (the round-up when active >= load)")
    near = float(kernel_loadavg([n] * k, exp))
    model = n * (1 - math.exp(-5 * k / seconds))
    assert abs(near - model) <= 0.016 * n + 0.02, (
        f"kernel_loadavg([{n}] * {k}, {exp}) = {near}, float model {model:.4f}: the fixed point must stay "
        "within 1.6 % (+ 0.02) of the EMA (exp is e^(-5/window) rounded to 11 bits)")


@grade(kernel_loadavg, "correctness", points=1, validation=True, hint="Which exp would make the average grow forever?")
def test_kernel_loadavg_rejects():
    assert_rejects_all(kernel_loadavg, [
        (([1, -2],), "active_counts"), (([0.5],), "active_counts"), ((None,), "active_counts"),
        (([1], 2048), "exp"), (([1], 0), "exp"), (([1], 1884.0), "exp"),
        (([1], 1884, -1), "start_raw"), (([1], 1884, 1.5), "start_raw"),
    ])


# ---- cpu_breakdown ------------------------------------------------------------------------------


def stat_text(rows: dict[str, list[int]], extra: list[str], rng: random.Random, spaces: bool) -> str:
    """A /proc/stat text: the cpu rows (any column count) and other lines, shuffled, optionally re-spaced."""
    lines = [" ".join([name, *map(str, cols)]) for name, cols in rows.items()] + extra
    rng.shuffle(lines)
    if spaces:
        lines = [(" " * rng.randrange(3)) + "  ".join(line.split()) + " " * rng.randrange(3) for line in lines]
    return "\n".join(lines) + "\n"


def breakdown_oracle(before: list[int], after: list[int]) -> dict[str, float]:
    delta = [b - a for a, b in zip(before, after, strict=True)] + [0] * (10 - len(before))
    total = sum(delta[:8])
    out: dict[str, float] = {k: 100 * d / total for k, d in zip(PCT_KEYS, delta, strict=False)}
    out["busy"] = 100 * (total - delta[3] - delta[4]) / total
    out["total_jiffies"] = total
    return out


def check_breakdown(got: object, want: dict, call: str) -> None:
    assert isinstance(got, dict), f"{call} = {got!r}: return a dict"
    assert set(want) <= set(got), f"{call}: keys {sorted(got)}, missing {sorted(set(want) - set(got))}"
    assert_exact(got["total_jiffies"], want["total_jiffies"], f"{call}['total_jiffies']",
                 why="the deltas of user..steal (guest and guest_nice are already inside user and nice)")
    for key in (*PCT_KEYS, "busy"):
        assert_number(got[key], want[key], f"{call}[{key!r}]", rel=1e-9, abs_tol=1e-9)
    assert_number(sum(got[k] for k in PCT_KEYS), 100.0, f"sum of the eight percentages of {call}", rel=1e-9)


@grade(cpu_breakdown, "correctness", points=3,
       hint="Guest time is already counted in user: which columns make the interval's total?")
def test_cpu_breakdown_incident_snapshots():
    """10 s on 128 CPUs (/proc/stat with cpu0..cpu127, intr, ctxt, ...): the CPUs idle while the load is 128."""
    got = cpu_breakdown(STAT_T0, STAT_T10)
    want = {"user": 1.2, "nice": 0.0, "system": 0.6, "idle": 88.2, "iowait": 10.0, "irq": 0.0, "softirq": 0.0,
            "steal": 0.0, "busy": 1.8, "total_jiffies": 128_000}
    check_breakdown(got, want, "cpu_breakdown(proc_stat_t0, proc_stat_t10)")


@grade(cpu_breakdown, "correctness", points=1, hint="Which line of /proc/stat holds one CPU's counters?")
def test_cpu_breakdown_one_cpu():
    rows = {}
    for text in (STAT_T0, STAT_T10):
        line = next(x for x in text.splitlines() if x.startswith("cpu17 "))
        rows.setdefault("cpu17", []).append([int(v) for v in line.split()[1:]])
    want = breakdown_oracle(*rows["cpu17"])
    check_breakdown(cpu_breakdown(STAT_T0, STAT_T10, "cpu17"), want, "cpu_breakdown(proc_stat_t0, proc_stat_t10, "
                    "'cpu17')")
    assert want["total_jiffies"] == 1000, "fixture: one CPU gets 1000 jiffies in 10 s at 100 Hz"


@grade(cpu_breakdown, "correctness", points=2,
       hint="Does your parser depend on the line order, the spacing, or all ten columns being there?")
@settings(max_examples=30)
@given(seed=st.integers(0, 2**32 - 1), n_cols=st.sampled_from([4, 7, 8, 9, 10]), spaces=st.booleans())
def test_cpu_breakdown_variants(seed, n_cols, spaces):
    """Random counters, line order, spacing and kernel vintage (4 to 10 columns, e.g. 2.6.18 prints 7)."""
    rng = random.Random(seed)
    before = [rng.randrange(10**9) for _ in range(n_cols)]
    delta = [rng.choice([0, rng.randrange(1, 50_000)]) for _ in range(n_cols)]
    delta[3] += 1  # at least one jiffy passes
    after = [b + d for b, d in zip(before, delta, strict=True)]
    n_cpus = rng.randrange(1, 5)
    other = [f"intr {rng.randrange(10**9)} 0 9 0", f"ctxt {rng.randrange(10**9)}", "btime 1767000000",
             f"procs_running {rng.randrange(9)}", f"procs_blocked {rng.randrange(9)}"]
    per_cpu = {f"cpu{i}": [v // (i + 2) for v in before] for i in range(n_cpus)}
    t0 = stat_text({"cpu": before, **per_cpu}, other, rng, spaces)
    t1 = stat_text({"cpu": after, **per_cpu}, other, rng, spaces)
    check_breakdown(cpu_breakdown(t0, t1), breakdown_oracle(before, after),
                    f"cpu_breakdown(<{n_cols}-column snapshots, seed {seed}>)")


@grade(cpu_breakdown, "correctness", points=1, validation=True,
       hint="What does a counter that went down tell you about the two snapshots?")
def test_cpu_breakdown_rejects():
    old_kernel = "cpu  10 0 5 100\ncpu0 10 0 5 100\n"
    assert_rejects_all(cpu_breakdown, [
        ((STAT_T10, STAT_T0), "stat_after"), ((STAT_T0, STAT_T0), "stat_after"),
        ((STAT_T0, STAT_T10, "cpu200"), "cpu"), ((STAT_T0, STAT_T10, "gpu"), "cpu"), ((STAT_T0, STAT_T10, 3), "cpu"),
        (("intr 1 2 3\n", STAT_T10), "cpu"), ((STAT_T0 + "cpu  1 2 3 4\n", STAT_T10), "cpu"),
        (("cpu  10 0 5\n", old_kernel), "stat_before"), (("cpu  10 0 x 100\n", old_kernel), "stat_before"),
        ((old_kernel, "cpu  10 0 5 1.5e3\n"), "stat_after"), ((None, STAT_T10), "stat_before"),
        ((STAT_T0.encode(), STAT_T10), "stat_before"),
    ])


# ---- ps_states ----------------------------------------------------------------------------------


@grade(ps_states, "correctness", points=3,
       hint="Which letter of 'Dl' or 'Ss+' is the state, and which are flags?")
def test_ps_states_incident():
    """`ps -eo pid,ppid,stat,wchan:32,comm` on the stuck node: 121 D tasks, 90 waiting on the NFS client."""
    got = ps_states(PS_INCIDENT)
    call = "ps_states(ps_incident.txt)"
    assert isinstance(got, dict) and {"states", "total", "d_wchan"} <= set(got), (
        f"{call} = {got!r}: return {{'states', 'total', 'd_wchan'}}")
    check(got["states"], {"R": 3, "D": 121, "S": 4, "I": 1, "Z": 1}, f"{call}['states']",
          "the first letter of STAT: D and Dl are both D, R+ is R, Ss and Ssl are S, I< is I")
    assert_exact(got["total"], 130, f"{call}['total']", why="every task line, the header excluded")
    check(got["d_wchan"], {"rpc_wait_bit_killable": 90, "folio_wait_bit_common": 19, "jbd2_log_wait_commit": 8,
                           "rwsem_down_write_slowpath": 4}, f"{call}['d_wchan']", "each D task under its WCHAN")
    check(list(got["d_wchan"])[0], "rpc_wait_bit_killable", f"first key of {call}['d_wchan']", "most common first")


@grade(ps_states, "correctness", points=2,
       hint="Is the header always the same? Find the state column by its name (STAT or S), not by position.")
def test_ps_states_other_formats():
    got = ps_states(PS_EL)
    check(got, {"states": {"S": 4, "I": 1, "R": 11, "D": 1, "T": 1}, "total": 18, "d_wchan": {"folio_": 1}},
          "ps_states(ps -el output)", "state in the column headed S; ps -l truncates WCHAN to 6 characters")
    got = ps_states(PS_AUX)
    check(got, {"states": {"S": 5, "I": 1, "R": 3, "D": 2, "Z": 1}, "total": 12, "d_wchan": {}},
          "ps_states(ps aux output)", "state in STAT; no WCHAN column; the blank line and the repeated header "
          "are skipped; commands contain spaces")


PS_FORMATS = {  # header, row renderer
    "stat_wchan": ("PID STAT WCHAN COMMAND", lambda p, s, w, c: f"{p} {s} {w} {c}"),
    "s_wchan": ("F S UID PID WCHAN CMD", lambda p, s, w, c: f"4 {s[0]} 1000 {p} {w} {c}"),
    "stat_only": ("PID TTY STAT TIME COMMAND", lambda p, s, w, c: f"{p} ? {s} 0:01 {c}"),
}


@grade(ps_states, "correctness", points=2,
       hint="Does your count change if the lines are reordered, padded with spaces or the WCHAN column is absent?")
@settings(max_examples=30)
@given(seed=st.integers(0, 2**32 - 1), fmt=st.sampled_from(sorted(PS_FORMATS)), n=st.integers(0, 40),
       pad=st.booleans())
def test_ps_states_variants(seed, fmt, n, pad):
    rng = random.Random(seed)
    header, row = PS_FORMATS[fmt]
    tasks = [(rng.randrange(1, 4 * 10**6), rng.choice("RSDIZT") + "".join(rng.sample("sl+<N", rng.randrange(3))),
              rng.choice(["-", "ep_poll", "rpc_wait_bit_killable", "io_schedule", "futex_wait_queue"]),
              rng.choice(["python", "pt_data_worker", "python -u train.py --rank 3", "[kworker/3:1]"]))
             for _ in range(n)]
    lines = [row(*t) for t in tasks]
    if pad:
        lines = ["   ".join(x.split(" ", 3)) + "  " if rng.random() < 0.5 else "  " + x for x in lines]
    text = header + "\n" + "\n".join(lines) + "\n"
    states: dict[str, int] = {}
    d_wchan: dict[str, int] = {}
    for _, stat, wchan, _ in tasks:
        states[stat[0]] = states.get(stat[0], 0) + 1
        if stat[0] == "D" and "WCHAN" in header:
            d_wchan[wchan] = d_wchan.get(wchan, 0) + 1
    got = ps_states(text)
    call = f"ps_states(<{n} tasks, {fmt}, seed {seed}>)"
    assert isinstance(got, dict), f"{call} = {got!r}: return a dict"
    check(got.get("states"), states, f"{call}['states']", "one count per first letter of the state column")
    assert_exact(got.get("total"), n, f"{call}['total']", why="one per task line")
    check(got.get("d_wchan"), d_wchan, f"{call}['d_wchan']", "D tasks by WCHAN ({} without that column)")
    counts = list(got["d_wchan"].values())
    assert counts == sorted(counts, reverse=True), f"{call}['d_wchan'] = {got['d_wchan']}: most common first"


@grade(ps_states, "correctness", points=1, validation=True,
       hint="What should a parser say about a line it cannot read, instead of guessing?")
def test_ps_states_rejects():
    assert_rejects_all(ps_states, [
        (("",), "ps_text"), (("  1 R python\n  2 S bash\n",), "ps_text"), (("PID COMMAND\n1 python\n",), "ps_text"),
        (("PID STAT WCHAN COMMAND\n1 R - python\n2 S\n",), "ps_text"),
        (("PID STAT COMMAND\n1 Q python\n",), "ps_text"), ((None,), "ps_text"), ((PS_EL.splitlines(),), "ps_text"),
    ])


# ---- use_triage ---------------------------------------------------------------------------------


def small_stat(user: int, system: int, idle: int, iowait: int) -> tuple[str, str]:
    """Two 8-CPU /proc/stat snapshots whose interval has these jiffy deltas."""
    t0 = [812_334, 120, 90_551, 7_120_004, 30_112, 0, 4_410, 0, 0, 0]
    t1 = [t0[0] + user, t0[1], t0[2] + system, t0[3] + idle, t0[4] + iowait, 0, t0[6], 0, 0, 0]
    return (f"cpu  {' '.join(map(str, t0))}\nctxt 77120\n", f"ctxt 79902\ncpu  {' '.join(map(str, t1))}\n")


def check_triage(got: object, want: dict, call: str) -> None:
    assert isinstance(got, dict), f"{call} = {got!r}: return a dict"
    keys = {"verdict", "load1", "load5", "load15", "load_per_cpu", "busy", "iowait", "running", "blocked",
            "top_d_wchan"}
    assert set(got) == keys, f"{call}: keys {sorted(got)}, expected {sorted(keys)}"
    for key, value in want.items():
        if isinstance(value, float):
            assert_number(got[key], value, f"{call}[{key!r}]", rel=1e-9, abs_tol=1e-9)
        else:
            check(got[key], value, f"{call}[{key!r}]", "see the docstring's rules")


@grade(use_triage, "correctness", points=3,
       hint="Load 128.40 on 128 CPUs with the CPUs 1.8 % busy: which tasks make up that load?")
def test_use_triage_incident():
    got = use_triage(INCIDENT_LOADAVG, STAT_T0, STAT_T10, PS_INCIDENT, 128)
    check_triage(got, {"verdict": "io_blocked", "load1": 128.40, "load5": 97.12, "load15": 45.03,
                       "load_per_cpu": 128.40 / 128, "busy": 1.8, "iowait": 10.0, "running": 3, "blocked": 121,
                       "top_d_wchan": "rpc_wait_bit_killable"},
                 "use_triage('128.40 97.12 45.03 3/2113 48211', t0, t10, ps_incident, 128)")


@grade(use_triage, "correctness", points=2,
       hint="A load above the CPU count with the CPUs 97 % busy, or with 1.8 % busy but more R than D: same verdict?")
def test_use_triage_other_nodes():
    busy = small_stat(user=7600, system=160, idle=160, iowait=80)  # 8 CPUs, 10 s: 97 % busy
    cases = [
        ("11.31 10.87 9.02 11/950 22019", busy, PS_EL, 8, "cpu_saturated", "load 11.31 > 8, busy 97 %"),
        ("load average: 11.31, 10.87, 9.02", busy, PS_EL, 8, "cpu_saturated", "the same from an uptime line"),
        ("7.95 7.10 6.00 9/950 22019", busy, PS_EL, 8, "ok", "load 7.95 <= 8: busy but not saturated"),
        ("8.00 8.00 8.00 8/950 22019", busy, PS_EL, 8, "ok", "load 8.00 is not > 8"),
        ("8.01 8.00 8.00", busy, PS_EL, 8, "cpu_saturated", "8.01 > 8 (compare the number itself)"),
        (INCIDENT_LOADAVG, (STAT_T0, STAT_T10), PS_EL, 128, "ok", "busy 1.8 % but R 11 > D 1: not I/O-blocked"),
        (INCIDENT_LOADAVG, (STAT_T0, STAT_T10), PS_INCIDENT, 129, "ok", "load 128.40 on 129 CPUs is not > 129"),
        ("9.20 4.00 2.00", small_stat(2000, 400, 3600, 2000), PS_AUX, 8, "ok", "busy 30 % but R 3 > D 2"),
        ("9.20 4.00 2.00", small_stat(2000, 400, 3600, 2000), PS_INCIDENT, 8, "io_blocked", "busy 30 %, D >= R"),
    ]
    for load, (t0, t1), ps, n, verdict, why in cases:
        got = use_triage(load, t0, t1, ps, n)
        call = f"use_triage({load!r}, ..., n_cpus={n})"
        assert isinstance(got, dict), f"{call} = {got!r}: return a dict"
        check(got.get("verdict"), verdict, f"{call}['verdict']", why)


@grade(use_triage, "correctness", points=2, hint="Apply the rules in order: io_blocked first, then cpu_saturated.")
@settings(max_examples=30)
@given(load_centi=st.integers(0, 40_000), n_cpus=st.integers(1, 256), busy_pct=st.integers(0, 100),
       r=st.integers(0, 30), d=st.integers(0, 30))
def test_use_triage_decision_table(load_centi, n_cpus, busy_pct, r, d):
    load1 = load_centi / 100
    t0, t1 = small_stat(user=busy_pct * 10, system=0, idle=(100 - busy_pct) * 5, iowait=(100 - busy_pct) * 5)
    ps = "PID STAT WCHAN COMMAND\n" + "".join(f"{i} R - python\n" for i in range(r)) + "".join(
        f"{1000 + i} D io_schedule python\n" for i in range(d))
    over = load1 > n_cpus
    want = "io_blocked" if over and busy_pct < 50 and d >= r else "cpu_saturated" if over and busy_pct >= 90 else "ok"
    text = f"{load_centi // 100}.{load_centi % 100:02d} 1.00 0.50 {r}/400 9911"
    got = use_triage(text, t0, t1, ps, n_cpus)
    call = f"use_triage({text!r}, <busy {busy_pct} %>, <R {r}, D {d}>, {n_cpus})"
    check_triage(got, {"verdict": want, "load1": load1, "busy": float(busy_pct), "running": r, "blocked": d,
                       "top_d_wchan": "io_schedule" if d else None}, call)


@grade(use_triage, "correctness", points=1, validation=True, hint="What is a node with 0 CPUs?")
def test_use_triage_rejects():
    ok = (INCIDENT_LOADAVG, STAT_T0, STAT_T10, PS_INCIDENT)
    assert_rejects_all(use_triage, [
        ((*ok, 0), "n_cpus"), ((*ok, 128.0), "n_cpus"), ((*ok, True), "n_cpus"),
        (("", *ok[1:], 128), "loadavg_text"), (("high 97.12 45.03", *ok[1:], 128), "loadavg_text"),
        (("128.40 97.12", *ok[1:], 128), "loadavg_text"), ((None, *ok[1:], 128), "loadavg_text"),
        ((ok[0], STAT_T10, STAT_T0, ok[3], 128), "stat_after"), ((*ok[:3], "PID COMMAND\n1 x\n", 128), "ps_text"),
    ])


# ---- fold_stacks --------------------------------------------------------------------------------


def fold_oracle(stacks: list[tuple[list[str], int]]) -> dict[str, dict[str, int]]:
    """Per sample-weighted stack: +count to the leaf's self, +count once to each distinct frame's inclusive."""
    out: dict[str, dict[str, int]] = {}
    for frames, count in stacks:
        for name in set(frames):
            out.setdefault(name, {"self": 0, "inclusive": 0})["inclusive"] += count
        out[frames[-1]]["self"] += count
    return out


def check_fold(got: object, want: dict, call: str) -> None:
    assert isinstance(got, dict), f"{call} = {got!r}: return a dict"
    assert set(got) == set(want), (f"{call}: functions {sorted(got)}, expected {sorted(want)} "
                                   "(split frames on ';' and the count on the last space; skip malformed lines)")
    for name, counts in want.items():
        check(got[name], counts, f"{call}[{name!r}]", "self = samples with it on top; inclusive = samples with it "
              "anywhere on the stack, once per sample even if it recurses")


@grade(fold_stacks, "correctness", points=3,
       hint="In 'main;recurse;recurse;leaf 4', in how many samples does recurse appear?")
def test_fold_stacks_training_profile():
    got = fold_stacks(TRAIN_FOLDED.splitlines())
    call = "fold_stacks(train.folded)"
    check_fold(got, {
        "python": {"self": 0, "inclusive": 389}, "main": {"self": 0, "inclusive": 389},
        "train": {"self": 0, "inclusive": 255}, "forward": {"self": 0, "inclusive": 145},
        "matmul": {"self": 120, "inclusive": 120}, "softmax": {"self": 25, "inclusive": 25},
        "backward": {"self": 0, "inclusive": 80}, "matmul_backward": {"self": 80, "inclusive": 80},
        "optimizer_step": {"self": 30, "inclusive": 30}, "dataloader": {"self": 0, "inclusive": 130},
        "read_batch": {"self": 0, "inclusive": 90}, "nfs_read": {"self": 90, "inclusive": 90},
        "collate": {"self": 40, "inclusive": 40}, "recurse": {"self": 0, "inclusive": 4},
        "leaf": {"self": 4, "inclusive": 4},
    }, call)


@grade(fold_stacks, "correctness", points=2,
       hint="A C++ frame such as 'at::native::add(at::Tensor const&, ...)' contains spaces: where is the count?")
def test_fold_stacks_perf_output():
    """stackcollapse-perf.pl output: C++ signatures with spaces, kernel frames, a repeated stack, recursion
    through the interpreter, a comment, a line without a count and one with a bad count (skipped)."""
    got = fold_stacks(iter(PERF_FOLDED.splitlines(keepends=True)))
    add = "at::native::add(at::Tensor const&, at::Tensor const&)"
    check_fold(got, {
        "python": {"self": 0, "inclusive": 341}, "_PyEval_EvalFrameDefault": {"self": 3, "inclusive": 271},
        add: {"self": 0, "inclusive": 42}, "at::native::add_kernel": {"self": 42, "inclusive": 42},
        "THPVariable_mm": {"self": 0, "inclusive": 212}, "at::native::mm": {"self": 0, "inclusive": 212},
        "mkl_blas_avx512_sgemm_kernel_0": {"self": 212, "inclusive": 212},
        "PyObject_Call": {"self": 0, "inclusive": 14}, "pickle_loads": {"self": 14, "inclusive": 14},
        "__libc_read": {"self": 0, "inclusive": 61}, "entry_SYSCALL_64_[k]": {"self": 0, "inclusive": 61},
        "ksys_read_[k]": {"self": 0, "inclusive": 61}, "nfs_file_read_[k]": {"self": 0, "inclusive": 61},
        "rpc_wait_bit_killable_[k]": {"self": 61, "inclusive": 61}, "[unknown]": {"self": 9, "inclusive": 9},
    }, "fold_stacks(perf_mixed.folded, read as an iterator of lines with their newlines)")


@grade(fold_stacks, "correctness", points=2,
       hint="Check your function against these: Σ self = Σ counts, and the root's inclusive = Σ counts.")
@settings(max_examples=30)
@given(stacks=st.lists(st.tuples(st.lists(st.sampled_from(["f", "g", "h", "op add", "k"]), min_size=0, max_size=6),
                                 st.integers(0, 500)), max_size=25), seed=st.integers(0, 2**16))
def test_fold_stacks_properties(stacks, seed):
    rng = random.Random(seed)
    full = [(["main", *frames], count) for frames, count in stacks]
    lines = [f"{';'.join(frames)}{' ' * rng.randrange(1, 3)}{count}" for frames, count in full]
    got = fold_stacks(lines)
    check_fold(got, fold_oracle(full), f"fold_stacks({lines})")
    total = sum(count for _, count in full)
    assert_exact(sum(v["self"] for v in got.values()), total, f"Σ self of fold_stacks({lines})",
                 why="each sample has exactly one leaf")
    if full:
        assert_exact(got["main"]["inclusive"], total, f"fold_stacks({lines})['main']['inclusive']",
                     why="the root is on every stack")


@grade(fold_stacks, "correctness", points=1, validation=True,
       hint="What happens if you iterate over a whole file's text instead of its lines?")
def test_fold_stacks_rejects():
    assert_rejects_all(fold_stacks, [
        ((TRAIN_FOLDED,), "lines"), ((TRAIN_FOLDED.encode(),), "lines"), ((["main;f 3", 7],), "lines"),
        ((["main;f 3", None],), "lines"), ((42,), "lines"),
    ])
