"""Loading learner code by path, the errors a broken submission gets, and the kernel guards."""

from __future__ import annotations

import copy
import re

import pytest
import torch

from grader.core import target
from grader.core.target import SubmissionError
from grader.instrument import device, given, guard, loader, worker
from grader.instrument.guard import TorchComputeRefused
from grader.judge import harness


@pytest.fixture
def submission(tmp_path, monkeypatch):
    """A target folder with one unit `u`; write modules with ``submission("m", source)``."""
    monkeypatch.setenv(target.TARGET_ENV, str(tmp_path))
    (tmp_path / "u").mkdir()

    def write(module: str, source: str) -> None:
        (tmp_path / "u" / f"{module}.py").write_text(source)

    return write


def test_missing_file_names_the_file_and_the_fix(submission):
    with pytest.raises(SubmissionError, match=r"u/absent\.py not found: restore it"):
        harness.learner("u", "absent", "f")()


def test_syntax_error_names_the_line(submission):
    submission("broken", "def f(:\n    pass\n")
    with pytest.raises(SubmissionError, match=r"broken\.py line 1: syntax error"):
        harness.learner("u", "broken", "f")()


@pytest.mark.parametrize("body, kind", [("raise RuntimeError('boom')", "RuntimeError: boom"),
                                        ("import sys; sys.exit(0)", "SystemExit"),
                                        ("import not_a_module_xyz", "ModuleNotFoundError")])
def test_import_time_failures_become_submission_errors(submission, body, kind):
    submission("explodes", f"X = 1\n{body}\n")
    with pytest.raises(SubmissionError, match=f"explodes\\.py line 2: importing it raised {kind}"):
        harness.learner("u", "explodes", "f")()


def test_missing_function_and_wrong_signature(submission):
    submission("m", "def f(a, b):\n    return a + b\nVALUE = 3\n")
    assert harness.learner("u", "m", "f")(1, 2) == 3
    with pytest.raises(SubmissionError, match="has no `g`: define it"):
        harness.learner("u", "m", "g")()
    with pytest.raises(SubmissionError, match="is not a function"):
        harness.learner("u", "m", "VALUE")()
    with pytest.raises(SubmissionError, match=r"f\(a, b\) does not accept the contract's arguments"):
        harness.learner("u", "m", "f")(1, 2, c=3)


def test_modules_are_cached_per_file_and_never_write_bytecode(submission, tmp_path):
    submission("m", "import itertools\nCOUNTER = itertools.count()\ndef f():\n    return next(COUNTER)\n")
    f = harness.learner("u", "m", "f")
    assert [f(), f()] == [0, 1]
    assert not (tmp_path / "u" / "__pycache__").exists()


def test_gpu_mode_loads_the_compiled_module_inside_and_restores_the_previous_mode(submission):
    submission("m", "import os\ndef f():\n    return os.environ['TRITON_INTERPRET']\nAT_IMPORT = f()\n")
    f = harness.learner("u", "m", "f")
    assert not device.kernels_compiled()
    assert f.resolve().__globals__["AT_IMPORT"] == "1", "outside gpu_mode(True): interpreted"
    with device.gpu_mode(True):
        assert device.kernels_compiled()
        assert f.resolve().__globals__["AT_IMPORT"] == "0", "gpu_mode(True) must load the module compiled"
        with device.gpu_mode(False):
            assert f.resolve().__globals__["AT_IMPORT"] == "1"
        assert device.kernels_compiled(), "leaving a nested gpu_mode(False) must restore the outer mode"
    with pytest.raises(RuntimeError), device.gpu_mode(True):
        raise RuntimeError("a failing gpu_perf test")
    assert not device.kernels_compiled(), "an exception inside gpu_mode(True) must not leave kernels compiled"


def test_guard_refuses_compute_and_allows_allocation_and_views():
    x = torch.randn(4, 8)
    with guard.refuse_torch_compute("softmax_fused"):
        y = torch.empty_like(x)
        x.view(-1), x.t(), x[1:], x.stride(), x.shape, x.is_contiguous(), x.numel()
        for op in (lambda: torch.softmax(x, -1), lambda: x.exp(), lambda: x @ x.t(), lambda: x.max(),
                   lambda: x.float(), lambda: y.copy_(x), lambda: torch.nn.functional.softmax(x, -1)):
            with pytest.raises(TorchComputeRefused, match="softmax_fused called `.*`: a kernel exercise"):
                op()
    assert torch.softmax(x, -1).shape == x.shape  # outside the block torch works again


IDX = torch.tensor([1, 0])


def _print(x):
    print(x)


@pytest.mark.parametrize("read", [
    lambda x: float(x[0, 0]), lambda x: int(x[0, 0]), lambda x: bool(x[0, 0]), _print,
    lambda x: f"{x}", lambda x: x == x, lambda x: 0.5 in x, lambda x: x.data_ptr(),
    lambda x: bytes(x.untyped_storage()), lambda x: copy.deepcopy(x),
], ids=["float", "int", "bool", "print", "format", "eq", "contains", "data_ptr", "storage", "deepcopy"])
def test_guard_refuses_reading_values_on_the_host(read):
    """Host code that reads values could compute there and launder the result through a copy kernel."""
    x = torch.randn(4, 8)
    with guard.refuse_torch_compute("softmax_fused"), pytest.raises(
        TorchComputeRefused, match="reads tensor values on the host"
    ):
        read(x)


def test_guard_lets_tritons_own_code_read_pointers_and_nobody_who_only_claims_to_be_triton(tmp_path, monkeypatch):
    """Compiled Triton's launcher calls x.data_ptr() outside any interpreted launch: its files may."""
    fake_triton = tmp_path / "triton"
    fake_triton.mkdir()
    source = "__name__ = 'triton.runtime.jit'\n\ndef launch(x):\n    return x.data_ptr()\n"
    (fake_triton / "jit.py").write_text(source)
    (tmp_path / "learner.py").write_text(source)
    monkeypatch.setattr(guard, "_TRITON_DIR", fake_triton.resolve())
    launcher = loader.load_file(fake_triton / "jit.py")
    pretender = loader.load_file(tmp_path / "learner.py")
    x = torch.randn(3)
    with guard.refuse_torch_compute("matmul"):
        ptr = launcher.launch(x)
        with pytest.raises(TorchComputeRefused, match="reads tensor values on the host"):
            pretender.launch(x)
    assert ptr == x.data_ptr()


@pytest.mark.parametrize("copy_op", [
    lambda x: x.t().contiguous(), lambda x: x.t().reshape(-1), lambda x: x[IDX],
    lambda x: x[x.new_ones(4, dtype=torch.bool)], lambda x: x.t().flatten(),
], ids=["contiguous", "reshape", "index_tensor", "bool_mask", "flatten"])
def test_guard_refuses_views_that_copy_and_allows_views_that_do_not(copy_op):
    x = torch.randn(4, 8)
    with guard.refuse_torch_compute("transpose"):
        same = [x.contiguous(), x.reshape(2, 16), x.flatten(), x[1:, ::2], x.t(), *x.split(2), x[None], x.detach()]
        with pytest.raises(TorchComputeRefused, match="copied the data on the host"):
            copy_op(x)
    assert all(v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr() for v in same)


def test_kernel_exercise_must_not_modify_or_return_its_input(submission):
    submission("k", "def inplace(x):\n    y = x.view(-1)\n    return x\n")
    with pytest.raises(AssertionError, match="returned its input"):
        harness.learner("u", "k", "inplace", kernel=True)(torch.randn(3))


KERNEL_THAT_WRITES_ITS_INPUT = """
import torch, triton, triton.language as tl

@triton.jit
def _scale_inplace(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

def double(x):
    y = torch.empty_like(x)
    _scale_inplace[(1,)](x, x.numel(), BLOCK=16)
    return y
"""


def test_kernel_exercise_must_not_modify_its_input(submission):
    submission("w", KERNEL_THAT_WRITES_ITS_INPUT)
    with pytest.raises(AssertionError, match="double modified its input #0"):
        harness.learner("u", "w", "double", kernel=True)(torch.randn(10))


CONSTANTS = """
TILE = 16

def matmul(a, b, block_m=64, block_n=32, *, split=None):
    return a
"""


def test_defaults_and_values_are_read_where_the_learners_code_runs(submission, monkeypatch):
    """Batch grading's judge never loads the submission: defaults and constants come from the worker."""
    import os


    submission("c", CONSTANTS + "\nimport os\nMARK = os.getpid()\n")
    fn = harness.learner("u", "c", "matmul")
    monkeypatch.setenv(worker.ISOLATE_ENV, "1")
    try:
        assert fn.defaults() == {"block_m": 64, "block_n": 32, "split": None}
        assert harness.learner_value("u", "c", "TILE") == 16
        assert harness.learner_value("u", "c", "ABSENT") is None
        assert harness.learner_value("u", "c", "MARK") != os.getpid(), "the module was loaded in a worker"
        with pytest.raises(RuntimeError, match="must never run"):
            fn.resolve()
    finally:
        worker.end_test()
    monkeypatch.delenv(worker.ISOLATE_ENV)
    assert fn.defaults() == {"block_m": 64, "block_n": 32, "split": None}
    assert harness.learner_value("u", "c", "MARK") == os.getpid(), "make grade loads it in the process"


NUMPY_RESULTS = """
import numpy as np

def stats(x):
    a = np.asarray(x, dtype=np.float64)
    return a.cumsum(), {"max": a.max(), "n": np.int32(a.size)}, [np.arange(3, dtype=np.int16)]
"""


def _checked_in_worker(x, fn):
    """Test code run beside the learner's (harness.where_learner_runs): its pid and the learner's result."""
    import os

    return os.getpid(), fn(x)


def test_numpy_results_and_checks_cross_the_boundary(submission, monkeypatch):
    """NumPy exercises (L25's flash_attention_numpy) return arrays and NumPy scalars: they come back as
    NumPy, equal, with their dtypes; a check run beside the learner's code runs in the worker."""
    import os

    import numpy as np


    submission("n", NUMPY_RESULTS)
    fn = harness.learner("u", "n", "stats")
    here = fn([1.0, 2.0, 4.0])
    monkeypatch.setenv(worker.ISOLATE_ENV, "1")
    try:
        there = fn([1.0, 2.0, 4.0])
        pid, checked = worker.where_learner_runs(_checked_in_worker, [1.0, 2.0, 4.0], fn)
    finally:
        worker.end_test()
    for got in (there, checked):
        cumsum, info, (ints,) = got
        assert isinstance(cumsum, np.ndarray) and cumsum.dtype == np.float64 and cumsum.tolist() == [1.0, 3.0, 7.0]
        assert isinstance(info["max"], np.float64) and info["max"] == 4.0
        assert isinstance(info["n"], np.int32) and info["n"] == 3
        assert ints.dtype == np.int16 and ints.tolist() == [0, 1, 2]
    assert pid != os.getpid()
    assert np.array_equal(here[0], there[0])


def test_the_judge_refuses_to_fork_a_worker_after_initializing_cuda(submission, monkeypatch):
    """A worker forked after CUDA was initialized cannot use the GPU: the judge must never touch it."""

    submission("n", NUMPY_RESULTS)
    monkeypatch.setenv(worker.ISOLATE_ENV, "1")
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    try:
        with pytest.raises(RuntimeError, match="judge initialized CUDA"):
            harness.learner("u", "n", "stats")([1.0])
    finally:
        worker.end_test()


# ---- R3.8: the learner's function is given copies; only declared written arguments come back ----------------------

WRITERS = """
import torch

KEPT = []

def bump(x):
    x.add_(1)

def through_numpy(x):
    x.numpy()[:] = 0

def append(xs):
    xs.append(99)

def nested(d):
    d["rows"][0].fill_(7)

def stream_list(it):
    it.__reduce__()[1][0][:] = [0.0]
    return 0.0

def keep(x):
    KEPT.append(x)
    return float(x.sum())

def write_kept(x):
    for old in KEPT:
        old.fill_(9)
    return float(x.sum())

def scale_into(x, out):
    out.copy_(x * 2)

def scale_and_bump(x, out):
    out.copy_(x * 2)
    x.add_(1)

def resize_out(x, out):
    out.resize_(1)

def layout(x, y):
    return list(x.stride()), x.storage_offset(), x.untyped_storage().data_ptr() == y.untyped_storage().data_ptr()
"""


@pytest.fixture(params=["make grade", "batch"])
def mode(request, submission, monkeypatch):
    """Both paths a learner call takes: in this process, or through batch grading's worker."""
    submission("w", WRITERS)
    if request.param == "batch":
        monkeypatch.setenv(worker.ISOLATE_ENV, "1")
    yield request.param
    worker.end_test()


@pytest.mark.parametrize("name, make_args, which", [
    ("bump", lambda: (torch.zeros(3),), "#0 (`x`)"),
    ("through_numpy", lambda: (torch.ones(3),), "#0 (`x`)"),
    ("append", lambda: ([1, 2],), "#0 (`xs`)"),
    ("nested", lambda: ({"rows": [torch.ones(2)]},), "#0 (`d`)"),
])
def test_a_write_into_an_undeclared_argument_is_refused_and_never_reaches_the_test(mode, name, make_args, which):
    """Whatever the learner's code writes into what it is given (a tensor, through a NumPy view of it, a list, a
    tensor inside a dict) is refused with the argument's name, and the test's own objects stay as they were."""
    args = make_args()
    before = copy.deepcopy(args)
    with pytest.raises(AssertionError, match=rf"{name} modified its argument {re.escape(which)}: leave the caller"):
        harness.learner("u", "w", name)(*args)
    assert given.same_data(before, args), f"{mode}: {name} changed the test's objects: {args}"


def test_a_write_through_an_alias_or_a_kept_reference_stays_with_the_learner(mode):
    """A list reached through the iterator the test passed (its __reduce__), or a tensor kept from an earlier call
    and written later: copies both, so the test's list and tensor keep their values."""
    xs = [1.0, 2.0]
    assert harness.learner("u", "w", "stream_list")(iter(xs)) == 0.0
    assert xs == [1.0, 2.0]
    first = torch.ones(3)
    harness.learner("u", "w", "keep")(first)
    harness.learner("u", "w", "write_kept")(torch.ones(3))
    assert torch.equal(first, torch.ones(3))


def test_declared_written_arguments_are_written_back_and_only_those(mode):
    x, out = torch.arange(4.0), torch.zeros(4)
    scale = harness.learner("u", "w", "scale_into", writes={"out": 1})
    assert scale(x, out) is None
    assert torch.equal(out, torch.arange(4.0) * 2) and torch.equal(x, torch.arange(4.0))
    out = torch.zeros(4)
    with pytest.raises(AssertionError, match=r"scale_and_bump modified its argument #0 \(`x`\)"):
        harness.learner("u", "w", "scale_and_bump", writes={"out": 1})(x, out)
    assert torch.equal(x, torch.arange(4.0)) and torch.equal(out, torch.zeros(4)), "nothing comes back from a refusal"
    if mode == "make grade":  # batch: the arena keeps the tensor's shape, the judge copies back its values
        with pytest.raises(AssertionError, match="resize_out replaced or reshaped its argument `out`"):
            harness.learner("u", "w", "resize_out", writes={"out": 1})(x, out)


def test_writes_is_declared_by_position_for_non_kernel_exercises():
    with pytest.raises(ValueError, match="kernel exercise"):
        harness.learner("u", "w", "f", kernel=True, writes={"out": 1})
    with pytest.raises(ValueError, match="positions"):
        harness.learner("u", "w", "f", writes={"out": "1"})


def test_copies_keep_strides_offsets_and_shared_storage(submission):
    """The copy is the tensor the test passed, layout and all: a strided view keeps its strides and offset, and one
    tensor passed twice is one storage to the learner (L06 counts distinct storages)."""
    submission("w", WRITERS)
    base = torch.arange(24.0).reshape(4, 6)
    view = base[1:, ::2]
    assert harness.learner("u", "w", "layout")(view, view) == ([6, 2], 6, True)
    assert harness.learner("u", "w", "layout")(view, view.clone()) == ([6, 2], 6, False)


ARENA_WRITER = """
def poke(x, out):
    import grader.instrument.worker as w
    w._arena[0:4] = bytes(4)  # x's first element, behind the copy the worker's harness handed over
"""


def test_the_judge_refuses_a_write_into_the_arena_behind_the_copies(submission, monkeypatch):
    """Batch grading: the copies the worker's harness hands over are courtesy; the boundary is the judge's own
    comparison of the shared arena with its tensors, which a learner writing the arena directly does not pass."""
    submission("a", ARENA_WRITER)
    monkeypatch.setenv(worker.ISOLATE_ENV, "1")
    x, out = torch.ones(2), torch.zeros(2)
    try:
        with pytest.raises(AssertionError, match="poke modified its input #0"):
            harness.learner("u", "a", "poke", writes={"out": 1})(x, out)
    finally:
        worker.end_test()
    assert torch.equal(x, torch.ones(2))


COUNTED = """
def run(model, xs):
    xs.append(0)
    return model(3)
"""


class _Counting:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, n: int) -> int:
        self.calls += 1
        return n


def _check_counts(fn, xs):
    """A check beside the learner's code: the learner function it calls works on the check's own objects."""
    model = _Counting()
    fn(model, xs)
    return model.calls, list(xs)


def test_a_check_beside_the_learner_works_on_its_own_objects_and_the_judge_keeps_its_own(submission, monkeypatch):
    """where_learner_runs: the check is trusted code in the learner's process; the learner functions it calls get
    its objects (C2 counts the model's calls), while the judge's arguments reach the check as copies."""
    submission("c", COUNTED)
    fn, xs = harness.learner("u", "c", "run"), [1]
    assert harness.where_learner_runs(_check_counts, fn, xs) == (1, [1, 0])
    monkeypatch.setenv(worker.ISOLATE_ENV, "1")
    try:
        assert harness.where_learner_runs(_check_counts, fn, xs) == (1, [1, 0])
    finally:
        worker.end_test()
    assert xs == [1], "the judge's list is not the check's"


def test_written_arguments_are_passed_by_position(submission):
    submission("w", WRITERS)
    with pytest.raises(RuntimeError, match="passed by position"):
        harness.learner("u", "w", "scale_into", writes={"out": 1})(torch.ones(2), out=torch.zeros(2))
