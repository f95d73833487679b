"""Count the global-memory traffic of Triton kernels run by the interpreter, and bounds-check it.

The efficiency tier grades a learner without a GPU on the lesson's point (a fused softmax reads x
once and writes y once) by counting, deterministically, what a kernel moves:

* bytes loaded and stored: active lanes only (a masked-off lane moves nothing), times the element
  size of the pointer, for plain, block-pointer and tensor-descriptor loads and stores alike;
* atomics as what they are, a load and a store: an atomic's bytes count in ``bytes_loaded`` and in
  ``bytes_stored`` (and in the program's loads), so no efficiency rule can miss data moved through
  atomics; ``bytes_atomic`` says how much of both was atomic; launches and program instances;
* inside :func:`record_writes`, the addresses stored to, mapped back from the interpreter's host
  copies to the caller's tensors, so the harness can require that every element a kernel exercise
  returns was stored by one of its kernels (:func:`unwritten_elements`).

Every active address is also checked against the tensor arguments of the launch before the
interpreter touches memory. The plain interpreter does not check: an unmasked tail load reads
whatever lies past the tensor, a store corrupts it, and the process dies much later (SIGABRT or a
segfault, seen with triton 3.7.1). Here it becomes a :class:`KernelMemoryError` naming the kernel,
the line, the tensor and the offsets.

Why a wrapper and not triton-viz: triton-viz 3.0 imports only with triton 3.7.1, its profiler has
to be told not to sample blocks nor skip loads, it pulls heavy dependencies and costs 1.3-3x the
interpreter; its sanitizer misses overruns into a neighbouring argument. Every memory access of the
interpreter funnels through ``InterpreterBuilder.create_masked_load/store`` (block pointers and
tensor descriptors materialize their pointers and call them), so wrapping those two methods plus the
atomics and ``GridExecutor`` sees all traffic, costs about 1.1x, works on triton 3.7-3.9, and lets us
bounds-check against the real arguments. :func:`install` verifies the hooks it needs exist.
"""

from __future__ import annotations

import contextlib
import linecache
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np


class KernelMemoryError(Exception):
    """A kernel touched memory outside every tensor it was given."""


@dataclass
class Traffic:
    """What the kernels launched inside one :func:`count_traffic` block moved."""

    bytes_loaded: int = 0  # atomics included: an atomic reads its element
    bytes_stored: int = 0  # atomics included: an atomic writes its element
    bytes_atomic: int = 0  # the part of each that was atomic
    launches: int = 0
    programs: int = 0
    max_program_loaded: int = 0  # the most bytes one program instance loaded (tiled ledgers bound it per tile)
    kernels: list[str] = field(default_factory=list)

    def summary(self) -> str:
        names = ", ".join(dict.fromkeys(self.kernels)) or "none"
        atomic = f" ({self.bytes_atomic:,} B of each atomic)" if self.bytes_atomic else ""
        return (
            f"{self.launches} launch(es) [{names}], {self.bytes_loaded:,} B loaded, "
            f"{self.bytes_stored:,} B stored{atomic}"
        )

    def add(self, other: Traffic) -> None:
        """Add what ``other`` counted to this count."""
        for f in fields(self):
            if f.name == "max_program_loaded":
                self.max_program_loaded = max(self.max_program_loaded, other.max_program_loaded)
            elif f.name != "kernels":
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        self.kernels.extend(other.kernels)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Traffic:
        """A count sent by another process as ``dataclasses.asdict(traffic)``: numbers made ints, kernels strs."""
        counts = {f.name: int(record.get(f.name, 0)) for f in fields(cls) if f.name != "kernels"}
        return cls(**counts, kernels=[str(k) for k in record["kernels"]])


@dataclass(frozen=True)
class _Region:
    name: str
    start: int
    end: int
    desc: str


@dataclass
class _Launch:
    kernel: str
    filename: str
    regions: list[_Region]
    # (start, end, delta) per tensor storage: the interpreter runs on host copies of the arguments,
    # an address in [start, end) of a copy is address + delta in the caller's tensor.
    to_caller: list[tuple[int, int, int]] = field(default_factory=list)
    program_loaded: dict[tuple[int, ...], int] = field(default_factory=dict)  # bytes loaded per program id


_counters: list[Traffic] = []
_launches: list[_Launch] = []
_tensors: list[_Region] = []  # the tensor arguments of the launches counted (for finished_counts)
_finished: list[dict[str, Any]] = []  # what each count_traffic block counted, until finished_counts() takes it
_written: list[tuple[np.ndarray, int]] | None = None  # (caller addresses, element bytes) per store


def in_kernel_launch() -> bool:
    """True while the interpreter runs a kernel (torch calls then belong to Triton, not the learner)."""
    return bool(_launches)


@contextlib.contextmanager
def count_traffic() -> Iterator[Traffic]:
    """Count everything the kernels launched in this block load, store and launch."""
    traffic = Traffic()
    _counters.append(traffic)
    first = len(_tensors)
    try:
        yield traffic
    finally:
        _counters.remove(traffic)
        seen = {(r.start, r.end): r for r in _tensors[first:]}
        _finished.append({"bytes_loaded": traffic.bytes_loaded, "bytes_stored": traffic.bytes_stored,
                          "bytes_atomic": traffic.bytes_atomic, "launches": traffic.launches,
                          "kernels": list(dict.fromkeys(traffic.kernels)),
                          "tensors": [{"name": r.name, "desc": r.desc, "bytes": r.end - r.start}
                                      for r in seen.values()]})
        if not _counters:
            del _tensors[:]


def note_last_count(note: str) -> None:
    """Attach a note to the :func:`count_traffic` block that ended last (e.g. "loads padding: ..."): the plugin
    records it with the test's traffic, where ``grader report`` shows it. No block ended: nothing to note."""
    if _finished:
        _finished[-1].setdefault("notes", []).append(note)


def finished_counts() -> list[dict[str, Any]]:
    """What the :func:`count_traffic` blocks that ended since the last call counted (plain data: bytes, launches,
    kernels, and each tensor argument as name, ``"200×100 float16"`` and bytes), then forgets them. The plugin
    records them with each efficiency test (``grader report`` plots them)."""
    out = list(_finished)
    del _finished[:]
    return out


def open_counters() -> list[Traffic]:
    """The counts of the :func:`count_traffic` blocks open now, outermost first (each launch adds to all)."""
    return list(_counters)


def replace_open_counters(n: int) -> list[Traffic]:
    """From now on count into ``n`` fresh counts instead of the open blocks'; returns them.

    Batch grading's worker: they stand for the ``n`` blocks open in the judge, which adds what they
    counted to its own (:meth:`Traffic.add`). A later call replaces them again.
    """
    _counters[:] = [Traffic() for _ in range(n)]
    return list(_counters)


@contextlib.contextmanager
def record_writes() -> Iterator[list[tuple[np.ndarray, int]]]:
    """Record the caller-side addresses every kernel launched in this block stores to (or updates atomically)."""
    global _written
    outer, _written = _written, []
    mine = _written
    try:
        yield mine
    finally:
        _written = outer
        if outer is not None:
            outer.extend(mine)


def _byte_addresses(starts: np.ndarray, nbytes: int) -> np.ndarray:
    return (starts.astype(np.int64).reshape(-1, 1) + np.arange(nbytes, dtype=np.int64)).ravel()


def unwritten_elements(tensor, writes: list[tuple[np.ndarray, int]]) -> int:
    """How many elements of ``tensor`` (its view) no recorded kernel store wrote, even in part."""
    if tensor.numel() == 0:
        return 0
    es = tensor.element_size()
    offsets = np.zeros((), dtype=np.int64)
    for size, stride in zip(tensor.shape, tensor.stride(), strict=True):
        offsets = np.add.outer(offsets, np.arange(size, dtype=np.int64) * stride)
    starts = tensor.data_ptr() + offsets.ravel() * es
    if not writes:
        return int(starts.size)
    written = np.unique(np.concatenate([_byte_addresses(a, n) for a, n in writes]))
    covered = np.isin(_byte_addresses(starts, es), written).reshape(-1, es).all(axis=1)
    return int((~covered).sum())


def _storage_maps(dev, hst, out: list[tuple[int, int, int]]) -> None:
    """Pair the interpreter's host copy of each tensor argument with the caller's tensor."""
    if isinstance(dev, tuple) and isinstance(hst, tuple):
        for d, h in zip(dev, hst, strict=False):
            _storage_maps(d, h, out)
    elif hasattr(dev, "base") and hasattr(hst, "base") and not hasattr(dev, "data_ptr"):  # TensorDescriptor
        _storage_maps(dev.base, hst.base, out)
    elif hasattr(dev, "untyped_storage") and hasattr(hst, "untyped_storage"):
        d, h = dev.untyped_storage(), hst.untyped_storage()
        out.append((h.data_ptr(), h.data_ptr() + h.nbytes(), d.data_ptr() - h.data_ptr()))


def _record_write(addrs: np.ndarray, nbytes: int) -> None:
    caller = addrs.astype(np.int64)
    if _launches:
        moved = np.zeros(caller.shape, dtype=bool)
        for start, end, delta in _launches[-1].to_caller:
            sel = ~moved & (addrs >= start) & (addrs < end)
            caller[sel] += delta
            moved |= sel
    _written.append((caller, nbytes))


def _tensor_region(name: str, tensor) -> _Region:
    """The bytes a tensor's elements occupy (its view, not its whole storage)."""
    es = tensor.element_size()
    lo = hi = 0
    for size, stride in zip(tensor.shape, tensor.stride(), strict=True):
        if size == 0:
            return _Region(name, 0, 0, "empty tensor")
        span = (size - 1) * stride
        lo, hi = (lo + span, hi) if span < 0 else (lo, hi + span)
    start = tensor.data_ptr() + lo * es
    shape = "×".join(map(str, tensor.shape)) or "scalar"
    desc = f"{shape} {str(tensor.dtype).removeprefix('torch.')}"
    return _Region(name, start, tensor.data_ptr() + (hi + 1) * es, desc)


def _regions(arg_names, args_hst, kwargs_hst) -> list[_Region]:
    named = list(zip(arg_names, args_hst, strict=False)) + list(kwargs_hst.items())
    return [_tensor_region(n, a) for n, a in named if hasattr(a, "data_ptr") and hasattr(a, "stride")]


def _kernel_line(filename: str) -> str:
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename != filename:
        frame = frame.f_back
    if frame is None:
        return ""
    text = linecache.getline(filename, frame.f_lineno).strip()
    return f" line {frame.f_lineno} (`{text}`)"


def _check_bounds(kind: str, addrs: np.ndarray, mask: np.ndarray, nbytes: int) -> None:
    """Raise KernelMemoryError if an active lane falls outside every tensor argument."""
    if not _launches:
        return
    launch = _launches[-1]
    active = addrs[mask]
    if active.size == 0:
        return
    ok = np.zeros(active.shape, dtype=bool)
    for r in launch.regions:
        ok |= (active >= r.start) & (active + nbytes <= r.end)
    if ok.all():
        return
    bad = active[~ok].astype(np.int64)
    raise KernelMemoryError(_oob_message(kind, launch, bad, nbytes, int(active.size)))


def _oob_message(kind: str, launch: _Launch, bad: np.ndarray, nbytes: int, n_active: int) -> str:
    first = int(bad.min())
    # The pointer most likely came from the nearest tensor that starts at or below the address.
    below = [r for r in launch.regions if r.start <= first] or launch.regions
    r = max(below, key=lambda r: r.start) if below else None
    where = _kernel_line(launch.filename)
    if r is None:
        return f"{launch.kernel}{where}: {kind} outside the tensors (the kernel has no tensor arguments)"
    elems = sorted({(int(b) - r.start) // nbytes for b in bad})
    shown = ", ".join(map(str, elems[:4])) + (", ..." if len(elems) > 4 else "")
    size = (r.end - r.start) // nbytes
    # the same dimension's size in both remedies: a column tail is masked or wrapped by n_cols, a row tail by n_rows
    wrap = " or wrap the tail tile's offsets back inside (`offs % n_cols`)" if kind == "load" else ""
    return (
        f"{launch.kernel}{where}: {kind} out of bounds of `{r.name}` ({r.desc}, {size} elements): "
        f"{len(bad)} of {n_active} active lanes at element offsets {shown}: it {_VERBS.get(kind, kind)} outside "
        f"the tensor (a bounds bug, not padding); mask the {kind} (e.g. `mask=offs < n_cols`){wrap}, with the "
        "size of the dimension that offset runs along"
    )


_VERBS = {"load": "loads", "store": "stores", "atomic": "updates atomically"}


def _elem_bytes(ptrs) -> int:
    return max(1, ptrs.get_element_ty().primitive_bitwidth // 8)


def _account(kind: str, ptrs, mask, builder=None) -> None:
    nbytes = _elem_bytes(ptrs)
    m = np.broadcast_to(np.asarray(mask.data, dtype=bool), ptrs.data.shape)
    _check_bounds(kind, np.asarray(ptrs.data), m, nbytes)
    moved = int(m.sum()) * nbytes
    if kind != "store" and _launches:  # an atomic reads its element: the program's loads count it
        program = tuple(getattr(builder, "grid_idx", None) or ())
        per_program = _launches[-1].program_loaded
        per_program[program] = per_program.get(program, 0) + moved
    if _written is not None and kind != "load":
        _record_write(np.asarray(ptrs.data)[m], nbytes)
    for t in _counters:
        if kind != "store":  # a load, or an atomic: it reads
            t.bytes_loaded += moved
        if kind != "load":  # a store, or an atomic: it writes
            t.bytes_stored += moved
        if kind == "atomic":
            t.bytes_atomic += moved


def _wrap_builder(builder_cls) -> None:
    load, store = builder_cls.create_masked_load, builder_cls.create_masked_store
    rmw, cas = builder_cls.create_atomic_rmw, builder_cls.create_atomic_cas

    def create_masked_load(self, ptrs, mask, other, *args, **kwargs):
        _account("load", ptrs, mask, self)
        return load(self, ptrs, mask, other, *args, **kwargs)

    def create_masked_store(self, ptrs, value, mask, *args, **kwargs):
        _account("store", ptrs, mask)
        return store(self, ptrs, value, mask, *args, **kwargs)

    def create_atomic_rmw(self, op, ptr, val, mask, *args, **kwargs):
        _account("atomic", ptr, mask, self)
        return rmw(self, op, ptr, val, mask, *args, **kwargs)

    def create_atomic_cas(self, ptr, cmp, val, *args, **kwargs):
        _account("atomic", ptr, type("AllLanes", (), {"data": True})(), self)
        return cas(self, ptr, cmp, val, *args, **kwargs)

    builder_cls.create_masked_load = create_masked_load
    builder_cls.create_masked_store = create_masked_store
    builder_cls.create_atomic_rmw = create_atomic_rmw
    builder_cls.create_atomic_cas = create_atomic_cas


def _wrap_executor(executor_cls, builder) -> None:
    init_args, call = executor_cls._init_args_hst, executor_cls.__call__

    def _init_args_hst(self, args_dev, kwargs):
        args_hst, kwargs_hst = init_args(self, args_dev, kwargs)
        if _launches and not _launches[-1].regions:
            _launches[-1].regions = _regions(self.arg_names, args_hst, kwargs_hst)
            _storage_maps(tuple(args_dev), tuple(args_hst), _launches[-1].to_caller)
            for key, value in kwargs.items():
                _storage_maps(value, kwargs_hst.get(key), _launches[-1].to_caller)
        return args_hst, kwargs_hst

    def __call__(self, *args, **kwargs):
        code = getattr(self.fn, "__code__", None)
        launch = _Launch(self.fn.__name__, code.co_filename if code else "", [])
        _launches.append(launch)
        try:
            call(self, *args, **kwargs)
        except Exception as exc:
            if isinstance(exc.__cause__, KernelMemoryError):  # not Triton's InterpreterError(repr(...))
                raise exc.__cause__.with_traceback(None) from None
            raise
        finally:
            _launches.pop()
            if _counters:
                _tensors.extend(launch.regions)
        programs = int(np.prod(builder.grid_dim))
        most = max(launch.program_loaded.values(), default=0)
        for t in _counters:
            t.launches += 1
            t.programs += programs
            t.max_program_loaded = max(t.max_program_loaded, most)
            t.kernels.append(launch.kernel)

    executor_cls._init_args_hst = _init_args_hst
    executor_cls.__call__ = __call__


_installed = False
_HOOKS = ("create_masked_load", "create_masked_store", "create_atomic_rmw", "create_atomic_cas")


def install() -> None:
    """Wrap the Triton interpreter once per process (idempotent)."""
    global _installed
    if _installed:
        return
    import triton
    from triton.runtime import interpreter

    missing = [h for h in _HOOKS if not hasattr(interpreter.InterpreterBuilder, h)]
    if missing or not hasattr(interpreter.GridExecutor, "_init_args_hst"):
        raise RuntimeError(
            f"triton {triton.__version__}'s interpreter lacks {missing or '_init_args_hst'}: "
            "the efficiency tier supports the pinned triton (see requirements.txt); run `make env`"
        )
    _wrap_builder(interpreter.InterpreterBuilder)
    _wrap_executor(interpreter.GridExecutor, interpreter.interpreter_builder)
    _installed = True
