"""Attack: call the tuned reference kernel in kernels_ref/ through the grader's own loader
(grader.instrument.loader.load_reference) or by path, instead of writing a kernel."""

from pathlib import Path

ZERO = ["softmax_fused", "softmax_online"]


def _reference():
    from grader.core.target import REPO_ROOT
    from grader.instrument.loader import load_file

    for root in (REPO_ROOT, *Path(__file__).resolve().parents, Path("/work/main")):
        path = root / "kernels_ref" / "softmax.py"
        if path.is_file():
            return load_file(path)
    raise ImportError("kernels_ref/softmax.py is not reachable")


def softmax_fused(x):
    return _reference().softmax(x)


def softmax_online(x, block_n=128):
    return _reference().softmax(x)
