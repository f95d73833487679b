"""Known implementations kept beside each unit's tests: the grader is graded too (tests/grader/test_course.py).

``tests/<unit>/known_wrong/<name>.py`` holds a classic learner bug; ``known_right/<name>.py`` a
correct alternative (another algorithm, another tiling). Each file is a small *override*: its code
is appended to the unit's solution module, so it only redefines what it changes (a kernel, a
function) and uses the solution's other names. It declares, as literals::

    \"\"\"Classic bug: exp(x) without subtracting the row max overflows for large logits.\"\"\"
    MODULE = "softmax"                                # the module of the unit it overrides
    REJECTED_BY = {"softmax_fused": ["correctness"]}  # known_wrong: exercise -> tiers that must lose points
    ACCEPTED = ["softmax_fused"]                      # known_right: exercises that must keep full marks

A CUDA C++ exercise's known implementation is a whole ``.cu`` file that *replaces* the unit's
``<MODULE>.cu`` (a C++ extension's: a whole ``.cpp`` file, the same way); its leading ``//`` comment
block holds the description, then the same declarations::

    // Classic bug: the warp reduction sums through shared memory, no shuffle.
    // MODULE = "cuda_reduce"
    // REJECTED_BY = {"warp_sum": ["efficiency"]}

For a known-wrong file, the listed tiers of the listed exercises must lose points and every other
tier of those exercises must keep full marks (a three-pass kernel is correct: it loses efficiency
points only). Across a unit's known-wrong files, every correctness and efficiency test must reject
at least one: a test that rejects nothing asserts nothing.
"""

from __future__ import annotations

import ast
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from grader.core.target import REPO_ROOT

KINDS = ("known_wrong", "known_right")
NATIVE = (".cu", ".cpp")  # whole files that replace the module, declarations in their header comment


@dataclass(frozen=True)
class KnownImpl:
    """One known-wrong or known-right override."""

    path: Path
    unit: str
    kind: str
    module: str
    doc: str
    rejected_by: dict[str, tuple[str, ...]] = field(default_factory=dict)
    accepted: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.unit}/{self.kind}/{self.path.stem}"

    @property
    def exercises(self) -> tuple[str, ...]:
        return tuple(self.rejected_by) if self.kind == "known_wrong" else self.accepted


def _literal(tree: ast.Module, name: str, path: Path):
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise ValueError(f"{path}: declare {name} = ... (see grader/authoring/known.py)")


_CU_DECL = re.compile(r"^//\s*(MODULE|REJECTED_BY|ACCEPTED)\s*=\s*(.+)$")


def _cu_as_python(path: Path) -> str:
    """A .cu file's header comment as the Python a .py known implementation would declare."""
    doc, decls = [], []
    for line in path.read_text().splitlines():
        if not line.startswith("//"):
            break
        m = _CU_DECL.match(line)
        if m:
            decls.append(f"{m[1]} = {m[2]}")
        elif not decls:
            doc.append(line.removeprefix("//").strip())
    return "\n".join([repr(" ".join(doc).strip()), *decls])


def read(path: Path) -> KnownImpl:
    """Parse a known implementation's declarations without running it."""
    text = _cu_as_python(path) if path.suffix in NATIVE else path.read_text()
    tree = ast.parse(text, filename=str(path))
    doc = ast.get_docstring(tree)
    if not doc:
        raise ValueError(f"{path}: start with a docstring naming the bug or the alternative")
    kind = path.parent.name
    unit = path.parent.parent.name
    module = _literal(tree, "MODULE", path)
    if kind == "known_wrong":
        rejected = {ex: tuple(tiers) for ex, tiers in _literal(tree, "REJECTED_BY", path).items()}
        return KnownImpl(path, unit, kind, module, doc, rejected_by=rejected)
    return KnownImpl(path, unit, kind, module, doc, accepted=tuple(_literal(tree, "ACCEPTED", path)))


def known_impls(unit: str, kind: str) -> list[KnownImpl]:
    """The unit's known implementations of one kind, sorted by name."""
    folder = REPO_ROOT / "tests" / unit / kind
    if not folder.is_dir():
        return []
    paths = sorted([*folder.glob("*.py"), *(p for s in NATIVE for p in folder.glob(f"*{s}"))])
    stems = [p.stem for p in paths]
    if dupes := sorted({s for s in stems if stems.count(s) > 1}):
        raise ValueError(f"tests/{unit}/{kind}: {dupes} exist twice (.py, .cu or .cpp); give each file its own name")
    return [read(p) for p in paths]


def build_target(impl: KnownImpl, dest: Path) -> Path:
    """A target folder: the unit's solutions with the override appended to its module (.cu, .cpp: replacing it)."""
    unit_dir = dest / impl.unit
    shutil.copytree(REPO_ROOT / "solutions" / impl.unit, unit_dir,
                    ignore=shutil.ignore_patterns("__pycache__"))
    if impl.path.suffix in NATIVE:
        (unit_dir / f"{impl.module}{impl.path.suffix}").write_text(impl.path.read_text())
        return dest
    module = unit_dir / f"{impl.module}.py"
    module.write_text(
        module.read_text() + f"\n\n# ---- override from tests/{impl.name}.py ----\n" + impl.path.read_text()
    )
    return dest
