"""The trusted boundary inside a grading process: learner code runs in a forked child, never here.

In batch grading (``DRIPSTONE_ISOLATE=1``, set by :mod:`grader.instructor.sandbox`) the pytest process is the
judge. The first learner call of a test forks a *worker* (:func:`grader.core.child.start`: it dies with the judge
and leads its own process group); the worker loads the learner's module,
runs each call of that test under the kernel guard and the traffic counters and sends back a plain
result; the plugin ends it after the last of the adjacent tests that grade the same exercise in the same GPU
mode (:func:`end_test`), so nothing the learner keeps in memory outlives the tests of one exercise: they share a
worker, as the examples hypothesis draws for one test do (what one of them leaves behind can only affect the next
tests of the same exercise, as it would in ``make grade``, where every test shares one process; a test whose call
hung or ended the worker still leaves the next test a fresh one). The learner's code never runs in the process
that compares outputs and records scores, so it cannot patch ``grader``, ``torch.allclose`` or the plugin, nor
write a result line:

* the result travels as ``torch.save`` bytes read back with ``weights_only=True`` (tensors, numbers,
  tuples: nothing that runs code when loaded), and an exception as plain strings; a result of plain Python
  values only (None, bool, int, float, str, tuples, lists, dicts of them: most ledger calls) travels as tagged
  JSON instead, ~0.5 ms less per call, and is rebuilt with the same types;
* tensor arguments reach the worker through a shared-memory arena mapped before the fork; the
  parent compares the arena with its own copy after the call, so an input the learner mutated is
  rejected by a check the learner cannot patch, and copies back only the tensors an in-place exercise
  declares written (the other arguments are pickled: the worker's are copies);
* file descriptors registered with :func:`protect_fd` (the results channel) are closed in the child
  before any learner code runs, and the parent is made non-dumpable, so the child cannot reopen
  them through ``/proc/<ppid>/fd`` nor ptrace the parent;
* a call that does not return within ``DRIPSTONE_CALL_TIMEOUT`` seconds is killed and later calls
  of the same function fail at once (a hang costs that exercise, not the whole submission);
* a worker that exits (``sys.exit``, ``os._exit``) or dies of a limit fails that call only; the
  next call forks a fresh one.

A fork costs tens of milliseconds with torch loaded (page tables), and a fresh worker loads the learner's
module and interprets each kernel's source again, which is why there is one worker per exercise's tests
rather than one per call (hypothesis calls a function hundreds of times) or per test (L23: 11 workers
instead of 33).

What the child reports besides its output (bytes counted by the traffic hook, a guard refusal, the
written-by-a-kernel check) is computed where the learner's code runs; the judge's static audit
(:mod:`grader.judge.audit`, before the first call) refuses the code that could forge it (grader/BATCH.md).
Single-learner ``make grade`` does not fork: a learner cheating on their own machine only fools
themselves, and grading stays fast.

Where the sandbox sets ``DRIPSTONE_TMP_BYTES``, the judge also watches ``$TMPDIR`` while a call
runs (and after it returns): a worker that fills it past the cap is stopped and its files deleted,
so a disk bomb costs that exercise even where bwrap cannot cap its tmpfs (bubblewrap < 0.8).
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import io
import json
import mmap
import os
import pickle
import signal
import sys
import time
import traceback
from collections.abc import Callable, Collection, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from grader._lazy import torch
from grader.core import child
from grader.core.target import SubmissionError, learner_frame
from grader.instrument import given, traffic

ISOLATE_ENV = "DRIPSTONE_ISOLATE"
CALL_TIMEOUT_ENV = "DRIPSTONE_CALL_TIMEOUT"
TMP_BYTES_ENV = "DRIPSTONE_TMP_BYTES"  # the judge stops a call whose worker fills $TMPDIR past this
DISK_POLL_S = 0.1
MAX_TMP_ENTRIES = 20_000
DEFAULT_CALL_TIMEOUT_S = 60.0
MAX_REPLY_BYTES = 256 * 2**20
ARENA_BYTES = 256 * 2**20  # shared inputs of one call; only the pages touched cost memory
PR_SET_DUMPABLE = 4
_JSON = b"J"  # a reply of plain Python values (torch.save's start with "PK", a zip)
# When grading began here (this module is imported before any learner code runs; less the coarse file clock's lag):
# the disk watch counts and deletes only what appeared in $TMPDIR since, never what was there before.
_STARTED = time.time() - 0.05

_protected: set[int] = set()
_stopped: dict[str, str] = {}  # functions stopped for hanging or filling the disk: not called again in this run
_ended: dict[str, str] = {}  # functions that ended their worker in this test: not called again in it


class LearnerRaised(Exception):
    """Stands for an exception type of the learner's that is not rebuilt by name here."""


class LearnerCallFailed(AssertionError):
    """The learner's call hung, ended its process or returned something that is not data."""


_in_worker = False


def enabled() -> bool:
    """Batch grading, in the judge (inside a worker, calls run where they are)."""
    return os.environ.get(ISOLATE_ENV) == "1" and not _in_worker


# What a worker would import on behalf of learner code of a kind, by the top-level package a learner module imports
# ("" for every learner module): its own imports, and what the Triton interpreter and numba's CUDA simulator import
# on a first launch. The judge imports them once, before it forks any worker (:func:`warm`), so each worker
# starts with them loaded instead of importing them again (numba's simulator is ~260 modules, 0.6-2 s per worker).
# Trusted library code from the judge's import path, chosen from this table only: the learner's text selects a
# row, never a module name. Triton's and numba's rows only where they run on the CPU (interpreter, simulator).
WARM: dict[str, tuple[str, ...]] = {
    "": ("grader.validate",),
    "triton": ("grader.instrument.interpreter_fixes", "grader.instrument.guard", "numpy.ma",
               "triton.compiler.code_generator", "triton.experimental.gluon", "triton.language.extra.libdevice"),
    "numba": ("numba.cuda", "grader.instrument.guard"),
}
_WARM_WHEN = {"triton": ("TRITON_INTERPRET", "1"), "numba": ("NUMBA_ENABLE_CUDASIM", "1")}
WARM_MAX_BYTES = 2**20  # a learner file larger than this is not read for warming


def warm(paths: Iterable[Path]) -> list[str]:
    """In the judge, before any worker exists: import the :data:`WARM` rows the learner modules at ``paths`` (files,
    or folders of them) select, read as text, never run; returns the modules imported. A module that is not
    installed is skipped."""
    import ast
    import importlib

    rows = {""}
    for named in map(Path, paths):
        for path in sorted(named.glob("*.py")) if named.is_dir() else [named] if named.is_file() else []:
            try:
                if path.stat().st_size > WARM_MAX_BYTES:  # not a module to read here: its grading says what it is
                    continue
                tree = ast.parse(path.read_bytes())
            except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):  # its grading says what is wrong
                continue
            for node in ast.walk(tree):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
                rows.update(n.split(".")[0] for n in names if n.split(".")[0] in WARM)
    done = []
    for row in sorted(rows):
        env = _WARM_WHEN.get(row)
        if env and os.environ.get(env[0]) != env[1]:
            continue
        for name in WARM[row]:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)
                done.append(name)
    return done


def protect_fd(fd: int) -> None:
    """Close ``fd`` in every worker before learner code runs; make this process non-dumpable."""
    _protected.add(fd)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def call_timeout_s() -> float:
    return float(os.environ.get(CALL_TIMEOUT_ENV) or DEFAULT_CALL_TIMEOUT_S)


@dataclass(frozen=True)
class _Raised:
    type_name: str
    message: str
    where: str


@dataclass(frozen=True)
class _Shared:
    """Where one tensor argument lies in the arena: rebuilt with the same strides in the worker."""

    offset: int
    nbytes: int
    dtype: torch.dtype
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    storage_offset: int

    def view(self, arena: mmap.mmap) -> torch.Tensor:
        raw = torch.frombuffer(arena, dtype=torch.uint8, count=self.nbytes, offset=self.offset)
        return raw.view(self.dtype).as_strided(self.shape, self.stride, self.storage_offset)


@dataclass
class _Worker:
    process: child.Child  # forked by grader.core.child: dies with the judge, leads its own process group
    requests: int  # fd the parent writes requests to
    replies: int  # fd the parent reads replies from


_arena: mmap.mmap | None = None
_worker: _Worker | None = None


def call(
    name: str, run: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], *,
    written: Collection[int] = (),
) -> Any:
    """``run(*args, **kwargs)`` in this test's worker; its result (data only) or its exception, rebuilt here.

    Tensor arguments go through the shared arena, the others are pickled: the worker works on copies. Afterwards
    the arena is compared with the caller's tensors, here, in the trusted process: a changed tensor raises
    AssertionError, unless its position is in ``written`` (an exercise that computes in place into it, declared by
    its test), whose values are then copied back. Nothing else the call wrote ever reaches the caller's objects.
    """
    if name in _stopped:
        raise LearnerCallFailed(f"{name} {_stopped[name]} in an earlier call and was stopped; not called again")
    if name in _ended:  # hypothesis would call it hundreds of times while shrinking, a fork each
        raise LearnerCallFailed(_ended[name])
    worker = _ensure_worker()
    shared_args, placed = _share(args)
    request = pickle.dumps((run, shared_args, kwargs, len(traffic.open_counters())))
    reply = _exchange(worker, name, request)
    for position, spec, original in placed:
        if position in written:
            with torch.no_grad():
                original.copy_(spec.view(_arena))
        elif not same_values(spec.view(_arena), original):
            raise AssertionError(f"{name} modified its input #{position}: write results to a new tensor")
    return _unpack(name, reply)


def end_test(*, keep_worker: bool = False) -> None:
    """After every test (the plugin): stop its worker, unless ``keep_worker`` (the next test grades the same
    exercise, or is another case of the same test function)."""
    global _worker
    _ended.clear()
    if _worker is not None and not keep_worker:
        _worker.process.stop()  # its group: whatever it forked ends with it
        for fd in (_worker.requests, _worker.replies):
            with contextlib.suppress(OSError):
                os.close(fd)
        _worker = None


def same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal, NaNs in the same places counting as equal (an input left untouched)."""
    return torch.equal(a, b) or (
        a.is_floating_point() and torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())
    )


def _share(args: tuple[Any, ...]) -> tuple[tuple[Any, ...], list[tuple[int, _Shared, torch.Tensor]]]:
    """Tensor arguments copied into the arena (same storage layout), with their positions; others passed as they
    are (pickled)."""
    out, placed, offset = [], [], 0
    for position, a in enumerate(args):
        if not isinstance(a, torch.Tensor):
            out.append(a)
            continue
        storage = a.untyped_storage()
        if storage.nbytes() == 0:  # nothing to share (frombuffer refuses a count of 0): sent as it is
            out.append(a.detach().clone())
            continue
        if offset + storage.nbytes() > ARENA_BYTES:
            raise RuntimeError(f"grader: inputs over {ARENA_BYTES >> 20} MiB do not fit the shared arena")
        spec = _Shared(offset, storage.nbytes(), a.dtype, tuple(a.shape), a.stride(), a.storage_offset())
        raw = torch.empty(storage.nbytes(), dtype=torch.uint8)
        raw.untyped_storage().copy_(storage)
        torch.frombuffer(_arena, dtype=torch.uint8, count=spec.nbytes, offset=offset).copy_(raw)
        out.append(spec)
        placed.append((position, spec, a))
        offset += -(-storage.nbytes() // 64) * 64
    return tuple(out), placed


def _ensure_worker() -> _Worker:
    global _arena, _worker
    if _arena is None:
        _arena = mmap.mmap(-1, ARENA_BYTES)  # MAP_SHARED: the worker sees what the parent writes
    if _worker is not None:
        return _worker
    _refuse_fork_after_cuda()
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()

    def parent_ends_closed() -> None:
        os.close(req_w)
        os.close(rep_r)

    try:
        process = child.start(lambda: _serve(req_r, rep_w), setup=parent_ends_closed)
    finally:
        os.close(req_r)
        os.close(rep_w)
    _worker = _Worker(process, req_w, rep_r)
    return _worker


def _refuse_fork_after_cuda() -> None:
    """A worker forked from a process that initialized CUDA cannot use the GPU: the judge must not."""
    if "torch" in sys.modules and sys.modules["torch"].cuda.is_initialized():
        raise RuntimeError(
            "grader bug: batch grading's judge initialized CUDA, so the workers it forks cannot use the GPU; "
            "run GPU work through on_device"
        )


def _serve(requests: int, replies: int) -> None:
    """The worker: close what the learner must not reach, then answer calls until EOF."""
    global _in_worker
    _in_worker = True
    code = 0
    try:
        for fd in _protected:
            with contextlib.suppress(OSError):
                os.close(fd)
        if "torch" in sys.modules:  # OpenMP's pool does not survive a fork: torch ops would deadlock in it
            sys.modules["torch"].set_num_threads(1)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        while (request := _read_message(requests)) is not None:
            _write_message(replies, _answer(*pickle.loads(request)))
    except BaseException:  # the parent sees EOF and fails the call
        traceback.print_exc()  # into the grading log: a fault of the worker, not of the learner's code
        code = 3
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _answer(run: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], n_counters: int) -> bytes:
    counters = traffic.replace_open_counters(n_counters)
    args = tuple(a.view(_arena) if isinstance(a, _Shared) else a for a in args)
    try:
        payload: dict[str, Any] = {"value": _encode(run(*args, **kwargs))}
    except BaseException as exc:  # everything the learner raises is reported
        payload = {"raised": asdict(_describe(exc))}
    payload["traffic"] = [asdict(c) for c in counters]
    with contextlib.suppress(_NotPlain, ValueError, RecursionError):  # then as torch.save: tensors, or refused
        return _JSON + json.dumps(_tag(payload), allow_nan=True).encode()
    buf = io.BytesIO()
    try:
        torch.save(payload, buf)
    except Exception as exc:  # an output torch cannot save is the learner's
        buf = io.BytesIO()
        torch.save({"unsendable": f"{type(exc).__name__}: {exc}"}, buf)
    return buf.getvalue()


_NDARRAY, _NPSCALAR, _BIGINT = "__dripstone_ndarray__", "__dripstone_npscalar__", "__dripstone_bigint__"
_INT64 = (-(1 << 63), (1 << 63) - 1)


def _encode(value: Any) -> Any:
    """NumPy arrays and scalars as tensors in a marked dict (``weights_only`` loads no NumPy objects); ints
    beyond 64 bits as their hex text (``weights_only`` refuses the largest, yet a ledger may return one)."""
    if type(value) is int and not _INT64[0] <= value <= _INT64[1]:
        return {_BIGINT: hex(value)}  # hex: str() of an int past 4300 digits raises
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, np.ndarray | np.generic) and value.dtype != object:
        try:
            tensor = torch.from_numpy(np.array(value, order="C"))  # a copy; 0-d stays 0-d
        except TypeError:  # a dtype torch lacks: torch.save then says what cannot be sent
            return value
        return {_NDARRAY if isinstance(value, np.ndarray) else _NPSCALAR: tensor}
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple) and type(value) in (list, tuple):
        return type(value)(_encode(v) for v in value)
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if len(value) == 1 and isinstance(value.get(_BIGINT), str):
            return int(value[_BIGINT], 16)
        if len(value) == 1 and isinstance(value.get(_NDARRAY, value.get(_NPSCALAR)), torch.Tensor):
            (key, tensor), = value.items()
            array = tensor.numpy()
            return array if key == _NDARRAY else array[()]
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_decode(v) for v in value)
    return value


class _NotPlain(Exception):
    pass


_SCALARS = (type(None), bool, int, float, str)


def _tag(value: Any) -> Any:
    """Plain Python data as JSON that keeps its types: tuples, lists and dicts (any keys, in order) tagged; anything
    else (a tensor, a subclass such as a namedtuple or an IntEnum) raises _NotPlain."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is tuple:
        return ["t", [_tag(v) for v in value]]
    if kind is list:
        return ["l", [_tag(v) for v in value]]
    if kind is dict:
        return ["d", [[_tag(k), _tag(v)] for k, v in value.items()]]
    raise _NotPlain


def _untag(value: Any) -> Any:
    """:func:`_tag` undone; malformed input (the worker is the learner's process) raises ValueError/TypeError."""
    if type(value) in _SCALARS:
        return value
    if type(value) is not list or len(value) != 2 or type(value[1]) is not list:
        raise ValueError("malformed plain reply")
    kind, items = value
    if kind == "t":
        return tuple(_untag(v) for v in items)
    if kind == "l":
        return [_untag(v) for v in items]
    if kind == "d" and all(type(p) is list and len(p) == 2 for p in items):
        return {_untag(k): _untag(v) for k, v in items}
    raise ValueError("malformed plain reply")


def _write_message(fd: int, data: bytes) -> None:
    child.write_frame(fd, data)


def _read_message(
    fd: int, deadline: float | None = None, watch: Callable[[], None] | None = None
) -> bytes | None:
    try:
        return child.read_frame(fd, cap=MAX_REPLY_BYTES, deadline=deadline, tick=watch, tick_s=DISK_POLL_S)
    except child.TooBig:
        raise LearnerCallFailed(f"the learner's call returned more than {MAX_REPLY_BYTES >> 20} MiB") from None


class _DiskFull(Exception):
    pass


def _tmp_usage(root: Path) -> tuple[int, int]:
    """(bytes allocated, entries) under ``root`` that appeared or changed since this process started (what was
    there before is never the learner's: a shared $TMPDIR outside the sandbox is not counted against the cap);
    stops counting past MAX_TMP_ENTRIES entries."""
    total, entries, stack = 0, 0, [root]
    while stack and entries <= MAX_TMP_ENTRIES:
        with contextlib.suppress(OSError), os.scandir(stack.pop()) as it:
            for entry in it:
                with contextlib.suppress(OSError):
                    st = entry.stat(follow_symlinks=False)
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                        entries += st.st_ctime >= _STARTED
                    elif st.st_ctime >= _STARTED:
                        entries += 1
                        total += st.st_blocks * 512
    return total, entries


def _disk_watch() -> tuple[Path, int] | None:
    """($TMPDIR, its cap) where the sandbox set one; the worker's calls are watched against it."""
    cap = os.environ.get(TMP_BYTES_ENV)
    return (Path(os.environ.get("TMPDIR") or "/tmp"), int(cap)) if cap else None


def _over(root: Path, cap: int) -> Callable[[], None]:
    def watch() -> None:
        used, entries = _tmp_usage(root)
        if used > cap or entries > MAX_TMP_ENTRIES:
            raise _DiskFull
    return watch


def _free_tmp(root: Path, cap: int) -> None:
    """After a worker filled $TMPDIR: delete its files, largest first, until half the cap is free. Only files
    that appeared or changed since this process started: never what $TMPDIR held before grading began."""
    files = []
    for folder, _, names in os.walk(root):
        for n in names:
            with contextlib.suppress(OSError):
                p = Path(folder) / n
                st = p.lstat()
                if st.st_ctime >= _STARTED:
                    files.append((st.st_blocks * 512, p))
    used, count = sum(size for size, _ in files), len(files)
    for size, path in sorted(files, key=lambda f: f[0], reverse=True):
        if used <= cap // 2 and count <= MAX_TMP_ENTRIES // 2:
            break
        with contextlib.suppress(OSError):
            path.unlink()
            used, count = used - size, count - 1


def _exchange(worker: _Worker, name: str, request: bytes) -> bytes:
    """Send one request, wait for its reply; a hang, a death or an oversize reply ends the worker."""
    disk = _disk_watch()
    try:
        _write_message(worker.requests, request)
        watch = _over(*disk) if disk else None
        reply = _read_message(worker.replies, time.monotonic() + call_timeout_s(), watch)
        if watch is not None:
            watch()  # a quick call can fill the disk between two polls
    except TimeoutError:
        end_test()
        _stopped[name] = "hung"
        raise LearnerCallFailed(
            f"{name} did not return within {call_timeout_s():g} s (an endless loop, a sleep, a deadlock?): stopped"
        ) from None
    except _DiskFull:
        end_test()
        assert disk is not None
        _free_tmp(*disk)
        _stopped[name] = "filled the disk"
        raise LearnerCallFailed(
            f"{name} wrote more than {disk[1] >> 20} MiB (or {MAX_TMP_ENTRIES} files) to {disk[0]}: stopped, "
            "and its files were deleted"
        ) from None
    except (BrokenPipeError, LearnerCallFailed) as exc:
        reply, failure = None, exc
    else:
        failure = None
    if reply is None:
        status = worker.process.stop().how()  # killed first: a closed pipe does not mean it exited
        end_test()
        if isinstance(failure, LearnerCallFailed):
            raise failure
        _ended[name] = (
            f"{name} ended the grading process before returning ({status}): do not "
            "call sys.exit/os._exit, and stay within the memory and CPU limits"
        )
        raise LearnerCallFailed(_ended[name])
    return reply


def _describe(exc: BaseException) -> _Raised:
    root = exc
    while isinstance(root, BaseExceptionGroup) and root.exceptions:
        root = root.exceptions[0]
    frame = learner_frame(root)
    where = "" if frame is None else Path(frame.filename).name + (
        f":{frame.lineno}" if frame.lineno is not None else "")  # no line: a signal between two
    message = _text_of(root)
    notes = getattr(root, "__notes__", None)
    if isinstance(notes, list) and notes:
        message += "\n" + "\n".join(_text_of(n) for n in notes)
    return _Raised(type(root).__name__, message, where)


def _text_of(obj: object) -> str:
    """``str(obj)``, or what went wrong: a learner's exception whose ``__str__`` raises or returns a non-string
    must still be reported as what it is, not end the worker."""
    try:
        text = str(obj)
    except BaseException as exc:  # whatever the learner's __str__ raises
        return f"(its message cannot be shown: its __str__ raised {type(exc).__name__})"
    return text.strip() if isinstance(text, str) else "(its message is not text)"


def _unpack(name: str, reply: bytes) -> Any:
    try:  # map_location: a CUDA tensor in the reply must not initialize CUDA in the judge
        if reply[:1] == _JSON:
            payload = _untag(json.loads(reply[1:]))
        else:
            payload = torch.load(io.BytesIO(reply), weights_only=True, map_location="cpu")
    except Exception as exc:  # anything but plain data is refused (RecursionError included)
        raise LearnerCallFailed(
            f"{name} returned something that is not plain data (tensors, numbers, tuples): {type(exc).__name__}"
        ) from None
    if not isinstance(payload, dict):
        raise LearnerCallFailed(f"{name}: malformed reply from the learner process")
    if "unsendable" in payload:
        raise LearnerCallFailed(f"{name} returned a value the grader cannot receive: {payload['unsendable']}")
    _add_traffic(payload.get("traffic", []))
    if "raised" in payload:
        raise _rebuild(_Raised(**payload["raised"]))
    return _decode(payload["value"])


def _add_traffic(counts: list[dict[str, Any]]) -> None:
    for mine, theirs in zip(traffic.open_counters(), counts, strict=False):
        mine.add(traffic.Traffic.from_record(theirs))


def _rebuild(raised: _Raised) -> BaseException:
    """An exception of the same meaning: TODO stays NotImplementedError, grader errors keep their class."""
    from grader.instrument import guard

    where = f" ({raised.where})" if raised.where else ""
    known: dict[str, type[BaseException]] = {
        "SubmissionError": SubmissionError,
        "TorchComputeRefused": guard.TorchComputeRefused,
        "KernelMemoryError": traffic.KernelMemoryError,
    }
    cls = known.get(raised.type_name) or getattr(builtins, raised.type_name, None)
    if isinstance(cls, type) and issubclass(cls, Exception) and cls is not Exception:
        with contextlib.suppress(Exception):
            return cls(raised.message + where)
    if raised.type_name in ("SystemExit", "KeyboardInterrupt", "GeneratorExit"):
        return LearnerCallFailed(
            f"the learner's code raised {raised.type_name}({raised.message}){where}: "
            "it must return a result, not end the process"
        )
    return type(raised.type_name, (LearnerRaised,), {})(raised.message + where)


# ---- where a trusted check runs beside the learner's code: here in make grade, in the worker in batch grading


def where_learner_runs(check: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``check(*args, **kwargs)`` in the process where the learner's code runs, its result (data) here.

    For measurements that must be taken beside the learner's code (the NumPy memory peak of a call
    with ``tracemalloc``): ``check`` is trusted test code at module level of a test file. In ``make
    grade`` it runs here; in batch grading, in the test's worker.
    """
    return beside_learner(f"{getattr(check, '__name__', 'check')} (beside the learner's code)", check, args, kwargs)


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
    return beside_learner(label, _on_device_here, (check, args, kwargs), {})


def beside_learner(label: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``fn(*args, **kwargs)`` in batch grading's worker (answered as data), or here in ``make grade``; either way on
    copies of the caller's arguments (pickled, or :func:`grader.instrument.given.copies`): what runs beside the
    learner's code never writes into the caller's objects (a changed tensor argument is refused in batch)."""
    global _checks_here
    if enabled():
        return call(label, fn, args, kwargs)
    args, kwargs = given.copies(args, kwargs)
    _checks_here += 1
    try:
        return fn(*args, **kwargs)
    finally:
        _checks_here -= 1


_checks_here = 0  # make grade: how many checks beside the learner's code are running in this process


def in_check() -> bool:
    """Trusted check code runs beside the learner's here (in the worker, or inside :func:`beside_learner` in ``make
    grade``): a learner function it calls gets the check's own objects, not copies (a check counts a model's calls,
    measures a call's memory peak); the check returns data, which crossed to the judge as such."""
    return _in_worker or _checks_here > 0


def _on_device_here(check: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    from grader.instrument import device

    with device.gpu_mode(not device.dry_run()):  # the dry run interprets the kernels on the CPU
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
