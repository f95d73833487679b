"""``make gpu-check``'s cross-check of the CUDA-on-CPU executor: each .cu file's verdicts on the GPU and on the CPU.

``python -m grader.tools.cuda_verdicts [UNIT ...]`` grades every .cu solution and known implementation twice, with
the kernels on the GPU and on the CPU executor (``DRIPSTONE_CUDA_EXECUTOR``), and prints one line per file:
``same`` or ``DIFFER`` with the tests whose status differs. Exit status 1 on a difference. Run where a GPU is lent.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from grader import api
from grader.authoring import known
from grader.core.target import REPO_ROOT
from grader.instrument import cuda_cpu


def compare_with_gpu(units: Sequence[str] = ()) -> list[str]:
    """For each .cu solution and known implementation: the .cu tests graded on the GPU and on the CPU executor;
    one line per file, ``DIFFER`` where a test's status differs (run where a GPU is lent: .ci/gpu-check)."""
    lines = []
    for unit in units or sorted(p.parent.name for p in (REPO_ROOT / "solutions").glob("*/*.cu")):
        impls = [k for kind in ("known_wrong", "known_right") for k in known.known_impls(unit, kind)
                 if k.path.suffix == ".cu"]
        exercises = sorted({e for k in impls for e in k.exercises})
        for name, impl in [("solutions", None), *((k.name, k) for k in impls)]:
            with tempfile.TemporaryDirectory(prefix="dripstone-cu-verdicts-") as tmp:
                target = known.build_target(impl, Path(tmp)) if impl else REPO_ROOT / "solutions"
                verdicts = {}
                for executor in ("gpu", "cpu"):
                    os.environ[cuda_cpu.FORCE_ENV] = executor
                    try:
                        report = api.grade(target, units=[unit], exercises=exercises)
                    finally:
                        os.environ.pop(cuda_cpu.FORCE_ENV, None)
                    verdicts[executor] = {r.nodeid: r.status.value for r in report.results if r.executor}
            gpu, cpu = verdicts["gpu"], verdicts["cpu"]
            differ = [f"{n}: GPU {gpu.get(n)}, CPU {cpu.get(n)}" for n in sorted(gpu.keys() | cpu.keys())
                      if gpu.get(n) != cpu.get(n)]
            status = "DIFFER" if differ or not gpu else "same"
            lines.append(f"{status} {unit} {name}: {len(gpu)} test(s) on the GPU, {len(cpu)} on the CPU executor"
                         + "".join(f"\n    {d}" for d in differ))
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m grader.tools.cuda_verdicts [UNIT ...]``: :func:`compare_with_gpu`, exit 1 on a difference."""
    args = list(sys.argv[1:] if argv is None else argv)
    if any(a.startswith("-") for a in args):
        print("usage: python -m grader.tools.cuda_verdicts [UNIT ...]", file=sys.stderr)
        return 2
    lines = compare_with_gpu(args)
    print("\n".join(lines))
    return int(any(not line.startswith("same ") for line in lines))


if __name__ == "__main__":
    raise SystemExit(main())
