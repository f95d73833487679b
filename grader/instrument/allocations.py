"""Bytes a stretch of code leaves allocated, wherever they are referenced (the ranks' memory checks).

Walking an object's attributes sees what that object references and nothing else: a module-level dict, a
closure, a default argument, a class attribute, a tensor kept in another module, a NumPy array or a list of
floats all escape it. :class:`Allocations` counts the process's memory instead, in the process where the
learner's code runs, between :meth:`Allocations.start` and :meth:`Allocations.stop`:

* the C heap, net: glibc's ``mallinfo2`` in-use bytes at the end minus at the start. Every thread and every
  library that allocates with malloc is in it: torch's CPU storages (whatever holds them: a tensor, a bare
  storage, a C++ object, an autograd node's saved tensors), NumPy's data, Python's objects over 512 B;
* Python's small objects, gross: ``tracemalloc``, started with the window, so every block it traces was
  allocated in it, and the bytes still alive at the end count (a list of floats keeps its floats in Python's
  own arenas, which the heap's count does not see). The two overlap (a NumPy array, a long list are in both):
  counted twice, which only ever raises the total;
* the caller's own tensors (``credit``: the gradients the code leaves) are taken off at their own bytes,
  ``numel·element_size``, so a storage larger than the tensor that views it still counts its excess.

A net count is offset by what the window frees of memory allocated before it: the caller starts the window
before a fresh copy of the learner's module is loaded (:func:`grader.instrument.loader.load_fresh`), so that
nothing the measured code can reach predates the window. The end is read once gloo's threads have let go of the
last collective's tensors (:func:`settled_heap`). glibc keeps small freed blocks cached per thread and gloo
keeps buffers between calls: honest code shows up to a few hundred KiB above what it keeps, so the caller sizes
its check for this to be noise (state of megabytes). tracemalloc runs in the learner's process: the static audit
(:mod:`grader.judge.audit`) refuses code that imports it, or ``ctypes`` (which could call the allocator
directly), and a window whose tracing was switched off reports ``intact=False``.

Not seen: memory mapped outside malloc (``mmap``, shared memory, files: refused by the audit in the modules run
on ranks), memory of another process, and memory allocated before the window that the code can still reach
(through a process-wide registry, from a copy of the module loaded earlier), reused in place or freed to offset
the count: the public caches a module can empty (``linecache``, ``re``'s) are emptied before the window
(:data:`DRAINED`); others are not known.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import linecache
import re
import time
import tracemalloc
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

SETTLE_S, SETTLE_READS = 1.0, 5
DRAINED = (linecache.clearcache, re.purge)  # emptied before the window (see the module docstring)


@dataclass(frozen=True)
class Held:
    """What a window left allocated, in bytes."""

    heap_bytes: int  # the C heap's in-use bytes at the end minus at the start, less the credited tensors
    python_bytes: int  # Python objects (and NumPy data) allocated in the window and alive at its end
    intact: bool  # tracemalloc ran the whole window (nothing switched it off)

    @property
    def total(self) -> int:
        return self.heap_bytes + self.python_bytes


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


def heap_in_use() -> int | None:
    """glibc's in-use heap bytes (every thread's arenas plus the mmapped chunks); None without glibc 2.33+."""
    with contextlib.suppress(AttributeError, OSError):
        fn = ctypes.CDLL(None).mallinfo2
        fn.restype = _Mallinfo2
        info = fn()
        return int(info.uordblks + info.hblkhd)
    return None


def measurable() -> bool:
    """Whether this process's heap can be counted (Linux with glibc 2.33 or later)."""
    return heap_in_use() is not None


def settled_heap(ceiling: int | None = None) -> int:
    """The heap's in-use bytes once what gloo's threads still hold is released: a collective returns when its work
    is done, but the worker thread drops its reference to the tensors (the caller's temporaries, megabytes) a
    moment later, later still on a loaded machine. The least of the reads until ``ceiling`` is reached (at most
    SETTLE_S: only code that keeps more than the ceiling waits that long), or without one until SETTLE_READS reads
    in a row find nothing less (at most SETTLE_S)."""
    least = heap_in_use() or 0
    same, pause, deadline = 0, 0.001, time.monotonic() + SETTLE_S
    while time.monotonic() < deadline:
        if (least <= ceiling) if ceiling is not None else same >= SETTLE_READS:
            break
        time.sleep(pause)
        pause = min(2 * pause, 0.05)
        now = heap_in_use() or 0
        same = same + 1 if now >= least else 0
        least = min(least, now)
    return least


class Allocations:
    """One window: ``start()``, run the code, ``stop(credit)`` → :class:`Held`."""

    def __init__(self) -> None:
        self._heap0 = 0

    def start(self) -> Allocations:
        heap = heap_in_use()
        if heap is None:
            raise RuntimeError("the heap cannot be counted here (glibc 2.33+ on Linux): see measurable()")
        if tracemalloc.is_tracing():  # someone else's tracing (python -X tracemalloc): ours counts from now
            tracemalloc.stop()
        for clear in DRAINED:  # public caches the code could empty to offset its count (linecache: ~170 KB in a rank)
            clear()
        gc.collect()  # garbage made before the window is freed before it, not by stop()'s collection inside it
        self._heap0 = heap_in_use() or 0
        tracemalloc.start(1)
        return self

    def stop(self, credit: Iterable[Any] = (), within: int | None = None) -> Held:
        """End the window; ``credit``: tensors whose own bytes are not the code's (the gradients it leaves);
        ``within``: the total the caller allows, read until reached (:func:`settled_heap`) so that a tensor gloo's
        thread has yet to let go of is not counted as kept."""
        gc.collect()  # inside the window: a finalizer of the code's garbage runs here, where what it makes counts
        intact = tracemalloc.is_tracing()
        python = tracemalloc.get_traced_memory()[0] if intact else 0
        # Python 3.11's tracemalloc.stop() frees what its allocation hook uses while another thread may be inside
        # the hook waiting for the GIL (a gloo worker finishing a collective): that thread then crashes the rank
        # (SIGSEGV, seen under load; fixed in CPython 3.12.9/3.13.2). Stopped only once the heap no longer
        # shrinks, i.e. gloo's threads are done with the last collective.
        settled_heap()
        tracemalloc.stop()  # frees its own tables before the heap is read
        credited = sum(t.numel() * t.element_size() for t in credit if t is not None)
        ceiling = None if within is None else within + self._heap0 + credited - python
        heap = settled_heap(ceiling) - self._heap0
        return Held(heap - credited, python, intact)
