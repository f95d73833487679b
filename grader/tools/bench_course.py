"""What the course's self-test costs, unit by unit: CPU seconds (user+sys) of the grading processes.

The self-test (tests/grader/test_course.py) grades, for every unit, solutions/, exercises/ and each
known implementation. ``runner`` grades them as the self-test does (:mod:`grader.authoring.corpus`:
one process per chunk of a unit's targets, two at a time); ``--old`` also grades them the old way,
``grader.api.grade`` once per target, one after another, and ``--compare`` checks both give every test
the same status and score. CPU seconds hold up on a shared machine; wall seconds do not.

    python -m grader.tools.bench_course [-u 10 23 24] [--old] [--compare] [--workers 2]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from collections.abc import Sequence

from grader import api
from grader.authoring import corpus
from grader.core.results import GradeReport


def cost_table(costs: Sequence[corpus.UnitCost]) -> list[str]:
    """One line per unit: gradings, runner processes, CPU and wall seconds, what was graded again."""
    lines = [f"{'unit':<26} {'targets':>7} {'runners':>7} {'CPU s':>8} {'wall s':>8}  regraded alone"]
    for c in costs:
        again = f"{len(c.regraded)} ({c.regrade_wall_s:.0f} s wall)" if c.regraded else "-"
        lines.append(f"{c.unit:<26} {c.gradings:>7} {c.runners:>7} {c.cpu_s:>8.1f} {c.wall_s:>8.1f}  {again}")
    total = sum(c.cpu_s for c in costs)
    lines.append(f"{'total':<26} {sum(c.gradings for c in costs):>7} {sum(c.runners for c in costs):>7} "
                 f"{total:>8.1f}")
    return lines


def grade_old(gradings: Sequence[corpus.Grading]) -> tuple[dict[str, GradeReport | Exception], dict[str, float]]:
    """Every grading by ``api.grade``, one process each, one after another; reports and CPU seconds per unit."""
    reports: dict[str, GradeReport | Exception] = {}
    cpu: dict[str, float] = {}
    for g in gradings:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        reports[g.key] = corpus._grade_alone(g, corpus.STALL_S)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu[g.unit] = cpu.get(g.unit, 0.0) + (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return reports, cpu


def differences(old: dict[str, GradeReport | Exception], new: dict[str, GradeReport | Exception],
                *, messages: bool = False) -> list[str]:
    """Where the two ways disagree on a test's status or score (or one raised and the other did not);
    ``messages``: on its message and detail instead (the target's folder written as <target>)."""
    found = []
    for key, a in old.items():
        b = new[key]
        if isinstance(a, Exception) or isinstance(b, Exception):
            if type(a) is not type(b):
                found.append(f"{key}: old {type(a).__name__}, runner {type(b).__name__}")
            continue
        sa, sb = _outcomes(a, messages), _outcomes(b, messages)
        found += [f"{key} {n}: old {sa.get(n)}, runner {sb.get(n)}" for n in sorted(sa.keys() | sb.keys())
                  if sa.get(n) != sb.get(n)]
    return found


def _outcomes(report: GradeReport, messages: bool) -> dict[str, tuple]:
    if not messages:
        return {r.nodeid: (r.status.value, r.score) for r in report.results}
    return {r.nodeid: tuple(t.replace(report.target, "<target>") for t in (r.message, r.detail))
            for r in report.results}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.tools.bench_course", description=__doc__.split("\n\n")[0])
    parser.add_argument("-u", "--unit", nargs="*", default=[], help="units (default: all)")
    parser.add_argument("--old", action="store_true", help="also grade the old way: api.grade per target")
    parser.add_argument("--compare", action="store_true", help="--old, and check both agree on every test")
    parser.add_argument("--workers", type=int, default=corpus.WORKERS)
    parser.add_argument("--top", type=int, default=10, help="list the N targets that cost the most CPU")
    args = parser.parse_args(argv)
    units = api.resolve_units(args.unit)
    gradings = corpus.course(units)
    start = time.monotonic()
    run = corpus.grade(gradings, workers=args.workers)
    print(f"runner: {len(gradings)} targets in {time.monotonic() - start:.0f} s wall, {args.workers} at a time")
    print("\n".join(cost_table([run.costs[u] for u in units])))
    top = sorted(run.target_cpu_s.items(), key=lambda kv: -kv[1])[:args.top]
    print("\ncostliest targets (CPU s in the runner, without its start): " + ", ".join(f"{k} {v:.1f}" for k, v in top))
    if not (args.old or args.compare):
        return 0
    start = time.monotonic()
    old, cpu = grade_old(gradings)
    print(f"\nold (api.grade per target, one at a time): {time.monotonic() - start:.0f} s wall")
    for u in units:
        print(f"{u:<26} {cpu[u]:>8.1f} CPU s   runner/old {run.costs[u].cpu_s / cpu[u]:.2f}")
    if args.compare:
        diff = differences(old, run.reports)
        tests = sum(len(r.results) for r in old.values() if isinstance(r, GradeReport))
        print(f"\ncompared {len(old)} targets, {tests} test results: {len(diff)} differ in status or score")
        print("\n".join(diff[:50]))
        texts = differences(old, run.reports, messages=True)
        print(f"{len(texts)} differ in message or detail (not a verdict: the examples Hypothesis draws)")
        print("\n".join(t[:300] for t in texts[:10]))
        return 1 if diff else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
