"""The one loading layer between grading tests and learner code (CS336's ``adapters.py``, once).

A test module declares what it grades::

    softmax_fused = learner("l23_online_softmax", "softmax", "softmax_fused", kernel=True)

and calls ``softmax_fused(x)``. Nothing is loaded at import: each call loads the target's file
(cached), finds the function and runs it, so a missing file, a syntax error or a missing function
fails only the tests that need it, with a message that says what to fix. For kernel exercises the
call also refuses torch compute ops (:mod:`grader.instrument.guard`) and keeps inputs unmodified.

The learner's function is given copies of the test's arguments (:mod:`grader.instrument.given`; in batch grading
they also cross into the worker as data): what it writes, keeps or returns never aliases an object the test reads
afterwards. An exercise that computes in place declares the tensor arguments it writes,
``learner(..., writes={"param": 0, "exp_avg": 2})`` (parameter name: position), and only those are written back
after the call; a write into any other argument is refused with a message naming it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from grader._lazy import torch
from grader.core import target, timeout
from grader.core.target import SubmissionError
from grader.instrument import device, given, loader, worker
from grader.instrument.worker import on_device, where_learner_runs  # noqa: F401  (the kit's names)
from grader.judge import audit

LAST_CALL: list[tuple[str, tuple, dict]] = []  # the running test's latest learner call (the plugin shows it on failure)


@dataclass(frozen=True)
class LearnerFunction:
    """A function of the target's ``<unit>/<module>.py``, resolved at call time."""

    unit: str
    module: str
    name: str
    kernel: bool = False
    audited: bool = False  # the static audit also for a non-kernel exercise the grader measures in-process
    # The positional tensor arguments an in-place exercise writes (position -> parameter name): written back into
    # the test's tensors after the call; every other argument the learner's code is given is a copy, left as it was.
    writes: tuple[tuple[int, str], ...] = ()

    def resolve(self) -> Callable[..., Any]:
        """The learner's function object, or SubmissionError saying what is wrong.

        Never in batch grading's judge: loading the module runs the submission's code. Ask for
        :meth:`defaults` or :func:`learner_value` instead (they are answered by the worker).
        """
        _not_in_the_judge(f"{self.unit}/{self.module}.py")
        mod = loader.load_module(self.unit, self.module, interpret=not device.kernels_compiled())
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
        return worker.beside_learner(f"{self.name} (its defaults)", self._defaults_here, (), {})

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
        from grader.instrument import guard

        def run(*args: Any, **kwargs: Any) -> Any:
            with guard.refuse_torch_compute(self.name):
                return _unwrap_interpreter_error(fn, *args, **kwargs)

        return run

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        LAST_CALL[:] = [(self.name, args, kwargs)]
        if self.writes and {name for _, name in self.writes} & kwargs.keys():
            raise RuntimeError(f"grader bug: {self.name}'s written arguments are passed by position (writes=)")
        # read by the judge before any of the submission's code runs (grader.judge.audit)
        if self.kernel or self.audited:
            audit.check(target.target_root() / self.unit, self.module, self.name, kernel=self.kernel)
        if not worker.enabled():
            with timeout.limit(self.name):  # make grade: a call past --timeout fails its test (grading/timeout.py)
                if worker.in_check():  # trusted code beside the learner's (where_learner_runs): its own objects
                    return self._call_here(*args, **kwargs)
                return self._call_given_copies(*args, **kwargs)
        # Batch grading: the learner's code runs in a forked worker (grader.instrument.worker), which also checks,
        # where the learner cannot patch it, that no tensor argument but the declared written ones changed.
        return worker.call(self.name, self._call_given_copies, args, kwargs, written=tuple(dict(self.writes)))

    def _call_given_copies(self, *args: Any, **kwargs: Any) -> Any:
        """The call on copies of the test's arguments: the declared written tensors copied back afterwards, a write
        into any other argument refused (grader.instrument.given)."""
        mine, mine_kwargs = given.copies(args, kwargs)
        out = self._call_here(*mine, **mine_kwargs)
        given.check_untouched(self.name, args, mine, kwargs, mine_kwargs, written=dict(self.writes),
                              names=self._parameter_name)
        given.written_back(self.name, dict(self.writes), args, mine)
        return out

    def _parameter_name(self, i: int) -> str | None:
        """The learner's name for positional argument ``i`` (for a message only: the learner's signature decides
        nothing here)."""
        try:
            params = list(inspect.signature(self.resolve()).parameters.values())
        except (TypeError, ValueError, SubmissionError):
            return None
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        return params[i].name if i < len(params) and params[i].kind in positional else None

    def _call_here(self, *args: Any, **kwargs: Any) -> Any:
        fn = self.resolve()
        self.check_signature(*args, **kwargs)
        if not self.kernel:
            return fn(*args, **kwargs)
        from grader.instrument import guard, traffic  # guard imports torch: only kernel exercises need it

        inputs = [a.clone() for a in args if isinstance(a, torch.Tensor)]
        with guard.refuse_torch_compute(self.name), traffic.record_writes() as written:
            out = _unwrap_interpreter_error(fn, *args, **kwargs)
        _check_inputs_untouched(self.name, [a for a in args if isinstance(a, torch.Tensor)], inputs)
        _check_not_an_input(self.name, out, args)
        if not device.kernels_compiled():  # compiled kernels are not traced; every CPU tier runs them interpreted
            _check_written_by_kernel(self.name, out, written)
        return out


def learner(unit: str, module: str, name: str, *, kernel: bool = False, audited: bool = False,
            writes: Mapping[str, int] | None = None) -> LearnerFunction:
    """Declare a learner function a test module grades (see the module docstring). ``writes``: for an exercise that
    computes in place, its written tensor arguments, parameter name -> position (pass them positionally)."""
    declared = dict(writes or {})
    if declared and kernel:
        raise ValueError(f"grader bug: {name} is a kernel exercise, which allocates its output: no writes=")
    if not all(isinstance(k, str) and type(v) is int and v >= 0 for k, v in declared.items()):
        raise ValueError(f"grader bug: {name}'s writes= maps parameter names to positions (ints), got {declared!r}")
    by_position = tuple(sorted((v, k) for k, v in declared.items()))
    return LearnerFunction(unit, module, name, kernel, audited, by_position)


def learner_value(unit: str, module: str, name: str) -> Any:
    """A module-level value of the target (``cuda_sgemm.TILE``), None where it is not defined."""
    return worker.beside_learner(f"{module}.{name}", _value_here, (unit, module, name), {})


def _value_here(unit: str, module: str, name: str) -> Any:
    _not_in_the_judge(f"{unit}/{module}.py")
    return getattr(loader.load_module(unit, module), name, None)


def _not_in_the_judge(what: str) -> None:
    if worker.enabled():
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
        if not worker.same_values(a, b):
            raise AssertionError(f"{name} modified its input #{i}: write results to a new tensor")


def _check_written_by_kernel(name: str, out: Any, written: list) -> None:
    """Every element a kernel exercise returns must have been stored by one of its kernels in this call.

    The guard refuses torch compute; this catches the rest (NumPy on the host, bytes copied through
    a storage, a cached tensor): the result has to be the memory the Triton kernels wrote.
    """
    from grader.instrument import traffic

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
