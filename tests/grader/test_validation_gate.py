"""No points for refusing: a bad-argument test (``@grade(..., validation=True)``) scores only while the same
exercise's values tests pass (grader.core.failures.gate), so a function that only raises ValueError scores 0."""

from __future__ import annotations

import pytest

from grader import api
from grader.authoring import known
from grader.core.results import Status, Tier

# One exercise per ledger unit whose known_wrong/only_refuses_<exercise>.py raises ValueError naming every parameter.
REFUSED = {"l27_memory_ledger": "kv_cache_bytes", "l36_capacity_planning": "cluster_size",
           "l41_post_training": "gae_advantages"}


def test_every_exercise_with_validation_tests_has_values_tests():
    """Validation points are gated by the exercise's other correctness tests: without any, refusing scores."""
    tests = api.manifest()
    assert tests, "no grading tests collected"
    checked: dict[tuple[str, str], bool] = {}
    for t in tests:
        if t["tier"] == Tier.CORRECTNESS.value:
            key = (str(t["unit"]), str(t["exercise"]))
            checked[key] = checked.get(key, False) or not t["validation"]
    ungated = sorted(f"{u}: {e}" for (u, e), has_values in checked.items() if not has_values)
    assert not ungated, ("these exercises have only validation=True correctness tests, so a function that only "
                         "raises ValueError gets full marks; add a test of their values:\n  " + "\n  ".join(ungated))


def _only_refuses(unit: str, exercise: str) -> known.KnownImpl:
    found = [k for k in known.known_impls(unit, "known_wrong") if k.path.stem == f"only_refuses_{exercise}"]
    assert found, f"tests/{unit}/known_wrong/only_refuses_{exercise}.py is missing (it raises ValueError, always)"
    return found[0]


@pytest.mark.slow
def test_only_refusing_scores_zero(tmp_path):
    """Issue 13 class 5: raising ValueError naming every parameter passed every bad-argument test (16/34 on l27)."""
    for unit, exercise in REFUSED.items():
        known.build_target(_only_refuses(unit, exercise), tmp_path)
    report = api.grade(tmp_path, units=list(REFUSED), exercises=list(REFUSED.values()))
    for unit, exercise in REFUSED.items():
        rs = [r for r in report.results if r.unit == unit and r.exercise == exercise]
        refused = [r for r in rs if r.validation]
        table = "\n".join(f"  {r.name}: {r.status} {r.score:g}/{r.points:g} {r.message[:100]}" for r in rs)
        assert refused and all(r.status is Status.FAILED and "gated_by" in r.record for r in refused), (
            f"{unit}:{exercise}: its validation tests should pass on their own and be gated (0 points):\n{table}")
        assert sum(r.score for r in rs) == 0, f"{unit}:{exercise} scores points by refusing every call:\n{table}"
