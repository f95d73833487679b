"""Reports and exports: Gradescope's results.json schema, CSV, the scoreboard."""

from __future__ import annotations

import csv
import io
import json

from rich.console import Console

from grader.core import failures, results
from grader.core.results import GradeReport, Status, TestResult, Tier
from grader.learner import scoreboard


def _r(name: str, status: Status, score: float, points: float = 2, tier: Tier = Tier.CORRECTNESS, **kw) -> TestResult:
    return TestResult(nodeid=f"tests/l23_x/test_k.py::{name}", unit="l23_x", exercise="softmax_fused", tier=tier,
                      points=points, status=status, score=score, **kw)


REPORT = GradeReport("exercises", (
    _r("test_ok", Status.PASSED, 2),
    _r("test_bad", Status.FAILED, 0, message="3 of 8 elements differ", detail="Falsifying: x=1", hint="Mask?"),
    _r("test_todo", Status.TODO, 0, tier=Tier.EFFICIENCY, message="TODO: write the kernel"),
    _r("test_speed", Status.PENDING_GPU, 0, points=5, tier=Tier.GPU_PERF, message="pending GPU: no CUDA"),
))


def test_pending_gpu_counts_toward_neither_score_nor_max():
    assert (REPORT.score, REPORT.max_score) == (2, 6)
    assert [r.name for r in REPORT.pending_gpu] == ["test_speed"]


def test_gradescope_schema():
    gs = results.gradescope(REPORT)
    assert (gs["score"], gs["max_score"]) == (2, 6)
    assert [t["status"] for t in gs["tests"]] == ["passed", "failed", "failed"]
    for t in gs["tests"]:
        assert set(t) == {"name", "score", "max_score", "status", "output", "extra_data"}
        assert set(t["extra_data"]) == {"unit", "exercise", "tier"} and t["extra_data"]["exercise"] == "softmax_fused"
    bad = gs["tests"][1]
    assert bad["output"] == "3 of 8 elements differ\nFalsifying: x=1\nHint: Mask?"
    assert "pending GPU" in gs["output"] and gs["extra_data"]["pending_gpu"] == ["l23_x · softmax_fused · test_speed"]
    json.dumps(gs)  # serializable


def test_csv_has_one_row_per_test(tmp_path):
    path = tmp_path / "r.csv"
    results.write_csv(REPORT, path)
    rows = list(csv.DictReader(path.open()))
    assert [r["status"] for r in rows] == ["passed", "failed", "todo", "pending_gpu"]
    assert rows[3]["max_score"] == "0.0"


def test_results_round_trip_through_json_lines(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(r.to_json() for r in REPORT.results) + "\n")
    assert tuple(results.read_results(path)) == REPORT.results


def test_validation_round_trips_and_defaults_to_false():
    refused = _r("test_refuses", Status.PASSED, 1, points=1, validation=True)
    assert TestResult.from_dict(json.loads(refused.to_json())) == refused
    old = {k: v for k, v in json.loads(REPORT.results[0].to_json()).items() if k != "validation"}
    assert TestResult.from_dict(old).validation is False, "a result line written before validation= still reads"


def test_gate_takes_validation_points_while_values_are_wrong():
    wrong = _r("test_values", Status.FAILED, 0, message="f(2) = 5")
    refused = _r("test_refuses", Status.PASSED, 1, points=1, validation=True)
    gated = failures.gate([wrong], refused)
    assert (gated.status, gated.score, gated.kind, gated.record) == (
        Status.FAILED, 0.0, "gated", {"gated_by": wrong.nodeid})
    assert gated.message == ("not scored while `softmax_fused` fails its correctness tests (first: test_values); "
                             "this validation test itself passed")
    todo = _r("test_values", Status.TODO, 0, message="TODO")
    assert failures.gate([todo], refused).score == 0, "a stub's TODO gates too"


def test_gate_keeps_validation_points_of_right_values():
    right = _r("test_values", Status.PASSED, 2)
    refused = _r("test_refuses", Status.PASSED, 1, points=1, validation=True)
    other_refusal = _r("test_refuses_more", Status.FAILED, 0, points=1, validation=True)
    other_exercise = TestResult(nodeid="tests/l23_x/test_k.py::test_o", unit="l23_x", exercise="other",
                                tier=Tier.CORRECTNESS, points=1, status=Status.FAILED, score=0)
    assert failures.gate_all([right, other_refusal, other_exercise, refused])[3] == refused
    plain = _r("test_more_values", Status.PASSED, 2)
    assert failures.gate([_r("test_values", Status.FAILED, 0)], plain) == plain, "values tests are never gated"
    fast = _r("test_fast", Status.PASSED, 2, tier=Tier.EFFICIENCY)
    assert failures.gate([other_refusal], fast).kind == "gated", "efficiency waits for every correctness test"


def test_scoreboard_shows_rows_failures_todo_and_pending():
    out = io.StringIO()
    scoreboard.render(REPORT, Console(file=out, width=160))
    text = out.getvalue()
    assert "FAIL" in text and "3 of 8 elements differ" in text and "Mask?" in text
    assert "TODO" in text and "pending GPU" in text and "total: 2/6" in text
    assert "1 test(s), 5 points, pending GPU" in text


def test_learner_text_is_printed_literally_not_as_markup():
    """Square brackets vanished from messages (`warp_totals[lane]` shown as `warp_totals`): rich read them as markup."""
    message = "warp_totals[lane] = 3, expected s[tid] · [bold]x[/bold] · a[i][j]"
    report = GradeReport("exercises", (
        _r("test_bad", Status.FAILED, 0, message=message, detail="Falsifying: x[0]=1", hint="Is [red] a tag?"),))
    out = io.StringIO()
    scoreboard.render(report, Console(file=out, width=400, color_system=None))
    text = out.getvalue()
    assert text.count(message) >= 3, text  # the table row, the failure under the table, and `next:`
    assert "Falsifying: x[0]=1" in text and "Is [red] a tag?" in text


def test_next_follows_the_order_the_units_readme_names_its_exercises():
    """Issue 35: in L23 `next:` pointed at the numba exercise (its test file comes first alphabetically) while the
    README teaches the Triton softmax first."""
    def todo(exercise: str) -> TestResult:
        return TestResult(nodeid=f"tests/l23_online_softmax/t.py::test_{exercise}", unit="l23_online_softmax",
                          exercise=exercise, tier=Tier.CORRECTNESS, points=1, status=Status.TODO, score=0)

    results = [todo("block_sum"), todo("softmax_row_stats"), todo("online_softmax_state"), todo("softmax_fused")]
    assert scoreboard.next_exercise(results).exercise == "online_softmax_state"
    assert scoreboard.readme_position("l23_online_softmax", "softmax_fused") < \
        scoreboard.readme_position("l23_online_softmax", "block_sum")
    assert scoreboard.readme_position("l23_x", "softmax_fused") > 10**9, "no README: the tests' order"
