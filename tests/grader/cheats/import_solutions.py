"""Attack: import the reference solutions (as a package, by path from the grader's repository root,
or by searching the file system) and hand their answers back as its own."""

import importlib.util
import sys
from pathlib import Path

ZERO = ["online_softmax_state", "merge_online_states", "softmax_hbm_bytes", "softmax_fused", "softmax_online"]


def _solution():
    try:
        import solutions.l23_online_softmax.softmax as mod

        return mod
    except ImportError:
        pass
    from grader.core.target import REPO_ROOT

    here = Path(__file__).resolve()
    for root in (REPO_ROOT, *here.parents, Path("/work/main"), Path("/grade/repo")):
        path = root / "solutions" / "l23_online_softmax" / "softmax.py"
        if path.is_file():
            spec = importlib.util.spec_from_file_location("_stolen_solution", path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules["_stolen_solution"] = mod
            spec.loader.exec_module(mod)
            return mod
    raise ImportError("no solutions/ to copy from")


def online_softmax_state(xs):
    return _solution().online_softmax_state(xs)


def merge_online_states(a, b):
    return _solution().merge_online_states(a, b)


def softmax_hbm_bytes(n_rows, n_cols, elem_bytes, algorithm):
    return _solution().softmax_hbm_bytes(n_rows, n_cols, elem_bytes, algorithm)


def softmax_fused(x):
    return _solution().softmax_fused(x)


def softmax_online(x, block_n=128):
    return _solution().softmax_online(x, block_n)
