"""``python -m grader drill``: run a session, ``drill stats``, ``drill build`` (the arguments and their handling)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from grader.drill.template import TOPICS
from grader.i18n import _

BUILD_PER_TEMPLATE = 40


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    d = sub.add_parser("drill", help=_("interview drills: timed, randomized questions over the course, with history"),
                       description=_("`drill` runs a session; `drill stats` shows your history; `drill build` "
                                     "(course authors) precomputes the question bank the release ships."))
    d.add_argument("action", nargs="?", choices=["run", "stats", "build"], default="run")
    d.add_argument("--topic", "-t", action="extend", nargs="+", default=[], choices=TOPICS,
                   help=_("only these topics (--topic memory flops)"))
    d.add_argument("--n", type=int, default=10, help=_("questions in the session (default 10; mock 12)"))
    d.add_argument("--minutes", type=float, help=_("stop asking new questions after M minutes (mock: 45)"))
    d.add_argument("--seed", type=int, help=_("the session's random seed (same seed and history: same questions)"))
    d.add_argument("--mock", action="store_true",
                   help=_("mock interview: 45 minutes, mixed topics of rising difficulty, then system design, report"))
    d.add_argument("--designs", type=int, default=0, help=_("system-design questions after the numeric ones"))
    d.add_argument("--answers", metavar="FILE", help=_("answers from FILE, one per line (non-interactive)"))
    d.add_argument("--json", action="store_true", help=_("print the session (or stats) as JSON on stdout"))
    d.add_argument("--export", choices=["csv"], help=_("stats: every recorded answer as CSV (stdout, or --out)"))
    d.add_argument("--out", help=_("stats --export: write here; build: the bank data file to write"))
    d.add_argument("--per-template", type=int, default=BUILD_PER_TEMPLATE,
                   help=_("build: instances per template (default {n})").format(n=BUILD_PER_TEMPLATE))
    d.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    if args.action == "build":
        return _build(args)
    if args.action == "stats":
        return _stats(args)
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    from grader.drill import session

    options = session.Options(tuple(args.topic), n=session.MOCK_QUESTIONS if args.mock and args.n == 10 else args.n,
                              minutes=args.minutes, seed=args.seed, mock=args.mock, designs=args.designs)
    answers = Path(args.answers).read_text().splitlines() if args.answers else None
    report = _session(options, answers, quiet=args.json)
    if args.json:
        print(json.dumps(report, indent=1, default=str))
    return 0


def _session(options: Any, answers: Sequence[str] | None = None, *, quiet: bool = False) -> dict[str, Any]:
    """One session: typed in the terminal, or ``answers`` one per line (``quiet``: print nothing); its report."""
    from grader.drill import session
    from grader.drill.store import Store

    io: session.IO = session.Terminal() if answers is None else session.Scripted(list(answers),
                                                                                    None if quiet else sys.stdout)
    store = Store()
    try:
        return session.Session(options, io, store).run()
    finally:
        store.close()


def _stats(args: argparse.Namespace) -> int:
    from grader.drill import store as history

    db = history.Store()
    try:
        if args.export:
            text = db.export_csv()
            if args.out:
                Path(args.out).write_text(text)
                print(_("wrote {path} ({n} answers)").format(path=args.out, n=text.count(chr(10)) - 1))
            else:
                sys.stdout.write(text)
            return 0
        rows = db.attempts()
        sessions = db.session_count()
        cards = db.cards()
    finally:
        db.close()
    stats = history.topic_stats(rows)
    if args.json:
        print(json.dumps({"sessions": sessions, "answers": len(rows), "topics": [
            {"topic": s.topic, "attempts": s.attempts, "correct": s.correct, "accuracy": s.accuracy,
             "median_s": s.median_s} for s in stats], "boxes": _boxes(cards)}, indent=1))
        return 0
    if not rows:
        print(_("no drill history yet in {path}: run `make drill`").format(path=history.db_path()))
        return 0
    print(_("{n} answers in {sessions} sessions ({path})").format(n=len(rows), sessions=sessions,
                                                               path=history.db_path()))
    print("\n".join(history.chart(stats)))
    weak = [s for s in stats if s.accuracy < 1][:3]
    if weak:
        print(_("weakest topics: ") + ", ".join(f"{_(s.topic)} ({s.accuracy:.0%})" for s in weak) +
              f"  → make drill ARGS=\"{' '.join('--topic ' + s.topic for s in weak)}\"")
    print(_("Leitner boxes (1 = comes back next session): ") +
          ", ".join(_("box {box}: {n}").format(box=b, n=n) for b, n in sorted(_boxes(cards).items())))
    return 0


def _boxes(cards: dict) -> dict[int, int]:  # type: ignore[type-arg]
    out: dict[int, int] = {}
    for c in cards.values():
        out[c.box] = out.get(c.box, 0) + 1
    return out


def _build(args: argparse.Namespace) -> int:
    from grader.drill import bank, instances, solutions

    templates = bank.all_templates()
    missing = sorted({"/".join(t.solution[:2]) for t in templates if not solutions.available(t.solution)})
    if missing:
        print(f"drill build needs the course's solutions/ (missing: {', '.join(missing)}): run it in the course "
              "repository", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else instances.DATA_FILE
    t0 = time.perf_counter()
    per_topic = instances.build(templates, args.per_template, out)  # in English, whatever the locale
    print(f"wrote {out} ({out.stat().st_size / 1024:.0f} KiB): {len(templates)} templates × {args.per_template} "
          f"instances in {time.perf_counter() - t0:.1f} s; templates per topic: "
          + ", ".join(f"{k} {v}" for k, v in sorted(per_topic.items())))
    designs = bank.all_designs()
    print(f"system-design questions: {len(designs)} (" + ", ".join(
        f"{k} {sum(1 for d in designs if d.topic == k)}" for k in sorted({d.topic for d in designs})) + ")")
    return 0
