"""Measure what counting traffic costs: the L23 solution kernels with and without the hook.

``python -m grader.tools.bench_traffic`` prints medians measured side by side in one run. The hook wraps
the interpreter's classes, so "plain" runs in a child process that never installs it.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TRITON_INTERPRET", "1")

CASES = [("softmax_fused", (64, 1000), {}), ("softmax_online", (16, 1000), {"block_n": 64})]
REPS = 7


def _time_cases(count: bool) -> dict[str, float]:
    import torch

    from grader.core.target import REPO_ROOT
    from grader.instrument import traffic
    from grader.instrument.loader import load_file

    if count:
        traffic.install()
    mod = load_file(REPO_ROOT / "solutions" / "l23_online_softmax" / "softmax.py")
    out = {}
    for name, shape, kwargs in CASES:
        x = torch.randn(shape)
        fn = getattr(mod, name)
        fn(x, **kwargs)  # warm-up: AST rewrite of the kernel
        samples = []
        for _ in range(REPS):
            t0 = time.perf_counter()
            if count:
                with traffic.count_traffic():
                    fn(x, **kwargs)
            else:
                fn(x, **kwargs)
            samples.append(time.perf_counter() - t0)
        out[name] = statistics.median(samples)
    return out


def main() -> None:
    if sys.argv[1:] == ["--child-plain"]:
        print(json.dumps(_time_cases(count=False)))
        return
    child = [sys.executable, "-m", "grader.tools.bench_traffic", "--child-plain"]
    plain = json.loads(subprocess.run(child, capture_output=True, text=True, check=True).stdout)
    counted = _time_cases(count=True)
    print(f"{'kernel':16} {'plain (s)':>10} {'counted (s)':>12} {'ratio':>6}")
    for name in plain:
        print(f"{name:16} {plain[name]:10.3f} {counted[name]:12.3f} {counted[name] / plain[name]:6.2f}")


if __name__ == "__main__":
    main()
