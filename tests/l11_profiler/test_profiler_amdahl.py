"""L11 · Amdahl's law: what a local speedup buys the whole step (lecture §0.2)."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st
from l11_traces import assert_dict

from grader.kit import assert_rejects_all, grade, learner

UNIT = "l11_profiler"
amdahl = learner(UNIT, "profiler", "amdahl")
NAN, INF = float("nan"), float("inf")


# ---- amdahl ------------------------------------------------------------------------------------


def amdahl_oracle(total: float, part: float, new: float) -> dict[str, float]:
    t, p, q = Fraction(total), Fraction(part), Fraction(new)
    n = t - p + q
    return {"new_total_s": float(n), "speedup": float(t / n) if n else INF, "time_saved_fraction": float(1 - n / t),
            "max_speedup": float(t / (t - p)) if t != p else INF}


AMDAHL_WHY = {"new_total_s": "total − part + part_new", "speedup": "total / new_total, of the whole step",
              "time_saved_fraction": "1 − new_total / total", "max_speedup": "total / (total − part): the part at 0 s"}


@grade(amdahl, "correctness", points=2,
       hint="The attention kernel got 2.67× faster; what fraction of the 850 ms step did it ever occupy?")
def test_amdahl_lecture_numbers():
    """§0.2: attention 40 → 15 ms in an 850 ms step: 825 ms, under 3 % saved, never more than 1.049×."""
    want = {"new_total_s": 0.825, "speedup": 1.030303, "time_saved_fraction": 0.029412, "max_speedup": 1.049383}
    assert_dict(amdahl(0.850, 0.040, 0.015), want, "amdahl(0.850, 0.040, 0.015)", AMDAHL_WHY, rel=1e-12, abs_tol=5e-7)
    got = amdahl(0.850, 0.730, 0.0)
    assert_dict(got, amdahl_oracle(0.850, 0.730, 0.0), "amdahl(0.850, 0.730, 0.0): the DataLoader wait removed",
                AMDAHL_WHY)


@grade(amdahl, "correctness", points=2,
       hint="What happens to max_speedup when the part is the whole step, and to speedup when the part gets slower?")
@settings(max_examples=30)
@given(total=st.integers(1, 10**6), part_pct=st.integers(0, 100), new_pct=st.integers(0, 300))
def test_amdahl_closed_form(total, part_pct, new_pct):
    """Any step, any part (the whole step included), faster or slower: against exact fractions."""
    total_s = total / 1000
    part_s = total_s * part_pct / 100
    part_new_s = part_s * new_pct / 100
    call = f"amdahl({total_s!r}, {part_s!r}, {part_new_s!r})"
    assert_dict(amdahl(total_s, part_s, part_new_s), amdahl_oracle(total_s, part_s, part_new_s), call, AMDAHL_WHY,
                rel=1e-9, abs_tol=1e-12)


@grade(amdahl, "correctness", points=1, validation=True,
       hint="Raise ValueError naming the argument: times are finite reals, the step > 0, the part inside the step.")
def test_amdahl_rejects_bad_arguments():
    assert_rejects_all(amdahl, [
        ((0.0, 0.0, 0.0), "total_s"), ((-1.0, 0.1, 0.1), "total_s"), ((NAN, 0.1, 0.1), "total_s"),
        ((INF, 0.1, 0.1), "total_s"), ((True, 0.1, 0.1), "total_s"), (("0.85", 0.04, 0.015), "total_s"),
        ((0.85, -0.04, 0.015), "part_s"), ((0.85, 0.9, 0.015), "part_s"), ((0.85, NAN, 0.015), "part_s"),
        ((0.85, 0.04, -0.015), "part_new_s"), ((0.85, 0.04, INF), "part_new_s"), ((0.85, 0.04, None), "part_new_s"),
    ])
