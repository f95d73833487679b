"""L40 · checkpoint cost ledger, Young/Daly interval, a failure simulator, and a crash-safe save."""

from __future__ import annotations

import bisect
import io
import math
import os
import random
import stat

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from grader.kit import assert_number, assert_rejects, assert_rejects_all, grade, learner

UNIT = "l40_checkpointing"
checkpoint_efficiency = learner(UNIT, "checkpoint", "checkpoint_efficiency")
async_stage_seconds = learner(UNIT, "checkpoint", "async_stage_seconds")
optimal_interval = learner(UNIT, "checkpoint", "optimal_interval")
simulate_run = learner(UNIT, "checkpoint", "simulate_run")
atomic_save = learner(UNIT, "checkpoint", "atomic_save")

NAN, INF = float("nan"), float("inf")


# ---- checkpoint_efficiency ---------------------------------------------------------------------


@grade(checkpoint_efficiency, "correctness", points=2,
       hint="Between two saves, how long does the job compute, and how long does it stand still?")
def test_efficiency_lecture_numbers():
    """The lecture's 500 steps of 1.5 s: a 900 s blocking save leaves 45.45 %, a 2.5 s stall 99.67 %."""
    assert_number(checkpoint_efficiency(500, 1.5, 900), 750 / 1650, "checkpoint_efficiency(500, 1.5, 900)", rel=1e-12)
    assert_number(checkpoint_efficiency(500, 1.5, 2.5), 750 / 752.5, "checkpoint_efficiency(500, 1.5, 2.5)", rel=1e-12)
    assert round(checkpoint_efficiency(500, 1.5, 900), 6) == 0.454545
    assert round(checkpoint_efficiency(500, 1.5, 2.5), 6) == 0.996678
    assert_number(checkpoint_efficiency(500, 1.2, 600), 0.5, "checkpoint_efficiency(500, 1.2, 600)", rel=1e-12)
    assert_number(checkpoint_efficiency(1, 3.0, 0.0), 1.0, "checkpoint_efficiency(1, 3.0, 0.0) (free saves)")


@grade(checkpoint_efficiency, "correctness", points=1,
       hint="Is the share of time computing ever above 1, and what must a longer save do to it?")
@given(n=st.integers(1, 10**6), step=st.floats(1e-3, 100), save=st.floats(0, 1e5), more=st.floats(1e-3, 1e5))
def test_efficiency_bounded_and_decreasing(n, step, save, more):
    got = checkpoint_efficiency(n, step, save)
    call = f"checkpoint_efficiency({n}, {step!r}, {save!r})"
    assert_number(got, n * step / (n * step + save), call, rel=1e-12)
    assert 0 < got <= 1, f"{call} = {got!r}: a share of wall time is in (0, 1]"
    longer = checkpoint_efficiency(n, step, save + more)
    assert longer < got, f"{call} = {got!r} but with save_s + {more!r} it is {longer!r}: a longer save must cost more"


@grade(checkpoint_efficiency, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_efficiency_rejects_bad_arguments():
    assert_rejects_all(checkpoint_efficiency, [
        ((0, 1.5, 900), "steps_between"),
        ((500.0, 1.5, 900), "steps_between"),
        ((True, 1.5, 900), "steps_between"),
        ((500, 0.0, 900), "step_s"),
        ((500, NAN, 900), "step_s"),
        ((500, 1.5, -1.0), "save_s"),
        ((500, 1.5, INF), "save_s"),
    ])


# ---- async_stage_seconds -----------------------------------------------------------------------


@grade(async_stage_seconds, "correctness", points=2,
       hint="Each GPU copies only its own shard, and all the GPUs copy at the same time: how many bytes does one copy?")
def test_async_stage_lecture_numbers():
    """70B training state ≈ 1.1 TB over 64 GPUs: 17.19 GB each at 50 GB/s → 0.34375 s."""
    assert_number(async_stage_seconds(1_100_000_000_000, 64, 50e9), 0.34375,
                  "async_stage_seconds(1_100_000_000_000, 64, 50e9)", rel=1e-12)
    assert_number(async_stage_seconds(1_100_000_000_000, 1, 50e9), 22.0, "async_stage_seconds(1.1 TB, 1, 50e9)",
                  rel=1e-12)
    assert_number(async_stage_seconds(0, 8, 25e9), 0.0, "async_stage_seconds(0, 8, 25e9)")


@grade(async_stage_seconds, "correctness", points=1,
       hint="Doubling the ranks halves each shard; doubling the link speed halves the copy. Does yours?")
@given(state=st.integers(0, 10**13), ranks=st.integers(1, 4096), bw=st.floats(1e8, 1e12))
def test_async_stage_any_size(state, ranks, bw):
    assert_number(async_stage_seconds(state, ranks, bw), state / ranks / bw,
                  f"async_stage_seconds({state}, {ranks}, {bw!r})", rel=1e-12)


@grade(async_stage_seconds, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_async_stage_rejects_bad_arguments():
    assert_rejects_all(async_stage_seconds, [
        ((1.1e12, 64, 50e9), "state_bytes"),
        ((-1, 64, 50e9), "state_bytes"),
        ((10**12, 0, 50e9), "n_ranks"),
        ((10**12, 64.0, 50e9), "n_ranks"),
        ((10**12, 64, 0.0), "d2h_bytes_per_s"),
        ((10**12, 64, NAN), "d2h_bytes_per_s"),
    ])


# ---- optimal_interval --------------------------------------------------------------------------


def daly(c: float, m: float) -> float:
    """Daly (2006), the higher-order estimate of the optimal compute time between checkpoints."""
    if c >= 2 * m:
        return m
    r = c / (2 * m)
    return math.sqrt(2 * c * m) * (1 + math.sqrt(r) / 3 + r / 9) - c


@grade(optimal_interval, "correctness", points=2,
       hint="Young's optimum balances save cost against expected lost work: what is the square root of?")
def test_optimal_interval_worked_numbers():
    """C = 10 min, MTBF = 12 h → Young 7200 s (2 h), Daly 6805.6 s."""
    assert_number(optimal_interval(600, 43200), 7200.0, "optimal_interval(600, 43200)", rel=1e-12)
    assert_number(optimal_interval(600, 43200, method="young"), 7200.0, "optimal_interval(600, 43200, 'young')",
                  rel=1e-12)
    assert_number(optimal_interval(600, 43200, "daly"), 6805.555555555555, "optimal_interval(600, 43200, 'daly')",
                  rel=1e-12)
    assert_number(optimal_interval(0.5, 3600.0), 60.0, "optimal_interval(0.5, 3600.0)", rel=1e-12)


@grade(optimal_interval, "correctness", points=2,
       hint="Daly's formula holds while C < 2M; what does it say once a checkpoint costs more than that?")
@given(c=st.floats(1e-3, 1e5), m=st.floats(1.0, 1e7), k=st.sampled_from([4.0, 9.0, 0.25]))
def test_optimal_interval_scale_laws_and_daly(c, m, k):
    """Young's τ grows as √C and √M; Daly's is the corrected formula (τ = M once C >= 2M)."""
    young = optimal_interval(c, m)
    assert_number(young, math.sqrt(2 * c * m), f"optimal_interval({c!r}, {m!r})", rel=1e-12)
    assert_number(optimal_interval(c * k, m), young * math.sqrt(k), f"optimal_interval({c * k!r}, {m!r}) (√C law)",
                  rel=1e-9)
    assert_number(optimal_interval(c, m * k), young * math.sqrt(k), f"optimal_interval({c!r}, {m * k!r}) (√M law)",
                  rel=1e-9)
    assert_number(optimal_interval(c, m, "daly"), daly(c, m), f"optimal_interval({c!r}, {m!r}, 'daly')", rel=1e-9)
    big = 2 * m + c
    assert_number(optimal_interval(big, m, "daly"), m, f"optimal_interval({big!r}, {m!r}, 'daly') with C >= 2M",
                  rel=1e-12)


@grade(optimal_interval, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_optimal_interval_rejects_bad_arguments():
    assert_rejects_all(optimal_interval, [
        ((0.0, 43200), "ckpt_s"),
        ((-600, 43200), "ckpt_s"),
        ((NAN, 43200), "ckpt_s"),
        ((600, 0), "mtbf_s"),
        ((600, INF), "mtbf_s"),
    ])
    assert_rejects(optimal_interval, (600, 43200), "method", {"method": "Young"})
    assert_rejects(optimal_interval, (600, 43200, "optimal"), "method")


# ---- simulate_run ------------------------------------------------------------------------------


def oracle_run(work: float, tau: float, c: float, r: float, failures: list[float]) -> dict[str, float]:
    """The run replanned after each failure: the failure-free plan from (time, segment) as cumulative
    boundaries, the failure located in it by bisection; everything before its segment is saved."""
    n = math.ceil(work / tau)
    lengths = [min(tau, work - j * tau) for j in range(n)]
    t, k, lost, hits = 0.0, 0, 0.0, 0
    for f in sorted(failures):
        f = max(f, t)  # a failure during a restart waits for the restart to end
        ends, starts, clock = [], [], t
        for j in range(k, n):  # the plan from here: segment j computes, then (but the last) writes
            starts.append(clock)
            clock += lengths[j] + (c if j < n - 1 else 0.0)
            ends.append(clock)
        if f >= ends[-1]:
            break
        i = bisect.bisect_right(ends, f)  # the first segment whose write ends after f
        lost += min(f - starts[i], lengths[k + i])
        hits, k, t = hits + 1, k + i, f + r
    total = t + sum(lengths[k:]) + c * (n - 1 - k)
    return {"wall_s": total, "failures": hits, "lost_s": lost, "ckpts": n - 1}


def check_run(got: object, want: dict[str, float], call: str) -> None:
    assert isinstance(got, dict), f"{call} returned {type(got).__name__}, expected a dict with keys {sorted(want)}"
    assert set(want) <= set(got), f"{call} has keys {sorted(got)}, missing {sorted(set(want) - set(got))}"
    for key, value in want.items():
        assert_number(got[key], value, f"{call}[{key!r}]", rel=1e-9, abs_tol=1e-6)


@grade(simulate_run, "correctness", points=3,
       hint="Is there a checkpoint after the last segment? What does a failure during a write cost?")
def test_simulate_run_worked_schedules():
    """10 h of work, τ 2 h, C 10 min, R 5 min, by hand:

    no failure  [0,7200) w[7200,7800) [7800,15000) w… [31200,38400) → 38 400 s, 4 checkpoints;
    at 18 000   inside segment 3 (from 15 600): 2400 s lost, restart to 18 300, 3 segments and 2 writes
                remain → 18 300 + 21 600 + 1200 = 41 100;
    at 7300     inside the first write: its segment (7200 s) is lost, restart to 7600 → 46 000.
    """
    cases = [
        ([], {"wall_s": 38400.0, "failures": 0, "lost_s": 0.0, "ckpts": 4}),
        ([18000.0], {"wall_s": 41100.0, "failures": 1, "lost_s": 2400.0, "ckpts": 4}),
        ([7300], {"wall_s": 46000.0, "failures": 1, "lost_s": 7200.0, "ckpts": 4}),
        # the write of segment 1 lands at 7800: a failure there loses nothing but a restart
        ([7800.0], {"wall_s": 38700.0, "failures": 1, "lost_s": 0.0, "ckpts": 4}),
        # a failure during the restart (18 100 < 18 300) strikes at 18 300: a second restart, nothing more lost
        ([18100.0, 18000.0], {"wall_s": 41400.0, "failures": 2, "lost_s": 2400.0, "ckpts": 4}),
        # the last segment [31 200, 38 400) has no write after it; failures after the end never happen
        ([38000.0, 50000.0], {"wall_s": 45500.0, "failures": 1, "lost_s": 6800.0, "ckpts": 4}),
        ([38400.0], {"wall_s": 38400.0, "failures": 0, "lost_s": 0.0, "ckpts": 4}),
    ]
    for failures, want in cases:
        call = f"simulate_run(36000, 7200, 600, 300, {failures})"
        check_run(simulate_run(36000, 7200, 600, 300, failures), want, call)
    # a last segment shorter than τ: 10 000 s of work in segments of 4000, 4000, 2000; the last one runs
    # [8200, 10 200): a failure at 9000 loses 800 s, the restart ends at 9050, the segment redone → 11 050
    check_run(simulate_run(10000.0, 4000.0, 100.0, 50.0, [9000.0]),
              {"wall_s": 11050.0, "failures": 1, "lost_s": 800.0, "ckpts": 2},
              "simulate_run(10000.0, 4000.0, 100.0, 50.0, [9000.0])")


@st.composite
def runs(draw):
    tau = draw(st.integers(100, 20_000))
    work = draw(st.integers(1, 30 * tau))
    c, r = draw(st.integers(0, 3000)), draw(st.integers(0, 3000))
    horizon = work + (work // tau + 1) * (c + r) * 3
    failures = draw(st.lists(st.integers(0, horizon), max_size=8))
    return float(work), float(tau), float(c), float(r), [float(f) for f in failures]


@grade(simulate_run, "correctness", points=3,
       hint="After a failure, which segments are safe on storage, and where does the job resume?")
@given(run=runs())
def test_simulate_run_matches_replanning_oracle(run):
    """Random runs against a replanning oracle; without failures wall = work + C·(segments − 1)."""
    work, tau, c, r, failures = run
    call = f"simulate_run({work!r}, {tau!r}, {c!r}, {r!r}, {failures})"
    check_run(simulate_run(work, tau, c, r, failures), oracle_run(work, tau, c, r, failures), call)
    segments = math.ceil(work / tau)
    check_run(simulate_run(work, tau, c, r, []),
              {"wall_s": work + c * (segments - 1), "failures": 0, "lost_s": 0.0, "ckpts": segments - 1},
              f"simulate_run({work!r}, {tau!r}, {c!r}, {r!r}, [])")
    got = simulate_run(work, tau, c, r, failures)
    assert got["wall_s"] >= work + c * (segments - 1), f"{call}: failures can only make the run longer, got {got}"


@grade(simulate_run, "correctness", points=2,
       hint="A failure later in the same segment throws away more of that segment: how much more?")
@given(seg=st.integers(0, 4), offset=st.integers(0, 3000), shift=st.integers(1, 3000))
def test_simulate_run_later_failure_loses_more(seg, offset, shift):
    """One failure moved later inside a compute segment costs exactly the shift, in lost_s and wall_s."""
    tau, c, r = 7200.0, 600.0, 300.0
    start = seg * (tau + c)
    early, late = start + offset, start + offset + shift
    a = simulate_run(36000.0, tau, c, r, [early])
    b = simulate_run(36000.0, tau, c, r, [late])
    call = f"simulate_run(36000.0, 7200.0, 600.0, 300.0, [{early}]) vs [{late}]"
    assert_number(a["lost_s"], offset, f"{call}: lost_s of the first", abs_tol=1e-6)
    assert_number(b["lost_s"] - a["lost_s"], shift, f"{call}: difference in lost_s", abs_tol=1e-6)
    assert_number(b["wall_s"] - a["wall_s"], shift, f"{call}: difference in wall_s", abs_tol=1e-6)


def exponential_failures(seed: int, mtbf: float, horizon: float) -> list[float]:
    rng, t, out = random.Random(seed), 0.0, []
    while t < horizon:
        t += rng.expovariate(1 / mtbf)
        out.append(t)
    return out


@grade(simulate_run, "correctness", points=2,
       hint="Run it with exponential failures: does the wall time bottom out near √(2·C·MTBF)?")
def test_simulate_run_young_is_the_optimum():
    """30 days of work, MTBF 12 h, C 600 s, R 300 s, 20 seeds (random.Random(seed).expovariate):
    wall/work 1.3807 (τ 1800), 1.2343 (3600), 1.1964 (7200 = Young), 1.2538 (14 400), 1.4764 (28 800)."""
    work, mtbf = 30 * 86400.0, 43200.0
    failures = [exponential_failures(seed, mtbf, 3 * work) for seed in range(20)]
    want = {1800: 1.3807, 3600: 1.2343, 7200: 1.1964, 14400: 1.2538, 28800: 1.4764}
    ratio = {}
    for tau in want:
        ratio[tau] = sum(simulate_run(work, float(tau), 600.0, 300.0, f)["wall_s"] for f in failures) / 20 / work
        assert_number(ratio[tau], want[tau], f"mean wall/work at τ = {tau} s over 20 seeds", abs_tol=1e-4, rel=0)
    best = sorted(ratio, key=ratio.get)
    young = optimal_interval(600.0, mtbf)
    assert math.isclose(young, 7200, rel_tol=1e-9) and best[0] == 7200, (
        f"wall/work by τ: {ratio}; Young's τ = {young} should be the best")


@grade(simulate_run, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_simulate_run_rejects_bad_arguments():
    assert_rejects_all(simulate_run, [
        ((0.0, 7200, 600, 300, []), "work_s"),
        ((NAN, 7200, 600, 300, []), "work_s"),
        ((36000, 0.0, 600, 300, []), "interval_s"),
        ((36000, -1.0, 600, 300, []), "interval_s"),
        ((36000, 7200, -600, 300, []), "ckpt_s"),
        ((36000, 7200, 600, INF, []), "restart_s"),
    ])
    assert_rejects(simulate_run, (36000, 7200, 600, 300, [100.0, -5.0]), "failure_times[1]")
    assert_rejects(simulate_run, (36000, 7200, 600, 300, [NAN]), "failure_times[0]")


# ---- atomic_save -------------------------------------------------------------------------------


def make_state(seed: int) -> dict:
    g = torch.Generator().manual_seed(seed)
    return {
        "model": {"w": torch.randn(64, 32, generator=g), "b": torch.randn(32, generator=g).to(torch.bfloat16)},
        "optimizer": {"step": seed, "m": torch.randn(64, 32, generator=g, dtype=torch.float64)},
        "rng": torch.randint(0, 255, (16,), generator=g, dtype=torch.uint8),
    }


def assert_state_equal(got: object, want: object, where: str) -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), f"{where}: keys {list(got)}, expected {list(want)}"
        for key in want:
            assert_state_equal(got[key], want[key], f"{where}[{key!r}]")
    elif isinstance(want, torch.Tensor):
        assert isinstance(got, torch.Tensor) and got.dtype == want.dtype and torch.equal(got, want), (
            f"{where}: the reloaded tensor differs from the saved one ({got!r})"
        )
    else:
        assert got == want, f"{where} = {got!r}, expected {want!r}"


def load(path: str) -> dict:
    return torch.load(path, weights_only=True)


def files_in(directory) -> list[str]:
    return sorted(os.listdir(directory))


@grade(atomic_save, "correctness", points=2,
       hint="After the save, can torch.load read back exactly what you saved, and is the directory clean?")
def test_atomic_save_round_trip(tmp_path):
    """Save, reload equal tensors (dtypes kept); save again over it; only the checkpoint is left."""
    path = str(tmp_path / "ckpt.pt")
    for seed in (1, 2):
        state = make_state(seed)
        assert atomic_save(state, path) is None, "atomic_save returns None"
        assert_state_equal(load(path), state, f"torch.load after atomic_save(state{seed}, path)")
        assert files_in(tmp_path) == ["ckpt.pt"], f"after atomic_save the directory holds {files_in(tmp_path)}"


def torn_save(real_save):
    """A torch.save that writes the first half of a real checkpoint, then dies (a full disk, a kill)."""

    def save(obj, f, *args, **kwargs):
        buffer = io.BytesIO()
        real_save(obj, buffer)
        prefix = buffer.getvalue()[: len(buffer.getvalue()) // 2]
        if isinstance(f, str | os.PathLike):
            with open(f, "wb") as out:
                out.write(prefix)
        else:
            f.write(prefix)
            f.flush()
        raise OSError(28, "No space left on device (injected mid-write)")

    return save


@grade(atomic_save, "correctness", points=3,
       hint="If torch.save dies halfway, which file has it been writing into, and who cleans that file up?")
def test_atomic_save_survives_torn_write(tmp_path, monkeypatch):
    """A second save dies mid-write: the first checkpoint still loads, no temporary file is left."""
    path = str(tmp_path / "ckpt.pt")
    first = make_state(1)
    atomic_save(first, path)
    monkeypatch.setattr(torch, "save", torn_save(torch.save))
    with pytest.raises(OSError):
        atomic_save(make_state(2), path)
    monkeypatch.undo()
    assert files_in(tmp_path) == ["ckpt.pt"], (
        f"a save that died left {files_in(tmp_path)}: remove the temporary file before re-raising"
    )
    assert_state_equal(load(path), first, "torch.load(path) after a torn second save (the first state)")


@grade(atomic_save, "correctness", points=2,
       hint="What if the rename itself is refused? Is the old checkpoint touched before the rename?")
def test_atomic_save_survives_failed_rename(tmp_path, monkeypatch):
    path = str(tmp_path / "ckpt.pt")
    first = make_state(3)
    atomic_save(first, path)

    def refuse(*args, **kwargs):
        raise OSError(5, "Input/output error (injected in rename)")

    monkeypatch.setattr(os, "replace", refuse)
    monkeypatch.setattr(os, "rename", refuse)
    with pytest.raises(OSError):
        atomic_save(make_state(4), path)
    monkeypatch.undo()
    assert files_in(tmp_path) == ["ckpt.pt"], f"a refused rename left {files_in(tmp_path)}: remove the temporary file"
    assert_state_equal(load(path), first, "torch.load(path) after a refused rename (the first state)")


@grade(atomic_save, "correctness", points=2,
       hint="Would a reader holding the old checkpoint open see it change under its feet?")
def test_atomic_save_never_writes_in_place(tmp_path, monkeypatch):
    """The new checkpoint is a new file renamed over the old one, from the same directory."""
    path = str(tmp_path / "ckpt.pt")
    atomic_save(make_state(5), path)
    with open(path, "rb") as reader:
        old_bytes, old_inode = reader.read(), os.fstat(reader.fileno()).st_ino
        reader.seek(0)
        renames = []
        real_replace, real_rename = os.replace, os.rename
        monkeypatch.setattr(os, "replace", lambda a, b, **k: (renames.append((a, b)), real_replace(a, b, **k))[1])
        monkeypatch.setattr(os, "rename", lambda a, b, **k: (renames.append((a, b)), real_rename(a, b, **k))[1])
        atomic_save(make_state(6), path)
        monkeypatch.undo()
        assert reader.read() == old_bytes, "the old checkpoint changed under an open reader: it was written in place"
    assert os.stat(path).st_ino != old_inode, "path is the same file as before: write a new file, rename it over path"
    assert renames, "no os.replace/os.rename call: the new checkpoint must be renamed over path"
    for src, dst in renames:
        same = os.path.dirname(os.path.abspath(src)) == os.path.dirname(os.path.abspath(dst))
        assert same, f"rename {src} → {dst}: the temporary file must sit in path's directory (one filesystem)"


@grade(atomic_save, "correctness", points=2,
       hint="A rename is atomic, but is the renamed file's data on disk yet? And the rename itself?")
def test_atomic_save_is_durable(tmp_path, monkeypatch):
    """fsync the temporary file before the rename, and the directory after it."""
    path = str(tmp_path / "ckpt.pt")
    atomic_save(make_state(7), path)
    events = []
    real_fsync, real_replace, real_rename = os.fsync, os.replace, os.rename

    def fsync(fd):
        info = os.fstat(fd if isinstance(fd, int) else fd.fileno())
        events.append(("fsync", info.st_ino, stat.S_ISDIR(info.st_mode)))
        return real_fsync(fd)

    def renamer(real):
        def rename(src, dst, **kwargs):
            events.append(("rename", os.stat(src).st_ino, False))
            return real(src, dst, **kwargs)
        return rename

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", renamer(real_replace))
    monkeypatch.setattr(os, "rename", renamer(real_rename))
    atomic_save(make_state(8), path)
    monkeypatch.undo()
    kinds = [e[0] for e in events]
    assert "rename" in kinds, f"no rename seen ({events}): write a temporary file and os.replace it onto path"
    at = kinds.index("rename")
    renamed = events[at][1]
    assert ("fsync", renamed, False) in events[:at], (
        f"events {events}: the temporary file (inode {renamed}) must be fsynced before it is renamed"
    )
    assert any(kind == "fsync" and is_dir for kind, _, is_dir in events[at:]), (
        f"events {events}: fsync the directory after the rename so the new name survives a power cut"
    )


@grade(atomic_save, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_atomic_save_rejects_bad_arguments(tmp_path):
    path = str(tmp_path / "ckpt.pt")
    assert_rejects(atomic_save, ([("w", torch.zeros(2))], path), "state")
    assert_rejects(atomic_save, ({"w": torch.zeros(2)}, ""), "path")
    assert_rejects(atomic_save, ({"w": torch.zeros(2)}, 3), "path")
    assert files_in(tmp_path) == [], f"a refused call wrote {files_in(tmp_path)}"
