"""Grading results: one :class:`TestResult` per graded test, a :class:`GradeReport` per run, exports.

The plugin writes results as JSON lines the CLI reads back; from a report come the scoreboard,
Gradescope's ``results.json`` and a CSV. Scores are decided here from what the grader observed.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path


class Status(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    TODO = "todo"  # the stub still raises NotImplementedError
    PENDING_GPU = "pending_gpu"  # gpu_perf without a GPU: counts toward neither score nor max
    ERROR = "error"  # the grader could not run the test (its own fault, never the learner's)


class Tier(StrEnum):
    CORRECTNESS = "correctness"
    EFFICIENCY = "efficiency"
    GPU_PERF = "gpu_perf"


# The most characters kept of each text a learner's code can fill. A failure message of megabytes (an exception
# whose text is the whole input) once made a 66 MB results file in batch grading.
TEXT_CAPS = {"message": 2_000, "detail": 20_000, "output": 8_000, "hint": 2_000}


def cap_text(text: str, cap: int) -> str:
    """``text`` cut to ``cap`` characters at most, saying how many were left out."""
    if len(text) <= cap:
        return text
    note = f" … [{len(text) - cap:,} more characters cut]"
    return text[: max(cap - len(note), 0)] + note


@dataclass(frozen=True)
class TestResult:
    """What one graded test found."""

    __test__ = False  # not a pytest test class

    nodeid: str
    unit: str
    exercise: str
    tier: Tier
    points: float
    status: Status
    score: float
    message: str = ""  # first line of the failure, or the TODO
    detail: str = ""  # the rest: hypothesis' falsifying example, replay blob, perf record
    hint: str = ""
    duration_s: float = 0.0
    record: dict[str, object] = field(default_factory=dict)
    kind: str = ""  # how a failed test failed (plugin.FailureKind): nan, out_of_bounds, values, traffic, ...
    output: str = ""  # what the learner's code printed during a failed test (trimmed)
    validation: bool = False  # a bad-argument test (@grade(..., validation=True)): gated like efficiency
    executor: str = ""  # what ran the test's CUDA C++ kernels: "GPU" or the CPU executor ("" for none)

    def __post_init__(self) -> None:
        """Texts the learner's code can fill (exception text, prints) are capped: results stay small."""
        for name, cap in TEXT_CAPS.items():
            object.__setattr__(self, name, cap_text(getattr(self, name), cap))

    @property
    def max_score(self) -> float:
        return 0.0 if self.status is Status.PENDING_GPU else self.points

    @property
    def name(self) -> str:
        return self.nodeid.rsplit("::", 1)[-1]

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_dict(cls, d: dict[str, object]) -> TestResult:
        d = dict(d)
        d["tier"], d["status"] = Tier(d["tier"]), Status(d["status"])
        return cls(**d)  # type: ignore[arg-type]


@dataclass(frozen=True)
class GradeReport:
    """Every result of one grading run of one target."""

    target: str
    results: tuple[TestResult, ...]

    @property
    def score(self) -> float:
        return sum(r.score for r in self.results)

    @property
    def max_score(self) -> float:
        return sum(r.max_score for r in self.results)

    @property
    def pending_gpu(self) -> list[TestResult]:
        return [r for r in self.results if r.status is Status.PENDING_GPU]

    def by_unit(self) -> dict[str, list[TestResult]]:
        out: dict[str, list[TestResult]] = {}
        for r in self.results:
            out.setdefault(r.unit, []).append(r)
        return out

    def by_exercise(self) -> dict[tuple[str, str, Tier], list[TestResult]]:
        out: dict[tuple[str, str, Tier], list[TestResult]] = {}
        for r in self.results:
            out.setdefault((r.unit, r.exercise, r.tier), []).append(r)
        return out


def read_results(path: Path) -> list[TestResult]:
    """Results the plugin wrote, one JSON object per line."""
    lines = path.read_text().splitlines() if path.exists() else []
    return [TestResult.from_dict(json.loads(line)) for line in lines if line.strip()]


def gradescope(report: GradeReport) -> dict[str, object]:
    """Gradescope's results.json. Pending-GPU tests are not graded, so they are listed, not scored."""
    tests = [
        {
            "name": f"{r.unit} · {r.exercise} · {r.tier} · {r.name}",
            "score": round(r.score, 4),
            "max_score": r.points,
            "status": "passed" if r.status is Status.PASSED else "failed",
            "output": "\n".join(x for x in (r.message, r.detail, r.hint and f"Hint: {r.hint}",
                                             r.record and f"Measured: {json.dumps(r.record, sort_keys=True)}") if x),
            "extra_data": {"unit": r.unit, "exercise": r.exercise, "tier": str(r.tier)},
        }
        for r in report.results
        if r.status is not Status.PENDING_GPU
    ]
    pending = [f"{r.unit} · {r.exercise} · {r.name}" for r in report.pending_gpu]
    out: dict[str, object] = {
        "score": round(report.score, 4),
        "max_score": report.max_score,
        "tests": tests,
    }
    if pending:
        out["output"] = f"{len(pending)} gpu_perf test(s) pending GPU (not counted): " + "; ".join(pending)
        out["extra_data"] = {"pending_gpu": pending}
    return out


def write_gradescope(report: GradeReport, path: Path) -> None:
    path.write_text(json.dumps(gradescope(report), indent=2, ensure_ascii=False) + "\n")


def write_csv(report: GradeReport, path: Path) -> None:
    """One row per test (unit, exercise, tier, test, status, score, max)."""
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["unit", "exercise", "tier", "test", "status", "score", "max_score", "message"])
        for r in report.results:
            w.writerow([r.unit, r.exercise, r.tier, r.name, r.status, r.score, r.max_score, r.message])


def totals(results: Iterable[TestResult]) -> tuple[float, float]:
    rs = list(results)
    return sum(r.score for r in rs), sum(r.max_score for r in rs)
