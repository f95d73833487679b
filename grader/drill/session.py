"""One drill session: a visible clock, one question at a time, the worked derivation after each answer.

The questions come from :mod:`grader.drill.select` (due cards first), their instances from the live
solutions/ or the bank data file, the answers from a terminal (:class:`Terminal`) or a file
(:class:`Scripted`, ``--answers``); every answer is recorded in the history (:mod:`grader.drill.store`).
A mock interview (``--mock``) asks numeric questions of rising difficulty, then system-design
questions, within 45 minutes, and ends with a report.
"""

from __future__ import annotations

import os
import random
import shlex
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from grader.drill import bank, instances, quantities, rubric, select, solutions
from grader.drill.instances import Instance
from grader.drill.store import Store
from grader.drill.template import Design, Template, run_total
from grader.i18n import _, language, wrap

MOCK_MINUTES = 45
MOCK_QUESTIONS = 12
MOCK_DESIGNS = 2
WIDTH = 100  # terminal columns of a question at most (a Chinese character takes two)


def width() -> int:
    """Columns a question wraps to: :data:`WIDTH`, or fewer in a narrower terminal (``COLUMNS`` or the tty's)."""
    return max(20, min(WIDTH, shutil.get_terminal_size((WIDTH + 1, 24)).columns - 1))
QUIT = ("q", "quit", "exit", "退出")
SKIP = ("", "skip", "?", "pass", "跳过", "？")


@dataclass
class Options:
    topics: tuple[str, ...] = ()
    n: int = 10
    minutes: float | None = None
    seed: int | None = None
    mock: bool = False
    designs: int = 0  # system-design questions after the numeric ones (a mock interview asks MOCK_DESIGNS)


class Clock:
    """Elapsed and remaining time of a session, shown before every question and in every prompt."""

    def __init__(self, minutes: float | None, now: Callable[[], float] = time.monotonic) -> None:
        self.now, self.start, self.limit = now, now(), minutes * 60 if minutes else None

    def elapsed(self) -> float:
        return self.now() - self.start

    def over(self, reserve_s: float = 0.0) -> bool:
        return self.limit is not None and self.elapsed() >= self.limit - reserve_s

    def label(self) -> str:
        e = _mmss(self.elapsed())
        return f"⏱ {e} / {_mmss(self.limit)}" if self.limit else f"⏱ {e}"


def _mmss(s: float) -> str:
    s = max(0, int(s))
    return f"{s // 60:02d}:{s % 60:02d}"


class Terminal:
    """Questions on stdout, answers typed on stdin; a system design in a multiline prompt or $EDITOR."""

    def __init__(self, out: TextIO | None = None) -> None:
        import sys

        self.out = out or sys.stdout

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def ask(self, prompt: str, clock: Clock | None = None) -> str | None:
        """One line typed; on a terminal the ``[⏱ mm:ss]`` that starts ``prompt`` ticks while the candidate types."""
        ticker = _Ticker(self.out, clock) if clock is not None and self.out.isatty() else None
        try:
            return input(prompt)
        except EOFError:
            return None
        finally:
            if ticker is not None:
                ticker.stop()

    def ask_block(self, prompt: str) -> str | None:
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
        self.say(prompt)
        self.say(_("  Type your answer; a line with a single '.' ends it (or type 'e' alone to write it in "
                   "{editor}).").format(editor=editor) if editor else
                 _("  Type your answer; a line with a single '.' ends it."))
        lines: list[str] = []
        while True:
            line = self.ask("  | ")
            if line is None or line.strip() == ".":
                break
            if not lines and line.strip() == "e" and editor:
                return _edit(editor)
            lines.append(line)
        return "\n".join(lines) if lines or line is not None else None


class _Prefetch:
    """Draws the next question's instance on a background thread while the candidate answers this one: a
    question whose graded function imports torch (the kernel units) loads meanwhile. One at a time, in order,
    so the same seed draws the same instances; a session that ends early loads nothing more."""

    def __init__(self, templates: list[Template], rng: random.Random) -> None:
        self.templates, self.rng = templates, rng
        self.pending = self._start(0) if templates else None

    def _start(self, i: int) -> tuple[threading.Thread, dict[str, Instance | str | None]]:
        box: dict[str, Instance | str | None] = {}
        thread = threading.Thread(target=self._draw, args=(i, box), daemon=True)
        thread.start()
        return thread, box

    def _draw(self, i: int, box: dict[str, Instance | str | None]) -> None:
        t = self.templates[i]
        try:
            box["v"] = instances.draw(t, self.rng)
        except Exception as exc:  # a broken solution or bank entry skips its question, not the session
            box["v"] = _("{id} skipped: drawing an instance raised {error}").format(
                id=t.id, error=f"{type(exc).__name__}: {exc}")

    def get(self, i: int) -> Instance | str | None:
        """Instance ``i`` (called for 0, 1, 2, ... in order); starts drawing ``i + 1``."""
        assert self.pending is not None
        thread, box = self.pending
        thread.join()
        self.pending = self._start(i + 1) if i + 1 < len(self.templates) else None
        return box.get("v")


class _Ticker:
    """Rewrites the clock at the start of the prompt's line once a second (save cursor, CR, label, restore)."""

    def __init__(self, out: TextIO, clock: Clock) -> None:
        self.out, self.clock, self.done = out, clock, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.done.wait(1.0):
            self.out.write(f"\0337\r[{self.clock.label()}]\0338")
            self.out.flush()

    def stop(self) -> None:
        self.done.set()
        self.thread.join()
        self.out.write("\r\033[K")  # a tick that landed after Enter would sit on the fresh line: clear it
        self.out.flush()


def _edit(editor: str) -> str:
    with tempfile.NamedTemporaryFile("w+", suffix=".md", delete=False) as f:
        f.write("\n")
        name = f.name
    try:
        subprocess.run([*shlex.split(editor), name], check=False)
        return Path(name).read_text()
    finally:
        os.unlink(name)


class Scripted:
    """Answers from a file, one per line (a design's answer on one line, ``\\n`` for line breaks, then one
    y/n line per self-scored rubric point); output to ``out`` or nowhere (``--json``)."""

    def __init__(self, lines: list[str], out: TextIO | None) -> None:
        self.lines: Iterator[str] = iter(lines)
        self.out = out

    def say(self, text: str = "") -> None:
        if self.out is not None:
            print(text, file=self.out, flush=True)

    def ask(self, prompt: str, clock: Clock | None = None) -> str | None:
        answer = next(self.lines, None)
        self.say(f"{prompt}{answer if answer is not None else _('(no more answers)')}")
        return answer

    def ask_block(self, prompt: str) -> str | None:
        self.say(prompt)
        answer = self.ask("  | ")
        return None if answer is None else answer.replace("\\n", "\n")


IO = Terminal | Scripted


@dataclass
class Session:
    options: Options
    io: IO
    store: Store
    results: list[dict[str, Any]] = field(default_factory=list)
    t0: float = 0.0
    first_question_s: float = 0.0
    now: Callable[[], float] = time.monotonic  # the session clock's time source (tests fake it)

    def run(self) -> dict[str, Any]:
        self.t0 = time.perf_counter()
        o = self.options
        seed = o.seed if o.seed is not None else random.SystemRandom().randrange(2**31)
        rng = random.Random(seed)
        minutes = o.minutes or (MOCK_MINUTES if o.mock else None)
        pool = [t for t in bank.all_templates() if (not o.topics or t.topic in o.topics) and instances.servable(t)]
        source = "live" if pool and all(solutions.available(t.solution) for t in pool) else "bank"
        sid = self.store.start_session("mock" if o.mock else "drill", seed, source)
        cards = self.store.cards()
        chosen = (select.mock if o.mock else select.pick)(pool, cards, sid, o.n, rng)
        designs = select.mock_designs(_designs(o.topics), MOCK_DESIGNS if o.mock else o.designs, rng)
        clock = Clock(minutes, self.now)
        self._header(sid, len(chosen), len(designs), minutes, source, seed)
        if not chosen and not designs:
            self.io.say(_("no question to ask: no template of {topics} has a solution in solutions/ or instances in "
                          "the bank data file (python -m grader drill build writes it)").format(
                topics=", ".join(o.topics) if o.topics else _("any topic")))
        reserve = sum(d.minutes for d in designs) * 60 if o.mock else 0.0
        stopped = self._numeric(chosen, rng, clock, sid, reserve)
        if not stopped:
            for i, d in enumerate(designs, 1):
                if not self._design(d, i, len(designs), clock, sid):
                    break
        self.store.end_session(sid)
        report = self._report(sid, clock, seed, source, mock=o.mock)
        return report

    # --- numeric, choice and ordering questions ----------------------------------------------------------
    def _header(self, sid: int, n: int, k: int, minutes: float | None, source: str, seed: int) -> None:
        what = (_("{n} question") if n == 1 else _("{n} questions")).format(n=n)
        if k:
            what += (_(" + {k} system design") if k == 1 else _(" + {k} system designs")).format(k=k)
        limit = _(", {minutes} minutes").format(minutes=f"{minutes:g}") if minutes else ""
        served = _("the course's solution functions") if source == "live" else _("the precomputed bank")
        mock = _("mock interview, ") if self.options.mock else ""
        self.io.say(_("Drill session {sid} ({mock}{what}{limit}; answers from {served}; seed {seed})").format(
            sid=sid, mock=mock, what=what, limit=limit, served=served, seed=seed))
        self.io.say(_("Type answers with units (140 GB, 2.5 ms, 38.4 days, 3/19); Enter skips, q quits."))

    def _numeric(self, chosen: list[Template], rng: random.Random, clock: Clock, sid: int, reserve: float) -> bool:
        """Ask the templates in order; True when the candidate quit (or the answers ran out)."""
        drawn = _Prefetch(chosen, rng)
        for i, t in enumerate(chosen, 1):
            if clock.over(reserve):
                self.io.say("\n" + _("{clock}  time is up for questions.").format(clock=clock.label()))
                return False
            inst = drawn.get(i - 1)
            if not isinstance(inst, Instance):
                if inst:
                    self.io.say(f"\n  ({inst})")
                continue
            if not self.first_question_s:
                self.first_question_s = time.perf_counter() - self.t0
            if not self._ask(t, inst, f"Q{i}/{len(chosen)}", clock, sid):
                return True
        return False

    def _ask(self, t: Template, inst: Instance, where: str, clock: Clock, sid: int) -> bool:
        """One question: prompt, answer, verdict, derivation, history; False when the candidate quit."""
        self.io.say("\n" + _("{clock}  {where} · {topic} · difficulty {difficulty} · {id}").format(
            clock=clock.label(), where=where, topic=_(t.topic), difficulty=t.difficulty, id=t.id))
        shown = shown_prompt(t, inst)
        self.io.say(wrap(shown, width()))
        for j, opt in enumerate(inst.options):
            self.io.say(f"   {quantities.LETTERS[j]}) {_(opt)}")
        hint = {"choice": _("a letter"), "order": _("the letters in order")}.get(t.kind) or \
            _("e.g. in {units}").format(units=", ".join(t.accept[:3]) or _("a number"))
        start = clock.elapsed()
        typed = self.io.ask(_("[{clock}] answer ({hint}) > ").format(clock=clock.label(), hint=hint), clock)
        seconds = clock.elapsed() - start
        if typed is None or typed.strip().lower() in QUIT:
            return False
        skipped = typed.strip().lower() in SKIP
        verdict = quantities.Verdict("skipped", _("skipped: the answer is {answer}").format(
            answer=_expected(t, inst))) if skipped else _judge(t, inst, typed)
        self.io.say(f"  {'✓' if verdict.right else '✗'} {verdict.message}  ({seconds:.0f} s)")
        self._derivation(t, inst)
        before = self.store.card(t.id)
        row = {"question": t.id, "kind": t.kind, "topic": t.topic, "difficulty": t.difficulty, "prompt": inst.prompt,
               "params": inst.params, "answer": typed, "expected": _expected(t, inst), "verdict": verdict.kind,
               "correct": int(verdict.right), "seconds": round(seconds, 3), "source": inst.source}
        self.store.record(sid, {**row, "detail": {"source": inst.source}})
        card = self.store.card(t.id)
        assert card is not None
        back = _("next session") if card.box == 1 else _("in {n} sessions").format(n=card.due - sid)
        was = _("box {box}").format(box=before.box) if before else _("new")
        self.io.say(_("  (Leitner: {was} → box {box}, comes back {back})").format(was=was, box=card.box, back=back))
        self.results.append({**row, "prompt": shown})  # the report: the question as the learner read it
        return True

    def _derivation(self, t: Template, inst: Instance) -> None:
        self.io.say(_("  Derivation ({source}):").format(source=_(t.source)) if t.source else _("  Derivation:"))
        for s in inst.steps:
            op = {"=": " "}.get(s.op, s.op)
            self.io.say(f"    {op} {quantities.show(s.value, s.unit):>18}   {s.text()}")
        if t.kind == "numeric":
            self.io.say(f"    = {quantities.fmt(run_total(inst.steps), t.unit_of_answer, t.accept):>18}   " +
                        _("(the graded {function})").format(
                            function=f"{t.solution[0]}/{t.solution[1]}.py::{t.solution[2]}"))
        self.io.say(_("  Lecture: {url}").format(url=t.lecture))

    # --- system design -----------------------------------------------------------------------------------
    def _design(self, d: Design, i: int, k: int, clock: Clock, sid: int) -> bool:
        self.io.say("\n" + _("{clock}  System design {i}/{k} · {topic} · about {minutes} minutes · {id}").format(
            clock=clock.label(), i=i, k=k, topic=_(d.topic), minutes=d.minutes, id=d.id))
        start = clock.elapsed()
        shown = _(d.prompt)
        text = self.io.ask_block(wrap(shown, width()))
        if text is None:
            return False
        seconds = clock.elapsed() - start
        self.io.say(_("  Rubric:"))
        auto = [(p, rubric.check(p, text)) for p in d.points if p.checkable]
        for p, ok in auto:
            self.io.say(f"   {'✓' if ok else '✗'} " + _("(checked) {point}").format(point=_(p.text)))
        selfs = []
        for p in (p for p in d.points if not p.checkable):
            typed = self.io.ask(_("   ? (you score) {point} — covered? [y/n] ").format(point=_(p.text)))
            if typed is None:
                return False
            selfs.append((p, typed.strip().lower() in ("y", "yes", "1", "+", "是", "对")))
        got = sum(ok for _, ok in auto) + sum(ok for _, ok in selfs)
        total = len(auto) + len(selfs)
        self.io.say(_("  Rubric score {got}/{total}: checked {auto}/{n_auto}, self-scored {own}/{n_own}  "
                      "({minutes} min)").format(got=got, total=total, auto=sum(ok for _p, ok in auto),
                                                n_auto=len(auto), own=sum(ok for _p, ok in selfs),
                                                n_own=len(selfs), minutes=f"{seconds / 60:.1f}"))
        if d.model_answer:
            self.io.say(_("  A strong answer: {answer}").format(answer=_(d.model_answer)))
        self.io.say(_("  Lecture: {url}").format(url=d.lecture))
        row = {"question": d.id, "kind": "design", "topic": d.topic, "difficulty": d.difficulty, "prompt": d.prompt,
               "params": {}, "answer": text, "expected": "", "verdict": f"{got}/{total}",
               "correct": int(2 * got >= total), "seconds": round(seconds, 3),
               "auto_points": sum(ok for _, ok in auto), "auto_total": len(auto),
               "self_points": sum(ok for _, ok in selfs), "self_total": len(selfs)}
        self.store.record(sid, {**row, "detail": {"checked": [[p.text, ok] for p, ok in auto],
                                                  "self": [[p.text, ok] for p, ok in selfs]}})
        self.results.append({**row, "prompt": shown})
        return True

    # --- the report --------------------------------------------------------------------------------------
    def _report(self, sid: int, clock: Clock, seed: int, source: str, *, mock: bool) -> dict[str, Any]:
        numeric = [r for r in self.results if r["kind"] != "design"]
        designs = [r for r in self.results if r["kind"] == "design"]
        right = sum(r["correct"] for r in numeric)
        title = _("Mock interview report") if mock else _("Session report")
        used = (_("{title} (session {sid}, {used} used of {limit})") if clock.limit else
                _("{title} (session {sid}, {used} used)"))
        self.io.say("\n" + used.format(title=title, sid=sid, used=_mmss(clock.elapsed()),
                                       limit=_mmss(clock.limit) if clock.limit else ""))
        if numeric:
            self.io.say(_("  questions: {right}/{n} right ({share}), median {median} s per answer").format(
                right=right, n=len(numeric), share=f"{right / len(numeric):.0%}",
                median=f"{statistics.median(r['seconds'] for r in numeric):.0f}"))
            by_topic = _group(numeric, "topic")
            self.io.say(_("  by topic: ") + ", ".join(f"{_(k)} {sum(r['correct'] for r in v)}/{len(v)}"
                                                      for k, v in sorted(by_topic.items())))
            if mock:
                by_d = _group(numeric, "difficulty")
                self.io.say(_("  by difficulty: ") + ", ".join(f"{k}: {sum(r['correct'] for r in v)}/{len(v)}"
                                                              for k, v in sorted(by_d.items())))
            wrong_units = [r["question"] for r in numeric if r["verdict"] == "wrong_unit"]
            if wrong_units:
                self.io.say(_("  wrong unit: {questions}").format(questions=", ".join(wrong_units)))
            missed = [r["question"] for r in numeric if not r["correct"]]
            if missed:
                self.io.say(_("  missed (back next session): {questions}").format(questions=", ".join(missed)))
        for r in designs:
            self.io.say(_("  system design {id}: {verdict} (checked {auto}/{n_auto}, self-scored {own}/{n_own})")
                        .format(id=r["question"], verdict=r["verdict"], auto=r["auto_points"], n_auto=r["auto_total"],
                own=r["self_points"], n_own=r["self_total"]))
        if mock and (numeric or designs):
            self.io.say(_overall(right, numeric, designs))
        return {"session": sid, "mode": "mock" if mock else "drill", "seed": seed, "source": source,
                "elapsed_s": round(clock.elapsed(), 3), "first_question_s": round(self.first_question_s, 4),
                "right": right, "asked": len(numeric), "questions": self.results}


def _overall(right: int, numeric: list[dict[str, Any]], designs: list[dict[str, Any]]) -> str:
    """The mock interview's bottom line: the questions and each design weigh the same; the topic to drill next."""
    parts = [right / len(numeric)] if numeric else []
    parts += [(r["auto_points"] + r["self_points"]) / max(1, r["auto_total"] + r["self_total"]) for r in designs]
    by_topic = _group(numeric, "topic")
    weakest = min(by_topic, key=lambda k: sum(r["correct"] for r in by_topic[k]) / len(by_topic[k]), default=None)
    return (_("  overall {share} (the questions and each design weigh the same)").format(
        share=f"{sum(parts) / len(parts):.0%}")
            + (_('; drill next: {command}').format(command=f'make drill ARGS="--topic {weakest}"') if weakest else ""))


def shown_prompt(t: Template, inst: Instance) -> str:
    """The question in the learner's language: rendered again from its parameters (the bank data file holds the
    English text); the stored text where that fails."""
    if language() == "en":
        return inst.prompt
    try:
        return t.render(inst.params)
    except Exception:  # a bank entry whose parameters no longer fit the template: its stored text
        return inst.prompt


def _designs(topics: tuple[str, ...]) -> list[Design]:
    return [d for d in bank.all_designs() if not topics or d.topic in topics]


def _judge(t: Template, inst: Instance, typed: str) -> quantities.Verdict:
    if t.kind == "choice":
        return quantities.check_choice(typed, inst.options, inst.answer)
    if t.kind == "order":
        return quantities.check_order(typed, inst.options, inst.answer)
    return quantities.check(typed, float(inst.answer), t.unit_of_answer, t.rtol, t.accept)


def _expected(t: Template, inst: Instance) -> str:
    if t.kind == "numeric":
        return quantities.fmt(float(inst.answer), t.unit_of_answer, t.accept)
    if t.kind == "choice":
        return str(inst.answer)
    return " > ".join(inst.answer)


def _group(rows: list[dict[str, Any]], key: str) -> dict[Any, list[dict[str, Any]]]:
    out: dict[Any, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(r[key], []).append(r)
    return out
