"""The one loading layer between grading tests and learner code (CS336's ``adapters.py``, once).

A test module declares what it grades::

    softmax_fused = learner("l23_online_softmax", "softmax", "softmax_fused", kernel=True)

and calls ``softmax_fused(x)``. Nothing is loaded at import: each call loads the target's file
(cached), finds the function and runs it, so a missing file, a syntax error or a missing function
fails only the tests that need it, with a message that says what to fix. For kernel exercises the
call also refuses torch compute ops (:mod:`grader.kernels.guard`) and keeps inputs unmodified.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from grader._lazy import torch
from grader.grading import boundary, target, timeout
from grader.grading.target import SubmissionError
from grader.kernels import audit


@dataclass
class _KernelMode:
    """How kernels load in this process; changed only by :func:`gpu_mode`, read by :func:`kernels_compiled`."""

    compiled: bool = False  # compiled for the GPU; False: Triton's interpreter on the CPU


_MODE = _KernelMode()
LAST_CALL: list[tuple[str, tuple, dict]] = []  # the running test's latest learner call (the plugin shows it on failure)


@contextlib.contextmanager
def gpu_mode(on: bool) -> Iterator[None]:
    """Within the block, learner kernels and kernels_ref load compiled for the GPU (``on``) or interpreted.

    The plugin runs gpu_perf tests under ``gpu_mode(True)`` and every other tier under ``gpu_mode(False)``;
    :func:`on_device` checks run under ``gpu_mode(not dry_run)``. The previous mode comes back on exit.
    """
    previous = _MODE.compiled
    _MODE.compiled = on
    try:
        yield
    finally:
        _MODE.compiled = previous


def kernels_compiled() -> bool:
    """Whether kernels load compiled for the GPU here (inside ``gpu_mode(True)``), not interpreted."""
    return _MODE.compiled


@dataclass(frozen=True)
class LearnerFunction:
    """A function of the target's ``<unit>/<module>.py``, resolved at call time."""

    unit: str
    module: str
    name: str
    kernel: bool = False
    audited: bool = False  # the static audit also for a non-kernel exercise the grader measures in-process

    def resolve(self) -> Callable[..., Any]:
        """The learner's function object, or SubmissionError saying what is wrong.

        Never in batch grading's judge: loading the module runs the submission's code. Ask for
        :meth:`defaults` or :func:`learner_value` instead (they are answered by the worker).
        """
        _not_in_the_judge(f"{self.unit}/{self.module}.py")
        mod = target.load_module(self.unit, self.module, interpret=not kernels_compiled())
        fn = getattr(mod, self.name, None)
        if fn is None:
            raise SubmissionError(
                f"{self.unit}/{self.module}.py has no `{self.name}`: define it with the signature "
                f"given in the exercise (restore the stub from exercises/ if you renamed it)"
            )
        if not callable(fn):
            raise SubmissionError(f"{self.unit}/{self.module}.py: `{self.name}` is not a function")
        return fn

    def check_signature(self, *args: Any, **kwargs: Any) -> None:
        """Fail clearly when the learner changed the contract's parameters."""
        fn = self.resolve()
        try:
            inspect.signature(fn).bind(*args, **kwargs)
        except TypeError as exc:
            raise SubmissionError(
                f"{self.name}{inspect.signature(fn)} does not accept the contract's arguments "
                f"({exc}); keep the signature of the stub"
            ) from None
        except ValueError:  # builtins without a signature: let the call decide
            pass

    def defaults(self) -> dict[str, Any]:
        """The default values of the learner's keyword parameters (plain data), read where its code runs."""
        return _beside_learner(f"{self.name} (its defaults)", self._defaults_here, (), {})

    def _defaults_here(self) -> dict[str, Any]:
        try:
            params = inspect.signature(self.resolve()).parameters.values()
        except ValueError:  # builtins without a signature
            return {}
        return {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}

    def timed(self) -> Callable[..., Any]:
        """The learner's function as gpu_perf times it: torch compute still refused (the guard's mode,
        as in every graded call), without the per-call input copies and checks, which would be timed
        too. Only where the learner's code runs (a check passed to :func:`on_device`)."""
        fn = self.resolve()
        if not self.kernel:
            return fn
        from grader.kernels import guard

        def run(*args: Any, **kwargs: Any) -> Any:
            with guard.refuse_torch_compute(self.name):
                return _unwrap_interpreter_error(fn, *args, **kwargs)

        return run

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        LAST_CALL[:] = [(self.name, args, kwargs)]
        # read by the judge before any of the submission's code runs (grader.kernels.audit)
        if self.kernel or self.audited:
            audit.check(target.target_root() / self.unit, self.module, self.name, kernel=self.kernel)
        if not boundary.enabled():
            with timeout.limit(self.name):  # make grade: a call past --timeout fails its test (grading/timeout.py)
                return self._call_here(*args, **kwargs)
        # Batch grading: the learner's code runs in a forked worker (grader.grading.boundary), which also
        # checks, where the learner cannot patch it, that a kernel left its inputs unmodified.
        return boundary.call(self.name, self._call_here, args, kwargs, inputs_read_only=self.kernel)

    def _call_here(self, *args: Any, **kwargs: Any) -> Any:
        fn = self.resolve()
        self.check_signature(*args, **kwargs)
        if not self.kernel:
            return fn(*args, **kwargs)
        from grader.kernels import guard, traffic  # guard imports torch: only kernel exercises need it

        inputs = [a.clone() for a in args if isinstance(a, torch.Tensor)]
        with guard.refuse_torch_compute(self.name), traffic.record_writes() as written:
            out = _unwrap_interpreter_error(fn, *args, **kwargs)
        _check_inputs_untouched(self.name, [a for a in args if isinstance(a, torch.Tensor)], inputs)
        _check_not_an_input(self.name, out, args)
        if not kernels_compiled():  # compiled kernels are not traced; every CPU tier runs them interpreted
            _check_written_by_kernel(self.name, out, written)
        return out


def learner(unit: str, module: str, name: str, *, kernel: bool = False, audited: bool = False) -> LearnerFunction:
    """Declare a learner function a test module grades (see the module docstring)."""
    return LearnerFunction(unit, module, name, kernel, audited)


def where_learner_runs(check: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``check(*args, **kwargs)`` in the process where the learner's code runs, its result (data) here.

    For measurements that must be taken beside the learner's code (the NumPy memory peak of a call
    with ``tracemalloc``): ``check`` is trusted test code at module level of a test file. In ``make
    grade`` it runs here; in batch grading, in the test's worker.
    """
    return _beside_learner(f"{getattr(check, '__name__', 'check')} (beside the learner's code)", check, args, kwargs)


def on_device(check: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``check(*args, **kwargs)`` where the learner's code runs, with kernels compiled for the GPU.

    ``check`` is trusted test code, defined at module level in a test file, that drives the learner's
    code on the device (gpu_perf timings, .cu kernels run on a GPU) and returns plain data: numbers,
    dicts, CPU tensors (a band of the output to be compared here). In ``make grade`` it runs in this
    process; in batch grading, in the test's worker, so the judge never loads the submission nor
    touches CUDA (a worker forked from a process that initialized CUDA could not use it). The caller
    compares and awards from what comes back.
    """
    label = f"{getattr(check, '__name__', 'check')} (on the device)"
    return _beside_learner(label, _on_device_here, (check, args, kwargs), {})


def _beside_learner(label: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``fn(*args, **kwargs)`` in batch grading's worker (answered as data), or here in ``make grade``."""
    if boundary.enabled():
        return boundary.call(label, fn, args, kwargs, inputs_read_only=False)
    return fn(*args, **kwargs)


def _on_device_here(check: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    from grader.kernels import perf

    with gpu_mode(not perf.dry_run()):  # the dry run interprets the kernels on the CPU
        return _to_cpu(check(*args, **kwargs))


def _to_cpu(value: Any) -> Any:
    """Tensors moved to the CPU, through dicts, lists and tuples: the judge must never map CUDA memory."""
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", copy=True)  # a copy: a view would carry its whole storage
    if isinstance(value, dict):
        return {k: _to_cpu(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_to_cpu(v) for v in value)
    return value


def learner_value(unit: str, module: str, name: str) -> Any:
    """A module-level value of the target (``cuda_sgemm.TILE``), None where it is not defined."""
    return _beside_learner(f"{module}.{name}", _value_here, (unit, module, name), {})


def _value_here(unit: str, module: str, name: str) -> Any:
    _not_in_the_judge(f"{unit}/{module}.py")
    return getattr(target.load_module(unit, module), name, None)


def _not_in_the_judge(what: str) -> None:
    if boundary.enabled():
        raise RuntimeError(
            f"grader bug: a test loads {what} in batch grading's judge, where the submission's code must "
            "never run; call the learner through harness.learner(...), .defaults() or learner_value()"
        )


def _unwrap_interpreter_error(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Re-raise what a kernel raised, not Triton's InterpreterError(repr(...)) around it."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        root: BaseException = exc
        while type(root).__name__ == "InterpreterError" and root.__cause__ is not None:
            root = root.__cause__
        if root is exc:
            raise
        raise root.with_traceback(root.__traceback__) from None


def _check_inputs_untouched(name: str, after: list[torch.Tensor], before: list[torch.Tensor]) -> None:
    for i, (a, b) in enumerate(zip(after, before, strict=True)):
        if not boundary.same_values(a, b):
            raise AssertionError(f"{name} modified its input #{i}: write results to a new tensor")


def _check_written_by_kernel(name: str, out: Any, written: list) -> None:
    """Every element a kernel exercise returns must have been stored by one of its kernels in this call.

    The guard refuses torch compute; this catches the rest (NumPy on the host, bytes copied through
    a storage, a cached tensor): the result has to be the memory the Triton kernels wrote.
    """
    from grader.kernels import traffic

    outs = out if isinstance(out, tuple) else (out,)
    for i, o in enumerate(outs):
        if not isinstance(o, torch.Tensor) or o.numel() == 0:
            continue
        missing = traffic.unwritten_elements(o, written)
        if missing:
            which = f"output #{i}" if isinstance(out, tuple) else "its output"
            shape = "x".join(map(str, o.shape)) or "scalar"
            raise AssertionError(
                f"{name}: {missing} of {o.numel()} elements of {which} ({shape}) were not written by a Triton "
                "kernel during the call: compute the result in the kernel and return the tensor it stored "
                "into (a view of it is fine; a copy made on the host is not)"
            )


def _check_not_an_input(name: str, out: Any, args: tuple[Any, ...]) -> None:
    outs = out if isinstance(out, tuple) else (out,)
    ins = [a for a in args if isinstance(a, torch.Tensor)]
    for o in outs:
        if isinstance(o, torch.Tensor) and any(
            o.numel() and o.untyped_storage().data_ptr() == a.untyped_storage().data_ptr() for a in ins
        ):
            raise AssertionError(f"{name} returned its input (or a view of it): allocate the output")
