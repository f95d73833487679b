"""L01 · C++ and Python under AI Infra: what crosses the boundary, who owns it, and what is copied.

Three Python exercises (this file) and two C++ ones (``ext.cpp``, built by :func:`load_ext`):

* :func:`list_vs_tensor_bytes`: a Python list of floats is an array of pointers to boxed float objects;
  a tensor is one buffer of raw values. The bytes of each, as CPython 3.11 counts them.
* :func:`simulate_ownership`: ``unique_ptr`` / ``shared_ptr`` / ``weak_ptr`` as a small machine: which
  resource is freed when, and how many owners each live one has.
* :func:`zero_copy_report`: for eleven everyday conversions of a tensor, does the result share its memory?
* ``ext.cpp``: ``scale_inplace(x, a)`` (zero copy into the caller's tensor) and ``sum_nogil(x)`` (a long
  loop with the GIL released).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import torch

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

# CPython 3.11 on a 64-bit build (sys.getsizeof): an empty list object, one pointer slot, one float object.
LIST_HEADER_BYTES = 56
POINTER_BYTES = 8
FLOAT_OBJECT_BYTES = 24


def list_vs_tensor_bytes(n: int, elem_bytes: int = 4, capacity: int | None = None) -> dict[str, int]:
    """Bytes of a Python list of ``n`` distinct floats against a tensor of ``n`` elements.

    A list is a header plus one 8-byte pointer slot per element of its *capacity* (CPython over-allocates
    a list grown by ``append``; ``[x] * n`` and ``tensor.tolist()`` are sized exactly), and every element
    is a separate 24-byte float object. A tensor's data is ``n * elem_bytes`` (its small header is ignored):

        list_header   = 56
        pointer_slots = 8 * capacity          (capacity defaults to n)
        float_objects = 24 * n                (n distinct float objects)
        list_total    = list_header + pointer_slots + float_objects
        tensor_bytes  = n * elem_bytes

    Example: ``list_vs_tensor_bytes(1_000_000)`` = {"list_header": 56, "pointer_slots": 8_000_000,
    "float_objects": 24_000_000, "list_total": 32_000_056, "tensor_bytes": 4_000_000}: 8x the fp32 tensor.

    Raises ValueError naming ``n``, ``elem_bytes`` or ``capacity`` (exact ints; n >= 0, elem_bytes >= 1,
    capacity >= 0 and capacity >= n).
    """
    check_int("n", n)
    check_int("elem_bytes", elem_bytes, 1)
    if capacity is not None:
        check_int("capacity", capacity)
        if capacity < n:
            raise ValueError(f"capacity must be >= n (a list holds at most capacity slots), got {capacity} < {n}")
    # TODO: the five counts, capacity defaulting to n
    ### BEGIN SOLUTION
    slots = n if capacity is None else capacity
    parts = {
        "list_header": LIST_HEADER_BYTES,
        "pointer_slots": POINTER_BYTES * slots,
        "float_objects": FLOAT_OBJECT_BYTES * n,
    }
    return {**parts, "list_total": sum(parts.values()), "tensor_bytes": n * elem_bytes}
    ### END SOLUTION


OWNING_OPS = ("unique", "shared")


def _bad(i: int, why: str) -> ValueError:
    return ValueError(f"ops[{i}]: {why}")


def _parse_op(i: int, op: object) -> tuple[str, ...]:
    """``ops[i]`` as a tuple of strings of the right length for its name, or ValueError naming ``ops[i]``."""
    arity = {"unique": 3, "shared": 3, "copy": 3, "move": 3, "weak": 3, "lock": 3, "reset": 2, "end": 1}
    if not isinstance(op, tuple | list) or not op or not all(isinstance(p, str) for p in op):
        raise _bad(i, f"an op is a tuple of strings, got {op!r}")
    if op[0] not in arity:
        raise _bad(i, f"unknown op {op[0]!r}; one of {sorted(arity)}")
    if len(op) != arity[op[0]]:
        raise _bad(i, f"{op[0]!r} takes {arity[op[0]] - 1} names, got {op!r}")
    return tuple(op)


def simulate_ownership(ops: Sequence[tuple]) -> dict:
    """Run a sequence of smart-pointer operations; which resources are freed, and the live ones' owner counts.

    Variables hold null, or a unique, shared or weak handle to a named resource. Ops (``ops[i]``):

    * ``("unique" | "shared", var, res)``: ``var = make_unique/make_shared(res)``: var's old value is
      released first; ``res`` must be a new name (re-creating a resource is an error).
    * ``("copy", dst, src)``: ``dst = src``: a shared handle gains an owner (use_count + 1), a weak one is
      copied, null copies null; copying a unique handle is an error ("use move"). dst's old value is released.
    * ``("move", dst, src)``: dst's old value is released, dst takes src's handle, src becomes null
      (``std::move``); a self-move changes nothing.
    * ``("weak", dst, src)``: dst observes src's resource without owning it (src shared; null gives null;
      a unique source is an error).
    * ``("lock", dst, w)``: ``dst = w.lock()``: a new owner if the resource is alive, else null
      (w must hold a weak handle).
    * ``("reset", var)``: var's handle released, var null.
    * ``("end",)``: scope exit: every variable released in reverse order of first assignment (then gone).

    Releasing an owning handle decrements its resource's use_count; at 0 the resource is freed (appended to
    ``freed``). Weak handles never free. A source variable must have been assigned before.

    Returns ``{"freed": [res, ...] in freeing order, "live": {res: use_count}}`` (live sorted by name).

    Example: ``[("unique","a","buf"), ("move","b","a"), ("end",)]`` -> ``{"freed": ["buf"], "live": {}}``
    (freed once, by b); ``[("shared","p1","X"), ("copy","p2","p1"), ("weak","w","p1"), ("reset","p1"),
    ("lock","q","w"), ("reset","p2")]`` -> ``{"freed": [], "live": {"X": 1}}``.

    Raises ValueError naming ``ops`` (not a sequence) or ``ops[i]`` (a malformed op, an unknown variable,
    a copy of a unique handle, a weak of a unique handle, a lock of a non-weak handle, a resource created twice).
    """
    if isinstance(ops, str | bytes) or not isinstance(ops, Sequence):
        raise ValueError(f"ops must be a sequence of op tuples, got {type(ops).__name__}")
    parsed = [_parse_op(i, op) for i, op in enumerate(ops)]
    # TODO: run the ops over variables (name -> None or (kind, res)) and use counts (res -> owners)
    ### BEGIN SOLUTION
    vars_: dict[str, tuple[str, str] | None] = {}  # insertion order = order of first assignment
    owners: dict[str, int] = {}  # every resource ever created -> its use_count (0 once freed)
    freed: list[str] = []

    def source(i: int, name: str) -> tuple[str, str] | None:
        if name not in vars_:
            raise _bad(i, f"unknown variable {name!r} (never assigned)")
        return vars_[name]

    def release(handle: tuple[str, str] | None) -> None:
        if handle is not None and handle[0] in OWNING_OPS:
            owners[handle[1]] -= 1
            if owners[handle[1]] == 0:
                freed.append(handle[1])

    def assign(dst: str, handle: tuple[str, str] | None) -> None:
        old = vars_.get(dst)
        vars_[dst] = handle  # the new handle is taken before the old one is released (a self-copy keeps it)
        release(old)

    for i, (kind, *names) in enumerate(parsed):
        if kind in OWNING_OPS:
            var, res = names
            if res in owners:
                raise _bad(i, f"resource {res!r} was already created")
            release(vars_.get(var))
            vars_[var] = None
            owners[res] = 1
            vars_[var] = (kind, res)
        elif kind == "copy":
            dst, src = names
            h = source(i, src)
            if h is not None and h[0] == "unique":
                raise _bad(i, f"copy of unique_ptr {src!r} (use move)")
            if h is not None and h[0] == "shared":
                owners[h[1]] += 1
            assign(dst, h)
        elif kind == "move":
            dst, src = names
            h = source(i, src)
            if dst != src:
                vars_[src] = None
                assign(dst, h)
        elif kind == "weak":
            dst, src = names
            h = source(i, src)
            if h is not None and h[0] == "unique":
                raise _bad(i, f"weak_ptr of unique_ptr {src!r}: only a shared_ptr can be observed")
            assign(dst, None if h is None else ("weak", h[1]))
        elif kind == "lock":
            dst, w = names
            h = source(i, w)
            if h is None or h[0] != "weak":
                raise _bad(i, f"lock of {w!r}, which holds no weak_ptr")
            alive = owners[h[1]] > 0
            if alive:
                owners[h[1]] += 1
            assign(dst, ("shared", h[1]) if alive else None)
        elif kind == "reset":
            source(i, names[0])
            assign(names[0], None)
        else:  # end
            for name in reversed(list(vars_)):
                release(vars_.pop(name))
    return {"freed": freed, "live": {r: c for r, c in sorted(owners.items()) if c > 0}}
    ### END SOLUTION


ZERO_COPY_KEYS = (
    "numpy", "from_numpy", "view", "slice", "transpose", "transpose_contiguous", "contiguous_of_contiguous",
    "clone", "to_same_dtype", "to_other_dtype", "tensor_of_numpy",
)


def _check_report_input(x: object) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.device.type != "cpu" or not x.is_contiguous() or x.requires_grad or x.dim() < 2 or x.shape[0] < 2:
        raise ValueError(f"x must be a contiguous CPU tensor without grad, >= 2 dims and >= 2 rows, got "
                         f"shape {tuple(x.shape)} on {x.device}, contiguous={x.is_contiguous()}, "
                         f"requires_grad={x.requires_grad}")
    return x


def zero_copy_report(x: torch.Tensor) -> dict[str, bool]:
    """Which conversions of ``x`` share its memory (True) and which copy it (False).

    "Shares" means the result's ``untyped_storage().data_ptr()`` is x's (never ``data_ptr()``, which a
    view with an offset moves: ``x[1:].data_ptr() != x.data_ptr()`` though it shares); for the NumPy array
    (key ``numpy``), that its buffer lies inside x's storage. Keys, in this order: ``numpy`` (``x.numpy()``),
    ``from_numpy`` (``torch.from_numpy(x.numpy())``), ``view`` (``x.view(-1)``), ``slice`` (``x[1:]``),
    ``transpose`` (``x.transpose(0, 1)``), ``transpose_contiguous`` (its ``.contiguous()``),
    ``contiguous_of_contiguous`` (``x.contiguous()``), ``clone``, ``to_same_dtype`` (``x.to(x.dtype)``),
    ``to_other_dtype`` (``x.to(float64)``, or float32 when x is float64), ``tensor_of_numpy``
    (``torch.tensor(x.numpy())``, which always copies).

    Example: ``zero_copy_report(torch.arange(12.).view(3, 4))`` is True for numpy, from_numpy, view, slice,
    transpose, contiguous_of_contiguous, to_same_dtype; False for transpose_contiguous, clone,
    to_other_dtype, tensor_of_numpy.

    Raises ValueError naming ``x`` unless x is a contiguous CPU tensor without grad, >= 2 dims, >= 2 rows.
    """
    x = _check_report_input(x)
    # TODO: build each result and compare its storage with x's
    ### BEGIN SOLUTION
    base = x.untyped_storage()

    def shares(t: torch.Tensor) -> bool:
        return t.untyped_storage().data_ptr() == base.data_ptr()

    arr = x.numpy()
    start = base.data_ptr()
    other = torch.float32 if x.dtype == torch.float64 else torch.float64
    return {
        "numpy": start <= arr.ctypes.data < start + max(base.nbytes(), 1),
        "from_numpy": shares(torch.from_numpy(x.numpy())),
        "view": shares(x.view(-1)),
        "slice": shares(x[1:]),
        "transpose": shares(x.transpose(0, 1)),
        "transpose_contiguous": shares(x.transpose(0, 1).contiguous()),
        "contiguous_of_contiguous": shares(x.contiguous()),
        "clone": shares(x.clone()),
        "to_same_dtype": shares(x.to(x.dtype)),
        "to_other_dtype": shares(x.to(other)),
        "tensor_of_numpy": shares(torch.tensor(x.numpy())),
    }
    ### END SOLUTION


def load_ext(source: str | os.PathLike | None = None) -> ModuleType:
    """Compile ``ext.cpp`` (beside this file, or ``source``) with g++ and pybind11 and import it: try it by hand.

    ``ext = load_ext(); x = torch.ones(4); ext.scale_inplace(x, 2.0)``. The build is cached by source hash
    under ``~/.cache/dripstone/l01_ext``; a compile error raises RuntimeError with g++'s message (file:line).
    The grader builds the file itself with the same flags and calls it in a separate process.
    """
    import pybind11

    path = Path(source) if source is not None else Path(__file__).with_name("ext.cpp")
    text = path.read_bytes()
    digest = hashlib.sha256(text + sys.version.encode()).hexdigest()[:16]
    out_dir = Path(os.path.expanduser("~")) / ".cache" / "dripstone" / "l01_ext" / digest
    so = out_dir / f"ext{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}"
    if not so.is_file():
        out_dir.mkdir(parents=True, exist_ok=True)
        cmd = ["g++", "-O0", "-shared", "-fPIC", "-std=c++17", "-fvisibility=hidden", "-w",
               f"-I{pybind11.get_include()}", f"-I{sysconfig.get_paths()['include']}", str(path), "-o", str(so)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"g++ could not compile {path}:\n{done.stderr.strip()[-3000:]}")
    spec = importlib.util.spec_from_file_location("ext", so)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module
