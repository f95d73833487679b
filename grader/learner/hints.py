"""``python -m grader hint <exercise> [--level 1|2|3]``: graduated hints, never code.

Each unit keeps its hints in ``HINTS.toml`` next to its exercises (written in solutions/, copied to
exercises/ by ``grader stubs``): one table per exercise with three levels,

    [softmax_fused]
    1 = "a question that points at the likely bug"
    2 = "the idea of the solution"
    3 = "the key line of reasoning, in words"

Level 1 of an exercise without a table is the hint of its first grading test (from the manifest).
"""

from __future__ import annotations

import argparse
import difflib
import tomllib
from dataclasses import dataclass
from pathlib import Path

from grader import api, i18n
from grader.core.target import REPO_ROOT
from grader.i18n import N_, _

HINTS_FILE = "HINTS.toml"
LEVELS = (1, 2, 3)
LEVEL_NAMES = {1: N_("a question"), 2: N_("the idea"), 3: N_("the key reasoning")}


class HintError(api.GraderError):
    """No such exercise, or no hint at that level."""


@dataclass(frozen=True)
class Hints:
    unit: str
    exercise: str
    levels: dict[int, str]


def read_hints(path: Path) -> dict[str, dict[int, str]]:
    """``{exercise: {level: text}}`` of one HINTS.toml; HintError naming the file if it is malformed."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise HintError(f"{path}: {exc}") from None
    out: dict[str, dict[int, str]] = {}
    for exercise, table in data.items():
        if not isinstance(table, dict) or not all(k.isdigit() and isinstance(v, str) for k, v in table.items()):
            raise HintError(f"{path}: [{exercise}] must map levels 1, 2, 3 to strings")
        out[exercise] = {int(k): v.strip() for k, v in table.items()}
    return out


def unit_hints(unit: str, root: Path = REPO_ROOT) -> dict[str, dict[int, str]]:
    """The hints of ``unit``: exercises/<unit>/HINTS.toml, else solutions/<unit>/HINTS.toml; {} if neither."""
    for folder in ("exercises", "solutions"):
        path = root / folder / unit / HINTS_FILE
        if path.is_file():
            english = read_hints(path)
            local = i18n.localized(path)  # HINTS.zh.toml in Chinese; a level it lacks stays English
            theirs = read_hints(local) if local != path else {}
            return {e: {**levels, **theirs.get(e, {})} for e, levels in english.items()}
    return {}


def find(spec: str, root: Path = REPO_ROOT) -> Hints:
    """The hints of ``spec``: ``softmax_fused``, ``23:softmax_fused`` or ``l23_online_softmax:softmax_fused``."""
    unit_spec, _colon, exercise = spec.rpartition(":")
    units = api.resolve_units([unit_spec]) if unit_spec else api.all_units()
    for unit in units:
        levels = unit_hints(unit, root).get(exercise)
        if levels:
            return Hints(unit, exercise, levels)
    tests = [t for t in api.manifest(units) if t["exercise"] == exercise]
    if tests:
        first = next((t for t in tests if t["hint"]), tests[0])
        return Hints(str(first["unit"]), exercise,
                     {1: _(str(first["hint"]), unit=str(first["unit"]))} if first["hint"] else {})
    known = sorted({str(t["exercise"]) for t in api.manifest(units)})
    close = difflib.get_close_matches(exercise, known, n=1, cutoff=0.5)
    raise HintError(f"no exercise {exercise!r}" + (f" in {', '.join(units)}" if unit_spec else "")
                    + (f": did you mean {close[0]!r}?" if close else "") + f" Exercises: {', '.join(known)}")


def render(h: Hints, level: int) -> str:
    """Levels 1 to ``level`` of ``h``, numbered, and how to ask for the next one."""
    if level not in LEVELS:
        raise HintError(f"--level must be one of {LEVELS}, got {level}")
    shown = [f"{h.unit} · {h.exercise}"]
    for n in LEVELS[:level]:
        if n in h.levels:
            shown.append(f"  {n}. ({_(LEVEL_NAMES[n])}) {h.levels[n]}")
    if level < 3 and level + 1 in h.levels:
        shown.append("  " + _("more:") + f" make hint L={h.unit.split('_')[0]} E={h.exercise} LEVEL={level + 1}")
    elif level + 1 not in h.levels and len(shown) == 1:
        shown.append("  " + _("no hint written for this exercise yet: read the unit's README and the stub's docstring"))
    return "\n".join(shown)


def _hint(args: argparse.Namespace) -> int:
    try:
        print(render(find(args.exercise), args.level))
    except api.GraderError as exc:
        print(f"hint: {exc}")
        return 2
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    h = sub.add_parser("hint", help="graduated hints for one exercise: a question, the idea, the key reasoning")
    h.add_argument("exercise", metavar="[UNIT:]EXERCISE", help="softmax_fused, or 23:softmax_fused")
    h.add_argument("--level", "-l", type=int, default=1, choices=LEVELS,
                   help="1: a question (default), 2: the idea, 3: the key reasoning; never code")
    h.set_defaults(func=_hint)
