"""The learner-facing tree: what students clone. No solutions, no reference kernels, no known corpora.

``python -m grader release OUT/`` writes fresh stubs generated from ``solutions/`` (never the working
``exercises/``, which may hold someone's answers) with their manifest, a copy of them in ``.stubs/``
(what ``make reset`` restores: a release has no solutions/), the grader, the units' grading tests
(without ``known_wrong/`` and ``known_right/``), the pinned requirements, and a student Makefile
(``make grade``, ``make reset``) and README. :func:`check` refuses a tree that still holds a solution
region, a solutions/ or kernels_ref/ file, or a known implementation.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from grader.core import stubs, timeout
from grader.core.target import REPO_ROOT

SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", "known_wrong", "known_right")
FORBIDDEN_DIRS = ("solutions", "kernels_ref", "known_wrong", "known_right")
# What students do not run: instructor operations (batch, sandbox, nbgrader, release) and the course's
# self-test corpus. `python -m grader batch` in a release says these are instructor tools (grader/cli.py).
# tools/cuda_verdicts.py grades the corpus on a GPU (make gpu-check): the course repository's, not a student's.
GRADER_SKIP = shutil.ignore_patterns(
    "__pycache__", "*.pyc", "instructor", "corpus.py", "known.py", "bench_batch.py", "bench_course.py",
    "cuda_verdicts.py", "BATCH.md", "NBGRADER.md", "THREAT_MODEL.md",
)
SOLUTION_MARKER = "BEGIN SOLUTION"  # "### BEGIN SOLUTION" in Python, "// BEGIN SOLUTION" in CUDA

STUDENT_MAKEFILE = """\
# Dripstone (student release): `make grade` grades exercises/ and creates the pinned environment first.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cksum < requirements.txt | cut -d' ' -f1)
TARGET ?= exercises
GRADE_ARGS := --target $(TARGET) $(if $(L),--unit $(L)) $(if $(E),--exercise $(E)) $(ARGS)

.PHONY: env grade reset watch run hint progress report drill
grade: env
\t@$(PY) -m grader grade $(GRADE_ARGS)

# make watch L=23 [E=...] (regrade on save), make run E=... [CASE=n], make hint E=... [LEVEL=2], progress, report
watch: env
\t@test -n "$(L)" || { echo "usage: make watch L=<unit> [E=<exercise>]"; exit 2; }
\t@$(PY) -m grader watch $(L) $(E) $(ARGS)
run: env
\t@$(PY) -m grader run $(if $(L),$(L):)$(E) $(if $(CASE),--case $(CASE)) $(ARGS)
hint: env
\t@$(PY) -m grader hint $(if $(L),$(L):)$(E) $(if $(LEVEL),--level $(LEVEL))
progress: env
\t@$(PY) -m grader progress
# Interview drills: make drill [ARGS="--mock" | ARGS="--topic memory --n 5" | ARGS=stats]
drill: env
\t@$(PY) -m grader drill $(ARGS)
report: env
\t@$(PY) -m grader report $(if $(GPU_NAME),--gpu $(GPU_NAME))

# Restore a stub: make reset L=23 E=softmax_fused (one function), or L=23 (the unit); backups in .backup/
reset: env
\t@test -n "$(L)" || { echo "usage: make reset L=<unit> [E=<exercise or file>]"; exit 2; }
\t@$(PY) -m grader reset $(L)$(if $(E),:$(E))

env: $(STAMP)

$(STAMP): requirements.txt
\t@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is required"' \\
\t  || { echo "install Python 3.11 or newer, or run: make PYTHON=/path/to/python3.11"; exit 1; }
\t@test -x $(PY) || $(PYTHON) -m venv $(VENV)
\t$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
\t@rm -f $(VENV)/.installed-* && touch $@
"""

STUDENT_README = """\
# Dripstone: exercises for the AI Infra course

Fill in the TODOs under `exercises/<unit>/` (each unit has a README: what to build, why, where the
lecture teaches it, hints), then grade your work:

```bash
make grade                 # every unit (creates the pinned environment in .venv first, ~2 min)
make grade L=23            # one unit
make grade L=23 E=softmax_fused
make reset L=23 E=softmax_fused   # start an exercise over: its stub back, your version kept in .backup/
make drill                 # interview drills: 10 timed questions with worked answers (ARGS=--mock: 45 min)
```

A call of your code that runs longer than {timeout:g} s (an endless loop?) fails its test and grading
goes on; `make grade ARGS="--timeout 120"` allows longer, `--timeout 0` turns the limit off. Ctrl-C
stops grading and prints the scoreboard of what was graded so far.

The scoreboard shows, per unit, exercise and tier, your points, what failed and a hint. Tiers:
`correctness` (runs anywhere; Triton kernels run under Triton's interpreter on the CPU),
`efficiency` (the grader counts the bytes your kernel moves and holds them against the unit's
ledger) and `gpu_perf` (timed on a CUDA GPU; "pending GPU" elsewhere, neither 0 nor a pass).

The tests under `tests/<unit>/` are the ones your instructor grades with: read them to see what is
checked. Keep the function names and signatures of the stubs; you may add helpers. Kernel
exercises must compute in a kernel (torch compute ops inside them are refused), leave their inputs
unmodified and return the tensor their kernel stored into. The grader reads a kernel module's
source first: reflection (`sys`, `gc`, `inspect`...), `torch._C`, `torch.overrides`, `exec`/`eval`
and monkeypatching are refused in the exercises that reach them. Your instructor grades submissions
in a sandbox: code that exits the process, reads the network or touches files outside your folder
scores 0.

Units in this release: {units}
"""


@dataclass(frozen=True)
class Release:
    out: Path
    units: tuple[str, ...]
    files: int


class ReleaseError(RuntimeError):
    """The tree would leak a solution, or OUT is not empty."""


def build(out: Path, root: Path = REPO_ROOT) -> Release:
    """Write the learner-facing tree into the new or empty folder ``out`` and check it."""
    if out.exists() and any(out.iterdir()):
        raise ReleaseError(f"{out} is not empty: release into a new folder")
    if not (root / "solutions").is_dir():
        raise ReleaseError(f"no solutions/ in {root}: release from the course repository (stubs are generated)")
    units = tuple(sorted(p.name for p in (root / "solutions").iterdir() if (root / "tests" / p.name).is_dir()))
    _write_stubs(root / "solutions", out, units)
    shutil.copytree(root / "grader", out / "grader", ignore=GRADER_SKIP)
    for unit in units:
        shutil.copytree(root / "tests" / unit, out / "tests" / unit, ignore=SKIP)
    # the unit READMEs link CONVENTIONS.md; the Chinese ones use GLOSSARY.md's terms (术语表)
    for name in ("pyproject.toml", "requirements.txt", "CONVENTIONS.md", "GLOSSARY.md"):
        shutil.copy2(root / name, out / name)
    (out / "Makefile").write_text(STUDENT_MAKEFILE)
    (out / "README.md").write_text(STUDENT_README.format(units=", ".join(units), timeout=timeout.DEFAULT_S))
    check(out)
    return Release(out, units, sum(1 for p in out.rglob("*") if p.is_file()))


def _write_stubs(solutions: Path, out: Path, units: tuple[str, ...]) -> None:
    """Fresh stubs of ``units`` into ``out/exercises`` (with their manifest) and ``out/.stubs`` (for reset)."""
    stubs.write(solutions, out / "exercises", units)
    for rel, text in stubs.generate(solutions, units).items():
        (out / stubs.PRISTINE / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / stubs.PRISTINE / rel).write_text(text)


def check(tree: Path) -> None:
    """ReleaseError naming every leak: solution regions, solutions/, kernels_ref/, known corpora."""
    leaks = [str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_dir() and p.name in FORBIDDEN_DIRS]
    leaks += [
        str(p.relative_to(tree))
        for top in ("exercises", "tests", stubs.PRISTINE)
        for p in (tree / top).rglob("*")
        if p.is_file() and SOLUTION_MARKER in p.read_text(errors="replace")
    ]
    if leaks:
        raise ReleaseError("the release would leak: " + ", ".join(sorted(leaks)))
