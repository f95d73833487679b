"""``@grade(exercise, tier, points=..., hint=...)``: the one marker of a grading test.

The exercise is the object the test module declared (``learner(...)`` or ``cuda_kernel(...)``), so
its name is typed once and its unit is known: the plugin refuses a test whose exercise belongs to
another unit than the folder the test lives in, a tier that does not exist, or points that are not
positive, at collection, before anything is graded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import pytest

from grader.core.results import Tier

MARK = "grade"
MARK_HELP = ("grade(exercise=, unit=, tier=, points=, hint=, validation=, audit=): what a grading test grades "
             "(grader.kit.grade)")


class Exercise(Protocol):
    """What ``grade`` needs of an exercise: its unit and its name."""

    unit: str
    name: str


@dataclass(frozen=True)
class CudaKernel:
    """A CUDA C++ kernel exercise ``name``: ``extern "C" __global__ <kernel>`` in the target's ``<unit>/<module>.cu``.

    ``kernel`` is the ``__global__`` function when it differs from the exercise's name (the exercise
    ``sgemm_cu`` is the kernel ``sgemm_tiled`` of ``sgemm.cu``); it defaults to ``name``.
    """

    unit: str
    module: str
    name: str
    kernel: str | None = None

    def __post_init__(self) -> None:
        if self.kernel is None:
            object.__setattr__(self, "kernel", self.name)


def cuda_kernel(unit: str, module: str, name: str, *, kernel: str | None = None) -> CudaKernel:
    """Declare a CUDA C++ kernel exercise (compiled with ``grader.instrument.cuda.compile_learner``).

    ``kernel``: the ``__global__`` function's name where it is not the exercise's (default: ``name``).
    """
    return CudaKernel(unit, module, name, kernel)


def grade(
    exercise: Exercise, tier: Tier | str, *, points: float, hint: str = "", validation: bool = False
) -> pytest.MarkDecorator:
    """The marker of a grading test: ``@grade(softmax_fused, "correctness", points=4, hint="...")``.

    ``hint`` is a question that points at the likely bug (the plugin shows it on failure).
    ``validation=True`` marks a correctness test that checks bad arguments are refused: a function that
    only raises must not earn these points, so they are withheld while the exercise's other correctness
    tests fail (as efficiency and gpu_perf points are).
    """
    unit, name = getattr(exercise, "unit", None), getattr(exercise, "name", None)
    if not isinstance(unit, str) or not isinstance(name, str):
        raise TypeError(f"grade() takes a declared exercise (learner(...) or cuda_kernel(...)), got {exercise!r}")
    try:
        tier = Tier(tier)
    except ValueError:
        raise ValueError(f"grade({name}): tier {tier!r} is not one of {[t.value for t in Tier]}") from None
    if isinstance(points, bool) or not isinstance(points, int | float) or not points > 0:
        raise ValueError(f"grade({name}): points must be a number > 0, got {points!r}")
    if validation and tier is not Tier.CORRECTNESS:
        raise ValueError(f"grade({name}): validation=True is for correctness tests, not {tier.value}")
    kernel = getattr(exercise, "kernel", None) is True  # a CudaKernel's `kernel` is a name: not audited (C++)
    audited = kernel or getattr(exercise, "audited", None) is True
    audit = (exercise.module, name, kernel) if audited else None  # type: ignore[attr-defined]
    return getattr(pytest.mark, MARK)(
        exercise=name, unit=unit, tier=tier.value, points=float(points), hint=hint, validation=bool(validation),
        audit=audit,
    )
