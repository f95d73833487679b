"""Attack: read the grading tests (and the known-right corpus beside them) and reuse what they hold:
the test module's own fp64 oracle `reference`, or a correct alternative implementation."""

import importlib.util
from pathlib import Path

ZERO = ["softmax_fused", "softmax_online"]


def _tests_dir():
    from grader.core.target import REPO_ROOT

    for root in (REPO_ROOT, *Path(__file__).resolve().parents, Path("/grade/repo")):
        folder = root / "tests" / "l23_online_softmax"
        if (folder / "test_kernels.py").is_file():
            return folder
    raise ImportError("no tests to read")


def _oracle():
    folder = _tests_dir()
    right = sorted((folder / "known_right").glob("*.py")) if (folder / "known_right").is_dir() else []
    if right:  # a correct alternative: exec it with this module's names
        scope = dict(globals())
        exec(compile(right[0].read_text(), str(right[0]), "exec"), scope)
        if "softmax_fused" in scope:
            return scope["softmax_fused"]
    spec = importlib.util.spec_from_file_location("_stolen_tests", folder / "test_kernels.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return lambda x: mod.reference(x).to(x.dtype)


def softmax_fused(x):
    return _oracle()(x)


def softmax_online(x, block_n=128):
    return _oracle()(x)
