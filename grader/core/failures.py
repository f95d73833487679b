"""How a graded test failed, and the hint for that kind of failure.

A test's own hint (``@grade(..., hint=...)``) is written for one kind of failure: wrong values for a
correctness test, wrong traffic for an efficiency test, too slow for a gpu_perf test. Shown for any
other failure it misleads (a NaN output told to check its masks, an out-of-bounds store asked why it
loads twice), so the plugin classifies each failure and shows the test's hint only for the kind it
was written for, a hint about the kind of failure otherwise.
"""

from __future__ import annotations

import dataclasses
import re
from enum import StrEnum

from grader.core.results import Status, TestResult, Tier
from grader.i18n import N_, _


class FailureKind(StrEnum):
    NAN = "nan"  # NaN or inf in the output where the reference differs
    OUT_OF_BOUNDS = "out_of_bounds"  # a kernel touched memory outside its tensors
    VALUES = "values"  # finite values, or exact numbers, that differ from the reference
    TRAFFIC = "traffic"  # right values, wrong bytes, launches, sectors, banks or memory
    EXCEPTION = "exception"  # the learner's code raised
    TYPE = "type"  # wrong type, shape or dtype returned
    TIMEOUT = "timeout"  # a call ran past the time limit
    SLOW = "slow"  # a gpu_perf test's speed assertion
    SUBMISSION = "submission"  # the module does not load, or lacks the function (the message says what to fix)
    GATED = "gated"  # efficiency, speed or validation not scored because the exercise's values are wrong
    RACE = "race"  # a CUDA kernel's result depends on the order its threads run (a missing barrier)
    DIVERGENCE = "divergence"  # a barrier that not every thread of the block reaches
    WARP_MASK = "warp_mask"  # a warp primitive whose mask leaves out a lane that calls it, or names one that does not
    DEADLOCK = "deadlock"  # every rank waits for another (a ring of blocking sends)


# The kind each tier's own hint is written for.
OWN_KIND = {"correctness": FailureKind.VALUES, "efficiency": FailureKind.TRAFFIC, "gpu_perf": FailureKind.SLOW}

GENERIC = {  # translated where they are shown (grader.i18n)
    FailureKind.NAN: N_("NaN or inf where the reference is finite: an exp of a large value (subtract the row max "
                     "first), a division by zero (an empty or fully masked row), or a masked load without "
                     "`other=` (the masked lanes hold garbage)?"),
    FailureKind.OUT_OF_BOUNDS: N_("Your kernel touched memory outside its tensors: does every load and store of a "
                               "partial tile carry a mask (offsets < size), and does each offset use its own "
                               "stride?"),
    FailureKind.VALUES: N_("Wrong values: replay the case (the command above) and compare your output with the "
                        "expected one element by element."),
    FailureKind.TRAFFIC: N_("The values are right, the counted traffic is not: compare what your kernel loads and "
                         "stores with the unit's ledger in its README."),
    FailureKind.EXCEPTION: N_("Your code raised: the message says what, and where it could, which line of your file; "
                              "replay the case to see the inputs (`make run`)."),
    FailureKind.TYPE: N_("Return exactly what the docstring of the stub asks for: its type (an exact int, a "
                      "tensor, a tuple), its shape and its dtype."),
    FailureKind.TIMEOUT: N_("A call ran past the time limit: a loop whose condition never changes? Give it longer "
                         "with ARGS=\"--timeout 120\" if it is only slow."),
    FailureKind.RACE: N_("Two threads touch the same shared word with no barrier between them (the two lines are named "
                         "above): is there a __syncthreads() after the tile is written and before it is read, and "
                         "another before it is overwritten?"),
    FailureKind.DIVERGENCE: N_("A __syncthreads() that not every thread of the block reaches (inside an if on the "
                               "thread index, or a loop whose trip count differs per thread): can you move the barrier "
                               "out of the branch?"),
    FailureKind.WARP_MASK: N_("A warp primitive's mask does not match the lanes that call it: which lanes are active "
                              "at that line, and does the mask (0xffffffff for a full warp) name exactly them?"),
    FailureKind.DEADLOCK: N_("Every rank is waiting for another: a ring of blocking sends? Post the receive first on "
                             "alternate ranks, or use isend/irecv and wait on both."),
    FailureKind.SLOW: "",
    FailureKind.SUBMISSION: "",
    FailureKind.GATED: N_("Fix the correctness failures of this exercise first: its bad-argument checks, efficiency "
                       "and speed are scored only when its values are right."),
}

_NAN = re.compile(r"\b(nan|inf|-inf)\b|NaN or inf", re.IGNORECASE)
_TYPE = re.compile(r"return an exact int|expected a (number|dict|torch\.Tensor|tuple|list)|should be an array of "
                   r"shape|, not (float|bool|str|NoneType|tuple|list)\b|\bdtype\b.*expected|^[^:]*: shape .*expected",
                   re.IGNORECASE)
_TRAFFIC = re.compile(r"\b(loaded|stored|launch(es)?|sectors?|banks?|wavefronts?|shared.memory|shfl|spills?|"
                      r"allocated|peak|traffic|ledger|PTX|requests?)\b", re.IGNORECASE)
_SLOW = re.compile(r"\b(speed|speedup|slower|faster|µs|ms|TFLOP/s|GB/s)\b")


_CUDA_FAULT = re.compile(r"on the CPU executor: (race|divergence|warp primitive misuse|out-of-bounds access|"
                         r"a kernel that never returns)")
_CUDA_KIND = {"race": FailureKind.RACE, "divergence": FailureKind.DIVERGENCE,
              "warp primitive misuse": FailureKind.WARP_MASK, "out-of-bounds access": FailureKind.OUT_OF_BOUNDS,
              "a kernel that never returns": FailureKind.TIMEOUT}


def classify(exc: BaseException, tier: str, *, learner_raised: bool, timeout_type: type | None = None,
             submission_type: type | None = None) -> FailureKind:
    """The kind of a test's failure from its root exception. The kit's assertions say it (``failure_kind``);
    otherwise the exception's type and, for a plain AssertionError, the words of its message decide."""
    declared = getattr(exc, "failure_kind", None)
    if declared:
        return FailureKind(declared)
    if timeout_type is not None and isinstance(exc, timeout_type):
        return FailureKind.TIMEOUT
    if type(exc).__name__ == "KernelMemoryError" or (isinstance(exc, IndexError) and "out of bounds" in str(exc)):
        return FailureKind.OUT_OF_BOUNDS
    if submission_type is not None and isinstance(exc, submission_type):
        return FailureKind.SUBMISSION
    fault = _CUDA_FAULT.search(str(exc).split("\n", 1)[0])  # the CPU executor's verdicts, on any tier
    if fault:
        return _CUDA_KIND[fault.group(1)]
    if not isinstance(exc, AssertionError):  # raised by the test's own code on what it got back: a wrong type
        return FailureKind.TYPE if not learner_raised and isinstance(exc, TypeError | AttributeError) \
            else FailureKind.EXCEPTION
    return _assertion_kind(str(exc), tier)


def _assertion_kind(text: str, tier: str) -> FailureKind:
    first = text.strip().splitlines()[0] if text.strip() else ""
    if _NAN.search(first):
        return FailureKind.NAN
    if _TYPE.search(first):
        return FailureKind.TYPE
    if tier == "efficiency" and _TRAFFIC.search(first):
        return FailureKind.TRAFFIC
    if tier == "gpu_perf" and _SLOW.search(first):
        return FailureKind.SLOW
    return FailureKind.VALUES


def hint_for(kind: FailureKind, tier: str, own: str) -> str:
    """The test's own hint where the failure is the kind it was written for, else the hint of the kind."""
    if kind is OWN_KIND.get(tier) and own:
        return own
    return GENERIC[kind]


def gate(earlier: list[TestResult], result: TestResult) -> TestResult:
    """No efficiency or gpu_perf points while the exercise fails a correctness test among ``earlier``, no
    validation points while it fails one that is not a validation test: ``result`` made a failure that says so.
    A function that only raises ValueError passes every bad-argument test; those points count once its values
    are right too. The plugin gates each test as it ends (validation tests run last of their exercise's
    correctness tests); ``grader.api`` a whole run."""
    if not _gated_kind(result) or result.status is not Status.PASSED or result.score == 0:
        return result
    wrong = next((r for r in earlier if r.unit == result.unit and r.exercise == result.exercise
                  and r.tier is Tier.CORRECTNESS and not (result.validation and r.validation)
                  and r.status in (Status.FAILED, Status.TODO)), None)
    if wrong is None:
        return _pending_with_its_values(earlier, result)
    what = N_("validation") if result.tier is Tier.CORRECTNESS else str(result.tier)
    return dataclasses.replace(
        result, status=Status.FAILED, score=0.0, kind=FailureKind.GATED.value,
        message=_("not scored while `{exercise}` fails its correctness tests (first: {test}); this {what} test "
                  "itself passed").format(exercise=result.exercise, test=wrong.name, what=_(what)),
        hint=GENERIC[FailureKind.GATED], record={**result.record, "gated_by": wrong.nodeid})


def _pending_with_its_values(earlier: list[TestResult], result: TestResult) -> TestResult:
    """An efficiency test of an exercise whose values are checked only on a GPU (a CUDA C++ kernel: its
    correctness tests are pending here) is pending too: a passed compile check must not read as a PASS while
    nobody knows whether the kernel computes the right thing."""
    if result.tier is not Tier.EFFICIENCY:
        return result
    pending = next((r for r in earlier if r.unit == result.unit and r.exercise == result.exercise
                    and r.tier is Tier.CORRECTNESS and r.status is Status.PENDING_GPU), None)
    if pending is None:
        return result
    return dataclasses.replace(
        result, status=Status.PENDING_GPU, score=0.0,
        message=_("pending GPU: scored once `{exercise}`'s values are checked on a GPU (its correctness tests launch "
                  "the kernel there); this efficiency test itself passed here").format(exercise=result.exercise),
        record={**result.record, "pending_with": pending.nodeid})


def _gated_kind(result: TestResult) -> bool:
    """Scored only while the exercise's values are right: efficiency, gpu_perf and validation tests."""
    return result.tier is not Tier.CORRECTNESS or result.validation


def gate_all(results: list[TestResult]) -> list[TestResult]:
    """:func:`gate` over a whole run (a run split over several processes gates across them)."""
    return [gate(results, r) for r in results]


REPLAY_ADVICE = re.compile(r"^.*(reproduce_failure|You can reproduce this example).*$\n?", re.MULTILINE)


def drop_replay_advice(notes: str) -> str:
    """Hypothesis's notes without its ``@reproduce_failure`` advice (the learner has no test function to
    decorate: the grader prints its own replay command instead)."""
    return REPLAY_ADVICE.sub("", notes).strip()


def trim_output(text: str, *, lines: int = 30, chars: int = 3000) -> str:
    """The last ``lines`` lines (at most ``chars`` characters) of what a test printed, with a note if cut."""
    text = text.rstrip()
    if not text:
        return ""
    kept = text.splitlines()[-lines:]
    out = "\n".join(kept)[-chars:]
    cut = len(text) - len(out)
    return (_("[{n} earlier characters not shown]").format(n=f"{cut:,}") + "\n" if cut > 0 else "") + out
