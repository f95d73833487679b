"""Static tamper audit of a submission, done by the judge before any of the submission's code runs.

The kernel guard (:mod:`grader.instrument.guard`) and the traffic counters (:mod:`grader.instrument.traffic`) run in the
process that runs the learner's code, so Python in the same process could switch them off: pop the
torch-function mode stack, patch the interpreter's hooks, rewrite the counters. Nothing in-process
can stop that. What the judge *can* do, out of the submission's reach, is read its source first.

A kernel module needs Triton, torch allocation and arithmetic; it has no use for reflection or for
the grader's machinery. :func:`findings_for` parses the graded module's file and every file of the unit it
imports, sub-folders and packages included (``ast``, nothing executed), and holds them to an **allowlist**
(R3.3 of grader/THREAT_MODEL.md): anything not on it is refused, so the standard library's and the libraries'
ways to import or run code named by a string (pydoc, logging.config, importlib, runpy, pickle, torch.hub,
typing.get_type_hints...) fall out without being named:

* imports: :data:`ALLOWED_MODULES` (the libraries the units' contracts need, with the submodules they use; math
  and pure helpers; ``from grader.constants/validate import`` what they define) and files of the unit (a file
  named like an installed module is refused: importing it would load the module);
* of an allowed library, no other submodule and no name of :data:`REFUSED_NAMES`, and only :data:`MODULE_API` of
  the libraries that hold more (numba, numba.cuda, triton, faiss, io) (:func:`refused_reach`);
* builtins: :data:`ALLOWED_BUILTINS` (not ``help``, ``open``, ``exec``, ``memoryview``...; a local of that name is
  not the builtin); dunder attributes: :data:`ALLOWED_DUNDERS`; no ``__path__``/``__package__`` set;
* a ``@cuda.jit`` body (numba, run by the simulator as Python threads) reaches numba.cuda, math, numba's types,
  other kernels and elements of its arrays, not an array's methods (:meth:`_FileAudit.check_cuda_body`).

Within what the allowlist lets through, the denylist below still names what reaches the checks:

* modules for reflection, process internals or the grader: ``sys``, ``gc``, ``ctypes``,
  ``importlib``, ``inspect``, ``builtins``, ``types``, ``grader``, ``pytest``, ``hypothesis``...;
* the machinery the guard and the counters live in: ``torch.overrides``, ``TorchFunctionMode``,
  ``torch._C``, ``triton.runtime.interpreter``, a ``__torch_function__`` method;
* dynamic code and attribute access: ``exec``, ``eval``, ``compile``, ``__import__``, ``globals``,
  ``vars``, ``setattr``/``delattr``, ``getattr`` with a computed or private name;
* private (``_x``, except on ``self``/``cls``) and dunder attributes (``__dict__``, ``__globals__``,
  ``__class__``, frames...), and ``/proc`` paths;
* assignments to (or ``del`` of) an attribute of an imported module (monkeypatching), and to
  ``__name__``;
* channels between processes that no comm log and no count of the network sees: files (``open``,
  ``os.open``, ``torch.save``, ``torch.load``/``numpy.load`` of anything but ``io.BytesIO``, ``pathlib``,
  ``numpy.memmap``...), sockets, pipes, shared memory (``mmap``, ``share_memory_``) and stores of one's own
  (``TCPStore``...): ranks exchange data with torch.distributed only.

An ``if __name__ == "__main__":`` block is not read: it never runs when graded (the grader loads
the module under a name of its own, and renaming the module is a finding).

Findings are attributed to functions: a use inside ``f`` taints ``f`` and every function of the
submission that refers to it (also across the unit's files, through imports); a use at module level
taints every function of the file and of the files importing it. A kernel exercise reached by a
finding scores 0 with the finding in its message; exercises the finding does not reach are graded
as usual. The same audit runs in ``make grade``, so a learner sees the message before submitting.

The same holds for the exercises run on several gloo ranks (``learner(..., audited=True)``: the ring
collectives, the DDP reducer, the sharded optimizer, tensor parallelism): what their tests compare, the
values and the communication log, is measured in the ranks, which run the learner's code. The plugin audits
every test of an audited or kernel exercise in the judge before the test runs, whatever runs the code.

The audit closes the known ways around the in-process checks; it does not make Python a sandbox
(see grader/BATCH.md, residual risks). Ledger exercises need none of it: their results are compared
in the judge, where the submission's code never runs.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import importlib.util
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from grader.core.target import display_path
from grader.i18n import N_, _

DENIED_MODULES = frozenset(
    {
        *("sys", "gc", "ctypes", "cffi", "importlib", "inspect", "builtins", "types", "marshal", "pickle"),
        *("copyreg", "code", "codeop", "runpy", "pkgutil", "zipimport", "weakref", "atexit"),
        *("threading", "_thread", "multiprocessing", "subprocess", "signal", "faulthandler", "trace", "tracemalloc"),
        *("grader", "pytest", "_pytest", "hypothesis", "unittest", "traffic", "guard"),
        # deserialization that runs code (class 3): a pickle stream can call anything when loaded
        *("_pickle", "shelve", "dill", "cloudpickle", "joblib", "jsonpickle", "yaml", "copy"),
    }
)
# Channels between processes that neither a rank's comm log nor the judge's count of the network sees: refused in
# the exercises run on gloo ranks (and NumPy's flash attention, whose memory is measured), not in kernels, which
# run in one process (the sandbox contains their files and network: the cheat corpus tries both at run time).
CHANNEL = ("a channel between processes the grader cannot count (a file, socket, pipe, store or shared memory): "
           "ranks exchange data with torch.distributed's send/recv and collectives only")
OWN_GROUP = ("a process group of its own: its rendezvous and traffic escape the grader's count; use the default "
             "group")
RANKS_ONLY = frozenset({CHANNEL, OWN_GROUP})  # reasons that refuse an exercise run on ranks, not a kernel
CHANNEL_MODULES = frozenset(
    {
        *("socket", "_socket", "ssl", "select", "selectors", "asyncio", "socketserver", "http", "urllib", "urllib3"),
        *("requests", "xmlrpc", "ftplib", "smtplib", "zmq", "mmap", "_io", "pathlib", "shutil", "tempfile"),
        *("fcntl", "posix", "glob", "concurrent", "sqlite3", "dbm"),
    }
)
DENIED_NAMES = {
    "open": CHANNEL,
    "exec": "runs code built at run time",
    "eval": "runs code built at run time",
    "compile": "builds code at run time",
    "__import__": "imports by computed name",
    "globals": "reaches the module namespace",
    "vars": "reaches an object's namespace",
    "locals": "reaches a frame's namespace",
    "setattr": "patches attributes",
    "delattr": "patches attributes",
    "breakpoint": "stops the grader",
    "attrgetter": "attribute access by computed name",
    "methodcaller": "attribute access by computed name",
    "TorchFunctionMode": "the kernel guard's machinery",
    "TorchDispatchMode": "the kernel guard's machinery",
    "DisableTorchFunction": "switches the kernel guard off",
    "DisableTorchFunctionSubclass": "switches the kernel guard off",
    "__builtins__": "reaches the builtins",
    "__array_interface__": "hands raw memory to NumPy",
    "__array_struct__": "hands raw memory to NumPy",
    "__cuda_array_interface__": "hands raw memory to another library",
    "__loader__": "reaches the import machinery",
    "__spec__": "reaches the import machinery",
    "JITFunction": "the Triton interpreter's machinery",
    "InterpretedFunction": "the Triton interpreter's machinery",
    "GridExecutor": "the Triton interpreter's machinery",
    "TensorHandle": "the Triton interpreter's backing arrays",
}
# Reflective builtins: fine when called with a literal name (checked below), refused as values
# (``get = getattr``, ``functools.reduce(getattr, ...)``, ``map(getattr, ...)``), which hides the name.
REFLECTIVE_BUILTINS = frozenset({"getattr", "hasattr", "type", "dir", "id"})
CODE_CARRYING = "deserialization that can run code"
DENIED_ATTRS = {
    "overrides": "torch.overrides holds the kernel guard's machinery",
    "interpreter": "the Triton interpreter's hooks count and bounds-check traffic",
    "modules": "sys.modules reaches the grader's modules",
    "ctypeslib": "reads raw memory",
    "handle": "the Triton interpreter's backing array of a tile: compute with tl.* in the kernel",
    **dict.fromkeys(("serialization", "package", "PackageImporter", "read_pickle", "unsafe_load", "full_load",
                     "loads", "load_state_dict_from_url", "load_url"), CODE_CARRYING),
    **{k: DENIED_NAMES[k] for k in ("JITFunction", "InterpretedFunction", "GridExecutor", "TensorHandle")},
    **dict.fromkeys(("Stream", "ExternalStream", "StreamContext", "stream", "set_stream"),
                    "work on another CUDA stream escapes gpu_perf's timing (events on the current stream)"),
    **dict.fromkeys(("f_back", "f_globals", "f_locals", "f_builtins", "tb_frame", "gi_frame", "cr_frame"),
                    "reaches the grader's frames"),
    # os.open/os.pipe/os.fork..., torch.save and file-backed or shared storage, NumPy's files, torch's own stores
    **dict.fromkeys(
        (
            *("open", "FileIO", "fdopen", "pipe", "pipe2", "mkfifo", "fork", "forkpty", "memfd_create", "socketpair"),
            *("sendfile", "mkstemp", "save", "savez", "savetxt", "loadtxt", "tofile", "fromfile", "memmap"),
            *("from_file", "share_memory_", "shared_memory", "SharedMemory", "write_bytes", "write_text"),
            *("read_bytes", "read_text", "TCPStore", "FileStore", "HashStore", "PrefixStore", "Store", "rpc"),
        ),
        CHANNEL,
    ),
    **dict.fromkeys(("new_group", "new_subgroups", "new_subgroups_by_enumeration", "split_group", "init_device_mesh",
                     "DeviceMesh", "init_process_group", "destroy_process_group"), OWN_GROUP),
    **{k: DENIED_NAMES[k] for k in ("TorchFunctionMode", "TorchDispatchMode", "DisableTorchFunction",
                                     "DisableTorchFunctionSubclass", "attrgetter", "methodcaller")},
}
# Dunder attributes that reach namespaces, frames, code or the class graph (``x.__getitem__`` does not).
DENIED_DUNDER_ATTRS = frozenset(
    {
        *("__dict__", "__class__", "__mro__", "__base__", "__bases__", "__subclasses__", "__globals__"),
        *("__code__", "__closure__", "__builtins__", "__self__", "__func__", "__wrapped__", "__objclass__"),
        *("__getattribute__", "__getattr__", "__setattr__", "__delattr__", "__get__", "__set__", "__delete__"),
        *("__traceback__", "__context__", "__cause__", "__import__", "__loader__", "__spec__", "__defaults__"),
        *("__kwdefaults__", "__reduce__", "__reduce_ex__", "__getstate__", "__setstate__", "__init_subclass__"),
        *("__class_getitem__", "__set_name__", "__torch_function__", "__torch_dispatch__", "__array_function__"),
        *("__array_interface__", "__array_struct__", "__cuda_array_interface__"),
    }
)
DENIED_METHODS = {
    "__torch_function__": "hooks torch's dispatch, where the kernel guard lives",
    "__torch_dispatch__": "hooks torch's dispatch, where the kernel guard lives",
    **dict.fromkeys(("__reduce__", "__reduce_ex__", "__setstate__", "__getstate__", "__getnewargs__",
                     "__getnewargs_ex__"), "runs code when the object is unpickled or copied (" + CODE_CARRYING + ")"),
    **dict.fromkeys(("__getattr__", "__getattribute__", "__array_function__", "__array_ufunc__"),
                    "hooks attribute access or NumPy dispatch"),
}
# What a @triton.jit body may call besides tl.* and jit functions: compile-time helpers on ints and
# the exceptions a stub raises. Under the interpreter a kernel body is Python: anything else would be
# host code (NumPy on the tile's backing array, torch) whose loads and stores still match the ledger.
JIT_BUILTINS = frozenset(
    {
        *("range", "float", "int", "bool", "min", "max", "len", "abs", "isinstance", "tuple", "print"),
        *("NotImplementedError", "ValueError", "AssertionError", "TypeError"),
    }
)
# Methods of a Triton tile (triton.language.core.tensor) and of block pointers / tensor descriptors.
TILE_METHODS = frozenset(
    {
        *("T", "abs", "advance", "argmax", "argmin", "associative_scan", "atomic_add", "atomic_and", "atomic_cas"),
        *("atomic_max", "atomic_min", "atomic_or", "atomic_xchg", "atomic_xor", "broadcast_to", "cast", "cdiv"),
        *("ceil", "cos", "cumprod", "cumsum", "erf", "exp", "exp2", "expand_dims", "flip", "floor", "gather"),
        *("histogram", "log", "log2", "logical_and", "logical_or", "max", "min", "permute", "ravel", "reduce"),
        *("reduce_or", "reshape", "rsqrt", "sigmoid", "sin", "softmax", "sort", "split", "sqrt", "sqrt_rn"),
        *("store", "load", "sum", "to", "trans", "view", "xor_sum"),
    }
)
# Statements a kernel body has no use for; each runs host code under the interpreter.
NOT_KERNEL_CODE = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With, ast.AsyncWith,
                   ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.Await, ast.Yield, ast.YieldFrom,
                   ast.Try, ast.Match)
HOST_IN_KERNEL = "host code inside a @triton.jit kernel: a kernel body calls only tl.*, other jit functions " \
    "and range/min/max on constants"
LOADERS = frozenset({"torch.load", "torch.serialization.load", "numpy.load"})
TRITON_JIT = frozenset({"triton.jit", "triton.runtime.jit", "triton.runtime.jit.jit"})
TRITON_WRAPPERS = frozenset({"triton.autotune", "triton.heuristics"})  # triton.autotune(...)(kernel) wraps a kernel
_FORMAT_ATTR = re.compile(r"\{[^{}]*(\.\s*_|\[\s*['\"]?_)")  # "{0._C}".format(torch): attribute access by string
SELF_NAMES = frozenset({"self", "cls"})
NOT_NEEDED = "reflection, process internals or the grader: not needed by a graded kernel or rank"
MACHINERY = "the machinery the grader's kernel checks live in"
# ``from grader.constants import GPUS``, ``from grader.validate import check_int``: the course's shared
# tables and input checks, which every unit's provided code uses.
ALLOWED_FROM = frozenset({"grader.constants", "grader.validate"})

# ---- the allowlist (R3.3): what an audited module may import and reach; anything else is refused -------------
# Pure helpers: no way from them to code named by a string, to the process or to the grader (their few exceptions
# are in REFUSED_NAMES below).
PURE_MODULES = (
    "__future__", "math", "cmath", "numbers", "fractions", "decimal", "statistics", "random", "itertools", "functools",
    "operator", "collections", "collections.abc", "heapq", "bisect", "dataclasses", "enum", "typing", "abc",
    "contextlib", "re", "io",
)
# The libraries the units' contracts need, with the submodules they use (any other submodule of a library is
# refused: torch.hub, torch.utils, numpy.lib, numba.cuda.simulator, triton.runtime...).
LIBRARY_MODULES = (
    "torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.distributed", "torch.autograd", "torch.optim",
    "torch.linalg", "torch.fft", "torch.special", "torch.cuda",
    "triton", "triton.language", "triton.language.extra", "triton.language.extra.libdevice", "triton.language.math",
    "numpy", "numpy.linalg", "numpy.random", "numpy.fft",
    "numba", "numba.cuda", "faiss",
)
ALLOWED_MODULES = frozenset(PURE_MODULES + LIBRARY_MODULES) | ALLOWED_FROM
LIBRARY_ROOTS = frozenset(m.split(".")[0] for m in ALLOWED_MODULES)
# Modules of which only these names may be reached (the rest of them loads code, reads raw memory or files).
NUMBA_TYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
               "uint64", "boolean", "intp", "uintp", "complex64", "complex128", "void")
MODULE_API: dict[str, frozenset[str]] = {
    "io": frozenset({"BytesIO", "StringIO"}),
    "triton": frozenset({"jit", "autotune", "Config", "cdiv", "next_power_of_2", "heuristics", "language",
                         "constexpr", "__version__"}),
    "numba": frozenset({"cuda", "types", *NUMBA_TYPES}),
    "numba.cuda": frozenset(
        {
            *("jit", "shared", "local", "const", "threadIdx", "blockIdx", "blockDim", "gridDim", "syncthreads"),
            *("syncthreads_count", "syncthreads_and", "syncthreads_or", "grid", "gridsize", "atomic", "laneid"),
            *("warpsize", "threadfence", "threadfence_block", "threadfence_system", "fma", "selp", "cbrt", "brev"),
            *("clz", "ffs", "popc", "libdevice", "device_array", "device_array_like", "to_device"),
        }
    ),
    "faiss": frozenset(
        {
            *("IndexFlat", "IndexFlatL2", "IndexFlatIP", "IndexIVF", "IndexIVFFlat", "IndexIVFPQ", "IndexPQ"),
            *("IndexHNSWFlat", "Kmeans", "clone_index", "omp_set_num_threads", "omp_get_max_threads"),
            *("normalize_L2", "METRIC_L2", "METRIC_INNER_PRODUCT"),
        }
    ),
}
# Names of an allowed module that load or run code named by a string (or compile it), refused by name.
REFUSED_NAMES: dict[str, frozenset[str]] = {
    "torch": frozenset({"ops", "classes", "compile", "hub", "package", "jit", "library", "utils", "load_library"}),
    "typing": frozenset({"get_type_hints", "ForwardRef", "evaluate_forward_ref"}),
    "operator": frozenset({"attrgetter", "methodcaller"}),
    "dataclasses": frozenset({"make_dataclass"}),
}
# Builtins a graded module may call (every exception class too): not open, exec, eval, compile, __import__, help
# (which imports a module named by a string), input, exit, globals, vars, memoryview...
ALLOWED_BUILTINS = frozenset(
    {
        *("abs", "all", "any", "ascii", "bin", "bool", "bytearray", "bytes", "callable", "chr", "classmethod"),
        *("complex", "dict", "divmod", "enumerate", "filter", "float", "format", "frozenset", "getattr", "hasattr"),
        *("hash", "hex", "id", "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max", "min", "next"),
        *("object", "oct", "ord", "pow", "print", "property", "range", "repr", "reversed", "round", "set", "slice"),
        *("sorted", "staticmethod", "str", "sum", "super", "tuple", "type", "zip", "aiter", "anext", "dir"),
        *("Ellipsis", "NotImplemented", "True", "False", "None", "__name__", "__doc__", "__debug__"),
    }
)
# Dunder attributes a graded module may use (``super().__init__()``, ``fn.__name__``); every other is reflection.
ALLOWED_DUNDERS = frozenset(
    {
        *("__init__", "__name__", "__qualname__", "__doc__", "__len__", "__getitem__", "__setitem__", "__contains__"),
        *("__iter__", "__next__", "__enter__", "__exit__", "__call__", "__post_init__", "__repr__", "__str__"),
        *("__eq__", "__hash__", "__lt__", "__le__", "__gt__", "__ge__", "__add__", "__sub__", "__mul__"),
        *("__truediv__", "__neg__", "__bool__", "__main__", "__version__"),
    }
)
# What a @cuda.jit body may reach besides numba.cuda, math, numba's types and other kernels of the unit: the
# metadata of an array and the components of a thread index (x.shape[0], cuda.threadIdx.x).
CUDA_KERNEL_ATTRS = frozenset({"shape", "size", "ndim", "dtype", "x", "y", "z"})
NUMBA_CUDA_JIT = frozenset({"numba.cuda.jit"})
BUILTIN_NAMES = frozenset(n for n in dir(builtins) if not (isinstance(getattr(builtins, n), type)
                                                          and issubclass(getattr(builtins, n), BaseException)))
# Module-level dunder names a graded module may set (a class body's __slots__, a module's __all__); setting
# __path__, __package__, __spec__, __loader__... makes the import machinery load files the audit does not read.
MODULE_DUNDERS_SET = frozenset({"__all__", "__slots__", "__doc__"})
MODULE_DUNDER = N_("sets a name the import machinery reads (__path__, __package__...): it would load files the "
                   "audit does not read; import the unit's files by their names")
NOT_ALLOWED_IMPORT = N_("not among what a graded module may import: {allowed}, and files of the unit")
NOT_ALLOWED_REACH = N_("not among what a graded module may use of that library (it loads code named by a "
                       "string, or reaches raw memory, files or the process): use {allowed}")
NOT_ALLOWED_BUILTIN = N_("a builtin a graded module may not use (it runs, imports or reaches code by a name, or "
                         "talks to the process): use plain Python, torch, numpy and math")
NOT_ALLOWED_DUNDER = N_("reflection through a dunder attribute: a graded module uses only the public API "
                        "(__init__, __name__, __len__, __getitem__... are fine)")
SHADOWS_MODULE = N_("a file of the unit named like an installed module ({module}): importing it would load that "
                    "module, not the file; rename the file")
CUDA_SIGNATURE = N_("numba evaluates a signature given to cuda.jit as Python code: declare the kernel with "
                    "@cuda.jit or @cuda.jit(device=True)")
HOST_IN_CUDA_KERNEL = N_("host code inside a @cuda.jit kernel: a kernel body uses only numba.cuda (threadIdx, "
                         "shared.array, syncthreads, atomic...), math, numba's types, other @cuda.jit functions, "
                         "element reads and writes and an array's shape")


class TamperingRefused(AssertionError):
    """An audited exercise reaches code that could switch off the grader's checks."""


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    what: str
    why: str  # in English (the catalog's msgid); described in the learner's language
    fields: tuple[tuple[str, str], ...] = ()  # the placeholders of ``why``

    def describe(self) -> str:
        why = _(self.why).format(**dict(self.fields)) if self.fields else _(self.why)
        return _("{path} line {line}: `{what}` ({why})").format(path=self.path, line=self.line, what=self.what,
                                                                 why=why)


def _allowed_text() -> str:
    """The allowlist in words: ``torch (nn, distributed...), triton (language...), ..., math, ...``."""
    subs: dict[str, list[str]] = {}
    for m in LIBRARY_MODULES:
        root, _dot, rest = m.partition(".")
        subs.setdefault(root, [])
        if rest:
            subs[root].append(rest)
    libs = [f"{r} ({', '.join(v)})" if v else r for r, v in subs.items()]
    return ", ".join([*libs, *(m for m in PURE_MODULES if m != "__future__"), "grader.constants", "grader.validate"])


ALLOWED_TEXT = _allowed_text()


@functools.cache
def _package_dir(module: str) -> Path | None:
    """The folder of an installed package, found without importing it (nothing of it runs)."""
    root, *rest = module.split(".")
    try:
        spec = importlib.util.find_spec(root)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).joinpath(*rest)


@functools.cache
def _is_submodule(module: str, name: str) -> bool:
    """Whether ``module.name`` is a module of an installed package (a file or folder of it)."""
    folder = _package_dir(module)
    if folder is None or not folder.is_dir():
        return False
    return (folder / f"{name}.py").is_file() or (folder / name).is_dir() or any(folder.glob(f"{name}.*.so"))


@functools.cache
def installed(top: str) -> bool:
    """Whether ``import top`` finds a module outside the unit (found, not imported: nothing of it runs)."""
    if top in sys.builtin_module_names or top in sys.stdlib_module_names:
        return True
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return True


@functools.cache
def _own_names(module: str) -> frozenset[str]:
    """The public names a grader module the learner may import from defines itself (not what it imports)."""
    path = Path(__file__).resolve().parents[2].joinpath(*module.split(".")).with_suffix(".py")
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return frozenset()
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    for node in tree.body:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [])
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return frozenset(n for n in names if not n.startswith("_"))


def refused_reach(full: str) -> tuple[str, str] | None:
    """(the part refused, what is allowed there) when the dotted name ``full`` reaches a part of an allowed library
    a graded module may not use (``torch.hub.load``, ``numba.cuda.simulator``, ``np.lib.format``); None otherwise."""
    parts = full.split(".")
    if parts[0] not in LIBRARY_ROOTS:
        return None
    for i in range(1, len(parts)):
        prefix, name = ".".join(parts[:i]), parts[i]
        if prefix not in ALLOWED_MODULES and prefix != parts[0]:
            return None  # past the modules, into an object's attributes: the generic rules read them
        here = f"{prefix}.{name}"
        if prefix in ALLOWED_FROM:  # the course's tables and checks: what they define, not what they import
            if name not in _own_names(prefix):
                return here, ", ".join(f"{prefix}.{n}" for n in sorted(_own_names(prefix)))
        elif prefix in MODULE_API:
            if name not in MODULE_API[prefix]:
                return here, ", ".join(f"{prefix}.{n}" for n in sorted(MODULE_API[prefix]))
        elif name in REFUSED_NAMES.get(prefix, ()) or (here not in ALLOWED_MODULES and _is_submodule(prefix, name)):
            subs = sorted(m for m in ALLOWED_MODULES if m.startswith(prefix + ".") and m.count(".") == i)
            return here, (", ".join(subs) or prefix) + (" and the functions of " + prefix)
    return None


def _ranks_only_or(name: str, why: str) -> str:
    """A name refused for ranks only (a channel, a group of one's own) keeps that reason; any other, ``why``."""
    reason = DENIED_ATTRS.get(name) or DENIED_NAMES.get(name)
    return reason if reason in RANKS_ONLY else why


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts)) or type(node).__name__


def _is_true(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _is_false(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _is_main_block(stmt: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` at module level."""
    test = stmt.test if isinstance(stmt, ast.If) else None
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__") and name.isidentifier()


# ---- object attributes (R3.3): an allowlist too ----------------------------------------------------------------
# An attribute of a value that is not an allowed module (``x.sum()``, ``out.shape``, ``torch.float32.itemsize``) must be
# the public API of a value the units' contracts use, or a name the unit's own files define. The list is generated from
# the libraries (``dir()`` of OBJECT_SOURCES) into a checked-in file, OBJECT_ATTRS_FILE, that a test regenerates and
# compares (tests/grader/test_audit.py::test_the_object_attribute_allowlist_is_what_the_libraries_generate): an upgrade
# that widens a library's API fails that test instead of widening the audit silently.
OBJECT_ATTRS_FILE = Path(__file__).with_name("object_attrs.txt")
# (label, how to get the value or class whose dir() is allowed): Python's own values, then the libraries'.
OBJECT_SOURCES: tuple[tuple[str, str], ...] = (
    *((f"builtins.{n}", f"builtins.{n}") for n in (
        "object", "int", "float", "complex", "bool", "str", "bytes", "bytearray", "list", "tuple", "dict", "set",
        "frozenset", "slice", "range", "BaseException", "property")),
    *((f"{m}", m) for m in (
        "collections.deque", "collections.OrderedDict", "collections.defaultdict", "collections.Counter",
        "functools.partial", "re.Pattern", "re.Match", "io.BytesIO", "io.StringIO", "random.Random",
        "fractions.Fraction", "decimal.Decimal", "enum.Enum", "contextlib.ExitStack", "dataclasses.Field")),
    *((f"{m}", m) for m in (
        "torch.Tensor", "torch.nn.Parameter", "torch.dtype", "torch.device", "torch.Size", "torch.Generator",
        "torch.nn.Module", "torch.optim.Optimizer", "torch.autograd.Function", "torch.autograd.function.FunctionCtx",
        "torch.distributed.Work", "torch.distributed.ReduceOp", "torch.distributed.P2POp", "torch.futures.Future",
        "torch.cuda.Event", "torch.return_types.max", "torch.return_types.topk", "torch.return_types.sort")),
    ("torch.finfo(torch.float32)", "torch.finfo(torch.float32)"),
    ("torch.iinfo(torch.int32)", "torch.iinfo(torch.int32)"),
    *((f"{m}", m) for m in (
        "numpy.ndarray", "numpy.dtype", "numpy.generic", "numpy.float32", "numpy.int64", "numpy.random.Generator")),
    ("numpy.finfo(numpy.float32)", "numpy.finfo(numpy.float32)"),
    ("numpy.iinfo(numpy.int32)", "numpy.iinfo(numpy.int32)"),
    *((f"{m}", m) for m in (
        "triton.language.tensor", "triton.language.dtype", "triton.language.block_type",
        "triton.language.pointer_type", "triton.language.tensor_descriptor", "triton.language.constexpr")),
    ("triton.language.constexpr(1)", "triton.language.constexpr(1)"),
    ("triton.Config({})", "triton.Config({})"),
    # numba.cuda's real classes read from their source (with NUMBA_ENABLE_CUDASIM the simulator replaces the modules)
    ("numba.cuda.cudadrv.devicearray.DeviceNDArray", "ast:numba/cuda/cudadrv/devicearray.py:DeviceNDArrayBase,"
     "DeviceNDArray"),
    ("numba.cuda.stubs", "ast:numba/cuda/stubs.py:Dim3,shared,local,const,atomic"),
    *((f"{m}", m) for m in (
        "faiss.Index", "faiss.IndexFlat", "faiss.IndexFlatL2", "faiss.IndexFlatIP", "faiss.IndexIVFFlat",
        "faiss.IndexIVFPQ", "faiss.IndexPQ", "faiss.IndexHNSWFlat", "faiss.HNSW", "faiss.ProductQuantizer")),
    ("faiss.Kmeans(4, 2)", "faiss.Kmeans(4, 2)"),
)
# Attributes set on instances only (not in dir() of their class): a tile's, a numba device array's; and those of
# torch.cuda.get_device_properties(...), whose class a CPU build of torch lacks.
INSTANCE_ATTRS = frozenset({"shape", "dtype", "type", "numel", "value", "size", "ndim", "strides", "stride",
                            "name", "primitive_bitwidth", "element_ty", "x", "y", "z", "args", "major", "minor",
                            "total_memory", "multi_processor_count", "warp_size", "L2_cache_size"})
# Public names of those values that hand back an interpreter's or simulator's object, raw memory or a file: removed
# from the generated list, and refused even where the unit's own files define a name like it.
REMOVED_ATTRS = {
    "handle": "a Triton tile's TensorHandle: the interpreter's backing NumPy array, written past the traffic count",
    "untyped_storage": "a tensor's raw storage: its bytes are read and written by storage methods, past the guard",
    "storage": "a tensor's raw storage: its bytes are read and written by storage methods, past the guard",
    "data_ptr": "a raw address: only a raw-memory reader (ctypes, __array_interface__) has a use for it",
    "ctypes": "NumPy's ctypes view of an array: raw memory through ctypes",
    "dump": "NumPy's pickle of an array, to a file (a channel; a pickle runs code when loaded)",
    "dumps": "NumPy's pickle of an array (a pickle runs code when loaded)",
    "device_ctypes_pointer": "a numba device array's raw device memory",
    "gpu_data": "a numba device array's raw device memory",
    "as_cuda_arg": "a numba device array's raw device memory",
    "get_ipc_handle": "hands a numba device array's memory to another process (a channel)",
    "boxed": "torch.distributed.Work as a TorchScript object of the C++ runtime",
    "unbox": "torch.distributed.Work from a TorchScript object of the C++ runtime",
    "this": "faiss's SWIG pointer to the C++ object (raw memory)",
    "thisown": "faiss's SWIG ownership of the C++ object (frees it under the grader)",
    "get_xb": "faiss's raw pointer to an index's vectors",
}
# Source files whose classes are the interpreters' and simulators' internals (read with ast, not imported): their
# public names and instance attributes that no allowed value has are named as such when refused.
INTERNAL_SOURCES = ("triton.runtime.interpreter", "triton.runtime.jit", "triton.runtime.autotuner",
                    "numba.cuda.simulator.kernel", "numba.cuda.simulator.kernelapi",
                    "numba.cuda.simulator.cudadrv.devicearray")
OBJECT_VERSIONS = ("torch", "numpy", "triton", "numba", "faiss")
NOT_ALLOWED_ATTR = N_("not among the attributes the course's libraries allow (the public API of torch's tensors, "
                      "NumPy's arrays, Triton's tiles, numba.cuda's arrays, faiss's indexes and Python's values) nor "
                      "a name the unit's own files define")
REMOVED_ATTR = N_("reaches an interpreter's or simulator's internals, raw memory or a file, past the grader's checks "
                  "(refused even if the unit defines a name like it)")
INTERNAL_ATTR = N_("a name of the Triton interpreter's or numba simulator's internals, past the grader's checks")
LIBRARY_OBJECT_ATTR = N_("not an attribute of that library object (a name of your own read from or kept on a library's "
                         "class, function or constant is state every copy of your module shares): keep it in your own "
                         "objects")
CALL_RESULT_STORE = N_("sets an attribute on what a call returned (`type(x)`, `super()`, a factory's object: a class "
                       "or an object other code shares): keep the state in your own objects (`self.name = ...`)")
# What host code may take of a kernel object itself (``k.best_config`` after autotuning); every other attribute of
# one is the interpreter's or the compiler's machinery (k.fn, k.run, k.cache...), whatever the unit defines.
KERNEL_OBJECT_ATTRS = frozenset({"best_config"})
KERNEL_AS_VALUE = N_("a kernel object used as a value in host code (its attributes are the interpreter's or compiler's "
                     "machinery): launch it where it is defined, with kernel[grid](...)")
KERNEL_OBJECT_ATTR = N_("an attribute of a kernel object (the interpreter's or compiler's machinery): launch it with "
                        "kernel[grid](...)")


def _object_source(expr: str) -> object:
    """The value or class a source of OBJECT_SOURCES names (``torch.Tensor``, ``numpy.finfo(numpy.float32)``)."""
    head, _paren, rest = expr.partition("(")
    parts = head.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            obj = getattr(obj, p)
        break
    if rest:  # a constructor called on literals and dotted names: numpy.finfo(numpy.float32), faiss.Kmeans(4, 2)
        args = [_object_source(a) if re.fullmatch(r"[A-Za-z_][\w.]*", a) else ast.literal_eval(a)
                for a in (part.strip() for part in rest.removesuffix(")").split(",")) if a]
        obj = obj(*args)  # type: ignore[operator]
    return obj


def _class_names(path: Path, only: frozenset[str] | None = None) -> set[str]:
    """Every public name the classes of a source file (those named ``only``) define: methods, class attributes,
    ``self.x = ...``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        if only is None or cls.name in only:
            names |= _defined_attr_names(cls.body, in_class=True)
    return {n for n in names if not n.startswith("_")}


def generate_object_attrs() -> str:
    """The text of OBJECT_ATTRS_FILE from the installed libraries (imports them: run by the drift test and by hand)."""
    versions = [f"python {sys.version_info.major}.{sys.version_info.minor}"]
    for lib in OBJECT_VERSIONS:
        versions.append(f"{lib} {importlib.import_module(lib).__version__}")
    public: set[str] = set(INSTANCE_ATTRS)
    for _label, expr in OBJECT_SOURCES:
        if expr.startswith("ast:"):  # a package's source file, read: ast:numba/cuda/stubs.py:Dim3,shared
            _ast, rel, classes = expr.split(":")
            package = _package_dir(rel.split("/")[0])
            if package is None:
                raise ImportError(rel)
            public |= _class_names(package.joinpath(*rel.split("/")[1:]), frozenset(classes.split(",")))
            continue
        obj = _object_source(expr)
        for n in dir(obj):
            if n.startswith("_"):
                continue
            if expr.startswith("faiss") and (n.endswith("_c") or n.endswith("_ex")):
                continue  # the raw-pointer variants of faiss's methods (SWIG pointers: raw memory)
            public.add(n)
    public -= REMOVED_ATTRS.keys()
    public -= DENIED_ATTRS.keys()
    internal: set[str] = set()
    for module in INTERNAL_SOURCES:  # read from the package's folder: nothing imported, no simulator swapped in
        root, *rest = module.split(".")
        package = _package_dir(root)
        if package is None:
            raise ImportError(module)
        internal |= _class_names(package.joinpath(*rest[:-1], rest[-1] + ".py"))
    internal -= public
    internal -= REMOVED_ATTRS.keys()
    internal -= DENIED_ATTRS.keys()
    lines = [
        "# Attribute names an audited learner file may use on a value that is not an allowed module (R3.3 of",
        "# grader/THREAT_MODEL.md), generated by grader/judge/audit.py::generate_object_attrs: do not edit; regenerate",
        "# with `python -m grader.judge.audit --write-object-attrs` and review what a library upgrade added.",
        "# " + ", ".join(versions),
        "# sources: " + ", ".join(label for label, _expr in OBJECT_SOURCES),
        "[public]",
        *sorted(public),
        "# the interpreters' and simulators' internals (named as such when refused): "
        + ", ".join(INTERNAL_SOURCES),
        "[internal]",
        *sorted(internal),
    ]
    return "\n".join(lines) + "\n"


@functools.cache
def object_attrs() -> tuple[frozenset[str], frozenset[str]]:
    """(the allowed object attributes, the internals' names) from OBJECT_ATTRS_FILE (read once)."""
    sections: dict[str, set[str]] = {"public": set(), "internal": set()}
    current = None
    for line in OBJECT_ATTRS_FILE.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections[line[1:-1]]
        elif current is not None:
            current.add(line)
    return frozenset(sections["public"]), frozenset(sections["internal"])


def _defined_attr_names(body: list[ast.AST], in_class: bool = False) -> set[str]:
    """The attribute names code defines: functions and classes (methods included), names bound at the top of a module
    or a class body (dataclass fields), and ``self.x``/``cls.x`` assignments."""
    names: set[str] = set()
    todo = list(body)
    top = {id(n) for n in body}
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            if isinstance(node, ast.ClassDef):
                names |= _defined_attr_names(node.body, in_class=True)
        elif id(node) in top and isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) \
                and node.value.id in SELF_NAMES:
            names.add(node.attr)
        todo.extend(ast.iter_child_nodes(node))
    return names


@functools.cache
def _grader_own_attrs() -> frozenset[str]:
    """What grader.constants and grader.validate define (a learner may use their values' attributes)."""
    names: set[str] = set()
    for module in ALLOWED_FROM:
        path = Path(__file__).resolve().parents[2].joinpath(*module.split(".")).with_suffix(".py")
        with contextlib.suppress(OSError, SyntaxError):
            names |= _defined_attr_names(ast.parse(path.read_text(encoding="utf-8")).body)
    return frozenset(n for n in names if not n.startswith("_"))


def attr_refusal(name: str, own: frozenset[str] | set[str], *, on_library: bool = False) -> str | None:
    """Why the attribute ``name`` of a value that is no allowed module is refused (None: it is allowed), given the
    names the unit's own files define; ``on_library``: the value is a library's object spelled through the imports,
    which has no attribute the unit named (a registry). Private, dunder and denied names are the other rules' (not
    said twice)."""
    if _is_private(name) or _is_dunder(name) or name in DENIED_ATTRS or name in DENIED_DUNDER_ATTRS:
        return None
    public, internal = object_attrs()
    if name in REMOVED_ATTRS:
        return REMOVED_ATTR
    if name in public:
        return None
    if on_library and name in own:
        return LIBRARY_OBJECT_ATTR
    if name in own or name in _grader_own_attrs():
        return None
    return INTERNAL_ATTR if name in internal else NOT_ALLOWED_ATTR


@dataclass
class _Scope:
    """What one top-level definition (or the module-level code) uses and refers to."""

    findings: list[Finding] = field(default_factory=list)
    refs: set[str] = field(default_factory=set)  # names, and "alias.attr" for module attributes
    defines: set[str] = field(default_factory=set)
    # calls from a jit body to a name imported from another file: fine only if it is a jit function there
    deep: set[str] = field(default_factory=set)  # files of the unit's packages or sub-folders it imports
    # (the local name called, the attribute called on it or None, the finding if it is no kernel there)
    jit_imports: list[tuple[str, str | None, Finding]] = field(default_factory=list)


Resolver = Callable[[str, "str | None"], "list[str] | None"]


def _names_bound_by(node: ast.AST) -> list[str]:
    """The names ``node`` itself binds (an assigned or deleted name, a def or class, an import, a handler's or a
    pattern's name), not those of the nodes inside it."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
        return [node.id]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) or (
            isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name):
        return [node.name]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


def _bound_names(nodes: list[ast.AST]) -> set[str]:
    """The names ``nodes`` bind in their own scope (assignments, imports, defs, handlers, patterns), not inside the
    functions, classes and comprehensions they define."""
    out: set[str] = set()
    todo = list(nodes)
    while todo:
        node = todo.pop()
        out.update(_names_bound_by(node))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            todo.extend(node.decorator_list)
            if not isinstance(node, ast.ClassDef):
                todo.extend([*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)])
            continue
        if isinstance(node, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            continue
        todo.extend(ast.iter_child_nodes(node))
    return out


def _params(args: ast.arguments) -> set[str]:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, *filter(None, (args.vararg, args.kwarg))]
    return {a.arg for a in every}


class _FileAudit(ast.NodeVisitor):
    def __init__(self, shown: str, resolve: Resolver | None = None) -> None:
        self.shown = shown
        self.resolve = resolve  # an import -> the unit's files it loads (None: not a file of the unit)
        self.targets: set[str] = set()  # the unit's files this one imports
        self.deep: set[str] = set()  # of them, those in sub-folders or packages imported when the file is imported
        self.flat: set[str] = set()  # and the files beside it (their import-time findings reach the whole file)
        self.scopes: list[tuple[set[str], bool]] = []  # the enclosing function/class/comprehension scopes' names
        self.module_names: set[str] = set()  # the names bound at module level
        self.cuda_names: set[str] = set()  # functions of this file made @cuda.jit (kernels and device functions)
        # local name -> (the unit's file it comes from, the name in that file or None for the file itself)
        self.local_targets: dict[str, tuple[str, str | None]] = {}
        self.modules: set[str] = set()  # local names bound to imported modules
        self.imports: dict[str, tuple[str, str | None]] = {}  # local name -> (module, attribute or None)
        # names bound once in the file, to a library object spelled through the imports (O = torch.optim.Optimizer):
        # read as that spelling everywhere (their attributes, and stores through them, are the library object's)
        self.aliases: dict[str, str] = {}
        self.scope = _Scope()
        self.depth = 0  # inside how many function bodies: 0 is code that runs when the module is imported
        self.at_import = _Scope()  # what import-time code (module level, decorators, defaults) uses
        self.jit_names: set[str] = set()  # functions of this file made @triton.jit
        self.top_defs: set[str] = set()
        self.jit_uses: set[int] = set()  # ids of the nodes that spell triton.jit as a decorator or a call
        # kernel objects of this file (jit functions, and names bound to triton.autotune(...)(kernel)) and the ids of
        # the uses of them host code may make: k[grid](...), k.attr (read by the kernel-object rule), a wrapper's arg
        self.kernel_objects: set[str] = set()
        self.kernel_uses: set[int] = set()
        self.in_kernel = 0  # inside how many jit bodies (a kernel naming another kernel is the jit audit's)
        # uses of names imported from the unit's files that are refused if they name a kernel object there, checked
        # with the unit: ((local name, attribute of it when it is a module of the unit), finding, scope lists)
        self.kernel_refs: list[tuple[tuple[str, str | None], Finding, list[Finding], list[Finding] | None]] = []
        self.called: set[int] = set()  # ids of Name nodes that are the function of a call
        # attributes of values that are no allowed module, checked once the unit's own names are known (R3.3):
        # (the name, its finding, the findings of the scope it is in, the import-time findings when it runs at import)
        self.object_attrs: list[tuple[str, Finding, list[Finding], list[Finding] | None, bool]] = []

    def finding(self, node: ast.AST, what: str, why: str, **fields: str) -> None:
        found = Finding(self.shown, getattr(node, "lineno", 0), what, why, tuple(sorted(fields.items())))
        self.scope.findings.append(found)
        if self.depth == 0:
            self.at_import.findings.append(found)

    def object_attr(self, node: ast.AST, name: str, what: str, *, on_library: bool = False) -> None:
        """``what`` reaches the attribute ``name`` of a value that is not an allowed module: held to the allowlist of
        object attributes once the unit's own names are known (:func:`_check_object_attrs`); ``on_library``: the
        value is a library's object spelled through the imports (``torch.optim.Optimizer``), where a name only the
        unit defines is refused."""
        found = Finding(self.shown, getattr(node, "lineno", 0), what, NOT_ALLOWED_ATTR)
        self.object_attrs.append((name, found, self.scope.findings, self.at_import.findings if self.depth == 0
                                  else None, on_library))

    def _library_spelled(self, value: ast.AST) -> bool:
        """``value`` is an allowed library's object spelled through the imports or an alias of one
        (``torch.optim.Optimizer``, ``Optimizer`` from ``from torch.optim import Optimizer``), not a file of the
        unit's nor the grader's."""
        full = self.full(value)
        return full is not None and not full.startswith(".") and full.split(".")[0] in LIBRARY_ROOTS

    def kernel_ref(self, node: ast.AST, local: str, attr: str | None, taken: str | None) -> None:
        """``local`` (or ``local.attr`` for a module of the unit) may be a kernel object of another file of the
        unit: used as a value (``taken`` None) or with the attribute ``taken``; refused if it is
        (:func:`_check_object_attrs`)."""
        if taken is not None and (taken in KERNEL_OBJECT_ATTRS or _is_dunder(taken)):
            return
        what = ".".join(filter(None, (local, attr, taken)))
        found = Finding(self.shown, getattr(node, "lineno", 0), what if taken else f"{what} (as a value)",
                        KERNEL_OBJECT_ATTR if taken else KERNEL_AS_VALUE)
        self.kernel_refs.append(((local, attr), found, self.scope.findings,
                                 self.at_import.findings if self.depth == 0 else None))

    def _on_module(self, value: ast.AST) -> bool:
        """Whether ``value`` stands for an allowed module or an imported module (whose attributes the module rules
        read: ALLOWED_MODULES, MODULE_API, refused_reach), not for an object."""
        if isinstance(value, ast.Name) and value.id in self.imports and value.id not in self.local_targets:
            module, name = self.imports[value.id]
            if name is None or module not in ALLOWED_MODULES | ALLOWED_FROM:
                return True  # import torch / import os, from grader.instrument import x: refused as an import
        head = self.full(value)
        return head is not None and (head in ALLOWED_MODULES or head in ALLOWED_FROM)

    def ref(self, name: str) -> None:
        self.scope.refs.add(name)

    def called_at_import(self, func: ast.AST) -> None:
        """``func`` runs when the module is imported (a call, a decorator, a base class at depth 0)."""
        if self.depth:
            return
        if isinstance(func, ast.Name):
            self.at_import.refs.add(func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            self.at_import.refs.add(f"{func.value.id}.{func.attr}")

    def _library_aliases(self, tree: ast.Module) -> dict[str, str]:
        """Names bound exactly once in the whole file (no parameter, loop, other assignment or import of that name
        anywhere in it), by ``name = <a dotted name through the imports>``: the name stands for that spelling."""
        bound: dict[str, int] = {}  # every binding of each name anywhere in the file, parameters and globals too
        pairs: list[tuple[str, ast.AST]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.arg):
                names = [node.arg]
            elif isinstance(node, ast.Global | ast.Nonlocal):
                names = list(node.names)
            else:
                names = _names_bound_by(node)
            for name in names:
                bound[name] = bound.get(name, 0) + 1
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                pairs.append((node.targets[0].id, node.value))
            elif isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
                pairs.append((node.target.id, node.value))
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):  # def f(o=torch.nn.Module)
                positional = [*node.args.posonlyargs, *node.args.args]
                pairs += [(a.arg, d) for a, d in zip(positional[len(positional) - len(node.args.defaults):],
                                                     node.args.defaults, strict=True)]
                pairs += [(a.arg, d) for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True)
                          if d is not None]
        out: dict[str, str] = {}
        for name, value in pairs:
            if bound.get(name) == 1 and name not in self.imports and name not in self.modules \
                    and (full := self.full(value)) is not None:
                out[name] = full
        return out

    def full(self, node: ast.AST) -> str | None:
        """The dotted name ``node`` stands for through this file's imports (``tl.load`` -> triton.language.load)."""
        if isinstance(node, ast.Name):
            if node.id not in self.imports:
                return self.aliases.get(node.id)
            module, name = self.imports[node.id]
            return module if name is None else f"{module.strip('.')}.{name}"
        if isinstance(node, ast.Attribute):
            head = self.full(node.value)
            return None if head is None else f"{head}.{node.attr}"
        return None

    def _is_jit(self, node: ast.AST) -> bool:
        target = node.func if isinstance(node, ast.Call) else node
        return self.full(target) in TRITON_JIT

    def _is_cuda_jit(self, node: ast.AST) -> bool:
        target = node.func if isinstance(node, ast.Call) else node
        return self.full(target) in NUMBA_CUDA_JIT

    def find_jit(self, tree: ast.Module) -> None:
        """Which functions are kernels: decorated with triton.jit (also under autotune), or ``k = triton.jit(f)``."""
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                for d in node.decorator_list:
                    if self._is_jit(d):
                        self.jit_names.add(node.name)
                        self.jit_uses.add(id(d.func if isinstance(d, ast.Call) else d))
                    elif self._is_cuda_jit(d):
                        self.cuda_names.add(node.name)
                        self.jit_names.add(node.name)
                        self.jit_uses.add(id(d.func if isinstance(d, ast.Call) else d))
            if isinstance(node, ast.Call) and self._is_jit(node.func) and node.args:
                self.jit_uses.add(id(node.func))
                self.jit_names.update(a.id for a in node.args if isinstance(a, ast.Name))
            if isinstance(node, ast.Call) and self._is_cuda_jit(node.func):
                self.jit_uses.add(id(node.func))
                named = {a.id for a in node.args if isinstance(a, ast.Name)}
                self.cuda_names |= named
                self.jit_names |= named
        defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        self.top_defs = {s.name for s in tree.body if isinstance(s, defs)}
        self.kernel_objects = set(self.jit_names)
        pairs: list[tuple[ast.AST, ast.AST]] = []  # (target, value) of every assignment, tuples paired element-wise
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    todo = [(t, node.value)]
                    while todo:
                        target, value = todo.pop()
                        if isinstance(value, ast.IfExp):  # k = a if c else b, (k, n) = (a, 1) if c else (b, 2)
                            todo += [(target, value.body), (target, value.orelse)]
                        elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) \
                                and len(target.elts) == len(value.elts):
                            todo += zip(target.elts, value.elts, strict=True)
                        else:
                            pairs.append((target, value))
        grew = True
        while grew:  # k = triton.autotune(...)(kern); kernel = a if wide else b: aliases are kernel objects too
            grew = False
            for target, value in pairs:
                kernels = [value] if isinstance(value, ast.Name) and value.id in self.kernel_objects else []
                if isinstance(target, ast.Name) and target.id not in self.kernel_objects \
                        and (self._wraps_kernel(value) or kernels):
                    self.kernel_objects.add(target.id)
                    grew = True
                self.kernel_uses |= {id(v) for v in kernels}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):  # k[grid](...), helpers.k[grid]()
                self.kernel_uses.add(id(node.func.value))
            elif isinstance(node, ast.Attribute):  # k.best_config (the kernel-object rule reads the attribute)
                self.kernel_uses.add(id(node.value))
            elif isinstance(node, ast.Call) and self._wraps_kernel(node):  # triton.autotune(...)(k)
                self.kernel_uses |= {id(a) for a in node.args}

    def _wraps_kernel(self, node: ast.AST) -> bool:
        """``triton.autotune(...)(kernel)`` / ``triton.heuristics(...)(kernel)``, or ``triton.jit(f)`` (which makes
        the kernel: its body is audited as a kernel's)."""
        if isinstance(node, ast.Call) and self._is_jit(node.func) and node.args:
            return True
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Call) \
            and self.full(node.func.func) in TRITON_WRAPPERS
    def check_jit_body(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """A kernel body reaches only tl.*, jit functions (here or imported from the unit) and JIT_BUILTINS."""
        nodes = [node for stmt in fn.body for node in ast.walk(stmt)]
        # helpers.kern(...): the module name is checked with the call, as a whole
        callees = {id(n.func.value) for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
        for node in nodes:
            if isinstance(node, NOT_KERNEL_CODE):
                self.finding(node, f"{type(node).__name__.lower()} in kernel {fn.name}", HOST_IN_KERNEL)
            elif isinstance(node, ast.Call):
                self._check_kernel_call(fn.name, node)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in callees:
                self._check_kernel_name(fn.name, node)
            elif isinstance(node, ast.Attribute) and node.attr in ("data", "handle"):
                self.finding(node, _dotted(node), "the interpreter's backing array of a tile: compute with tl.*")

    def _check_kernel_call(self, kernel: str, node: ast.Call) -> None:
        func = node.func
        full = self.full(func) or ""
        if full.startswith("triton.language."):
            return
        if isinstance(func, ast.Name):
            if func.id in self.jit_names or (func.id in JIT_BUILTINS and func.id not in self.imports):
                return
            if func.id in self.imports:  # from helpers import kern: fine if kern is a jit function there
                self.scope.jit_imports.append((func.id, None, self._host(kernel, node)))
                return
        elif isinstance(func, ast.Attribute):
            root = _root_name(func)
            if root in self.imports and self.imports[root][1] is None and isinstance(func.value, ast.Name) \
                    and not full.startswith("triton"):  # import helpers; helpers.kern(...)
                self.scope.jit_imports.append((root, func.attr, self._host(kernel, node)))
                return
            named = self.full(func.value) is not None or (isinstance(func.value, ast.Name) and root in self.top_defs)
            if func.attr in TILE_METHODS and not named:
                return  # a method of a tile (x.to(tl.float32)): the launch refuses host objects as arguments
        self.finding(node, f"{_dotted(func)}(...) in kernel {kernel}", HOST_IN_KERNEL)

    def _host(self, kernel: str, node: ast.Call) -> Finding:
        return Finding(self.shown, node.lineno, f"{_dotted(node.func)}(...) in kernel {kernel}", HOST_IN_KERNEL)

    def _check_kernel_name(self, kernel: str, node: ast.Name) -> None:
        """A host function or module named in a kernel body (passed to tl.reduce, aliased): refused."""
        if node.id in self.jit_names or id(node) in self.called:
            return
        full = self.full(node)
        if (full is not None and not full.startswith("triton")) or node.id in self.top_defs:
            self.finding(node, f"{node.id} in kernel {kernel}", HOST_IN_KERNEL)

    def check_cuda_body(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """A @cuda.jit body (run as Python threads by the simulator) reaches only numba.cuda, math, numba's types,
        other @cuda.jit functions (here or imported from the unit), JIT_BUILTINS, elements and an array's shape:
        an array's methods (``x.sum()``, ``x.copy_to_host()``) or NumPy on a whole array would read it untraced."""
        nodes = [node for stmt in fn.body for node in ast.walk(stmt)]
        callees = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
        callees |= {id(n.value) for n in nodes if isinstance(n, ast.Attribute)}  # np in np.exp: said with the call
        for node in nodes:
            if isinstance(node, NOT_KERNEL_CODE):
                self.finding(node, f"{type(node).__name__.lower()} in kernel {fn.name}", HOST_IN_CUDA_KERNEL)
            elif isinstance(node, ast.Call):
                self._check_cuda_call(fn.name, node)
            elif isinstance(node, ast.Attribute) and id(node) not in callees and self.full(node) is None \
                    and node.attr not in CUDA_KERNEL_ATTRS:
                self.finding(node, f"{_dotted(node)} in kernel {fn.name}", HOST_IN_CUDA_KERNEL)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in callees:
                full = self.full(node)
                if (full is not None and not self._cuda_ok(full)) or (node.id in self.top_defs
                                                                       and node.id not in self.cuda_names):
                    self.finding(node, f"{node.id} in kernel {fn.name}", HOST_IN_CUDA_KERNEL)

    @staticmethod
    def _cuda_ok(full: str) -> bool:
        return full.split(".")[0] in ("math", "numba") or full == "numba" or (
            full.startswith("numpy.") and full.split(".")[1] in NUMBA_TYPES)

    def _check_cuda_call(self, kernel: str, node: ast.Call) -> None:
        func = node.func
        full = self.full(func)
        if full is not None and self._cuda_ok(full) and full not in NUMBA_CUDA_JIT:
            return
        if isinstance(func, ast.Name):
            if func.id in self.cuda_names or (func.id in JIT_BUILTINS and func.id not in self.imports
                                              and func.id != "print"):
                return
            if func.id in self.imports and full is not None and full.split(".")[0] not in LIBRARY_ROOTS:
                self.scope.jit_imports.append((func.id, None, Finding(
                    self.shown, node.lineno, f"{_dotted(func)}(...) in kernel {kernel}", HOST_IN_CUDA_KERNEL)))
                return
        self.finding(node, f"{_dotted(func)}(...) in kernel {kernel}", HOST_IN_CUDA_KERNEL)

    # imports
    def _library_import(self, node: ast.Import | ast.ImportFrom, module: str) -> bool | None:
        """True for an allowed library module, False for a refused one (a finding), None for what may be a file of
        the unit."""
        if module.startswith("."):
            return None
        parts = module.split(".")
        if isinstance(node, ast.ImportFrom) and module in ALLOWED_FROM:
            return True
        if parts[0] in DENIED_MODULES:
            self.finding(node, f"import {module}", NOT_NEEDED)
        elif any(_is_private(p) for p in parts[1:]) or "overrides" in parts or "interpreter" in parts:
            self.finding(node, f"import {module}", MACHINERY)
        elif module in ALLOWED_MODULES and parts[0] != "grader":
            return True
        elif parts[0] in LIBRARY_ROOTS:
            self.finding(node, f"import {module}", NOT_ALLOWED_IMPORT, allowed=ALLOWED_TEXT)
        else:
            return None
        return False

    def _unit_import(self, node: ast.Import | ast.ImportFrom, module: str, name: str | None, local: str) -> None:
        """An import that is no library: a file of the unit (read too), or refused."""
        top = module.split(".")[0]
        found = self.resolve(module, name) if self.resolve else None
        if top and installed(top):  # an installed module (os, pathlib...), or a file named like one
            if found is None:
                self.finding(node, f"import {module}", NOT_ALLOWED_IMPORT, allowed=ALLOWED_TEXT)
            else:
                self.finding(node, f"import {module}", SHADOWS_MODULE, module=top)
            return
        if found is None:
            self.finding(node, f"import {module}", NOT_ALLOWED_IMPORT, allowed=ALLOWED_TEXT)
            return
        keys, deep = found
        self.targets.update(keys)
        if deep:  # all their findings reach the scope importing them (the whole file at module level)
            self.scope.deep.update(keys)
            if self.depth == 0:
                self.deep.update(keys)
            return
        self.flat.update(keys)
        if name is None or keys[-1].split(".")[-1] == name:  # import helpers / from . import helpers
            self.local_targets[local] = (keys[-1], None)
        else:  # from helpers import f
            self.local_targets[local] = (keys[-1], name)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:  # import a.b as c: c is a.b
                local, module = alias.asname, alias.name
            else:  # import a.b: a is a
                local = module = alias.name.split(".")[0]
            if self._library_import(node, alias.name) is None:
                self._unit_import(node, alias.name, None, local)
            self.modules.add(local)
            self.imports[local] = (module, None)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = "." * node.level + (node.module or "")
        library = self._library_import(node, module)
        for alias in node.names:
            if alias.name == "*":
                self.finding(node, f"from {module} import *", "hides what the module uses; import names")
                continue
            if _is_private(alias.name) or alias.name in DENIED_NAMES or alias.name in DENIED_ATTRS:
                self.finding(node, f"from {module} import {alias.name}", MACHINERY)
            elif library and (refused := refused_reach(f"{module}.{alias.name}")):
                self.finding(node, f"from {module} import {alias.name}", NOT_ALLOWED_REACH, allowed=refused[1])
            local = alias.asname or alias.name
            if library is None:
                self._unit_import(node, module, alias.name, local)
            self.imports[local] = (module, alias.name)
            self.modules.add(local)  # may be a module (from triton import language): patching it is refused

    # scopes: a builtin is a name no enclosing scope binds
    def _is_local(self, name: str) -> bool:
        for i, (names, is_class) in enumerate(reversed(self.scopes)):
            if (not is_class or i == 0) and name in names:
                return True
        return name in self.module_names

    def _in_scope(self, names: set[str], body: list[ast.AST], is_class: bool = False) -> None:
        self.scopes.append((names, is_class))
        try:
            for stmt in body:
                self.visit(stmt)
        finally:
            self.scopes.pop()

    def _visit_comprehension(self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> None:
        first, *_rest = node.generators
        self.visit(first.iter)  # evaluated in the enclosing scope
        names = {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        parts: list[ast.AST] = []
        for i, g in enumerate(node.generators):
            parts += [g.target, *([g.iter] if i else []), *g.ifs]
        parts += [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        self._in_scope(names, parts)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comprehension

    # names and attributes
    def visit_Name(self, node: ast.Name) -> None:
        if node.id == "__name__" and not isinstance(node.ctx, ast.Load):
            self.finding(node, "__name__ = ...", "renames the module (and would run its __main__ block)")
        elif _is_dunder(node.id) and not isinstance(node.ctx, ast.Load) and node.id not in MODULE_DUNDERS_SET:
            self.finding(node, f"{node.id} = ...", MODULE_DUNDER)
        if node.id in DENIED_NAMES:
            self.finding(node, node.id, DENIED_NAMES[node.id])
        if node.id in REFLECTIVE_BUILTINS and id(node) not in self.called and node.id not in self.imports:
            self.finding(node, f"{node.id} (as a value)", "reflection by a name the audit cannot read: call it")
        if self.full(node) in TRITON_JIT | NUMBA_CUDA_JIT and id(node) not in self.jit_uses:
            self.finding(node, f"{node.id} (as a value)", "makes kernels the audit cannot see: decorate them")
        if isinstance(node.ctx, ast.Load) and node.id in self.local_targets and not self.in_kernel \
                and id(node) not in self.kernel_uses and self.local_targets[node.id][1] is not None:
            self.kernel_ref(node, node.id, None, None)  # from helpers import k; go(k)
        if isinstance(node.ctx, ast.Load) and node.id in self.kernel_objects and not self.in_kernel \
                and id(node) not in self.kernel_uses | self.jit_uses:
            self.finding(node, f"{node.id} (as a value)", KERNEL_AS_VALUE)
        if isinstance(node.ctx, ast.Load):
            self.ref(node.id)
            if (node.id in BUILTIN_NAMES and node.id not in ALLOWED_BUILTINS and not self._is_local(node.id)
                    and (node.id not in DENIED_NAMES or DENIED_NAMES[node.id] in RANKS_ONLY)):
                self.finding(node, node.id, NOT_ALLOWED_BUILTIN)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        root = node.value
        if not self.in_kernel and isinstance(root, ast.Name) and root.id in self.local_targets:
            if self.local_targets[root.id][1] is not None:  # from helpers import k; k.fn
                self.kernel_ref(node, root.id, None, node.attr)
            elif id(node) not in self.kernel_uses:  # import helpers; go(helpers.k)
                self.kernel_ref(node, root.id, node.attr, None)
        elif not self.in_kernel and isinstance(root, ast.Attribute) and isinstance(root.value, ast.Name) \
                and self.local_targets.get(root.value.id, ("", ""))[1] is None:  # import helpers; helpers.k.fn
            self.kernel_ref(node, root.value.id, root.attr, node.attr)
        if node.attr in DENIED_ATTRS:
            self.finding(node, _dotted(node), DENIED_ATTRS[node.attr])
        elif node.attr in DENIED_DUNDER_ATTRS:
            self.finding(node, _dotted(node), "reflection on the grader's or torch's objects")
        elif _is_dunder(node.attr) and node.attr not in ALLOWED_DUNDERS:
            self.finding(node, _dotted(node), NOT_ALLOWED_DUNDER)
        elif _is_private(node.attr) and not (isinstance(root, ast.Name) and root.id in SELF_NAMES):
            self.finding(node, _dotted(node), "a private attribute: use the public API")
        elif (full := self.full(node)) is not None and (refused := refused_reach(full)) and refused[0] == full:
            self.finding(node, _dotted(node), NOT_ALLOWED_REACH, allowed=refused[1])
        if self.full(node) in TRITON_JIT | NUMBA_CUDA_JIT and id(node) not in self.jit_uses:
            self.finding(node, f"{_dotted(node)} (as a value)", "makes kernels the audit cannot see: decorate them")
        if self.full(node) in LOADERS and id(node) not in self.called:
            self.finding(node, f"{_dotted(node)} (as a value)", CODE_CARRYING)
        if isinstance(root, ast.Name) and root.id in self.kernel_objects and not _is_dunder(node.attr) \
                and node.attr not in KERNEL_OBJECT_ATTRS:
            self.finding(node, _dotted(node), KERNEL_OBJECT_ATTR)
        elif not self._on_module(root):
            self.object_attr(node, node.attr, _dotted(node), on_library=self._library_spelled(root))
        if isinstance(root, ast.Name):
            self.ref(f"{root.id}.{node.attr}")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.called_at_import(node.func)
        self.called.add(id(node.func))
        self._check_loader(node)
        if self.full(node.func) in NUMBA_CUDA_JIT and any(
                not isinstance(a, ast.Name) for a in [*node.args, *(k.value for k in node.keywords
                                                                    if k.arg not in ("device", "debug"))]):
            self.finding(node, f"{_dotted(node.func)}(<signature>)", CUDA_SIGNATURE)
        if isinstance(node.func, ast.Name) and node.func.id == "type" and len(node.args) == 3:
            self.finding(node, "type(name, bases, namespace)", "builds a class at run time: define it with `class`")
        if isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) >= 2:
            name = node.args[1]
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                self.finding(node, "getattr(..., <computed name>)", "attribute access by computed name")
            elif _is_private(name.value) or name.value in DENIED_DUNDER_ATTRS or name.value in DENIED_ATTRS:
                why = _ranks_only_or(name.value, "a private attribute by name")
                self.finding(node, f"getattr(..., {name.value!r})", why)
            elif _is_dunder(name.value) and name.value not in ALLOWED_DUNDERS:
                self.finding(node, f"getattr(..., {name.value!r})", NOT_ALLOWED_DUNDER)
            elif (full := self.full(node.args[0])) and (refused := refused_reach(f"{full}.{name.value}")):
                self.finding(node, f"getattr(..., {name.value!r})", NOT_ALLOWED_REACH, allowed=refused[1])
            elif not self._on_module(node.args[0]):
                self.object_attr(node, name.value, f"getattr(..., {name.value!r})",
                                 on_library=self._library_spelled(node.args[0]))
                base = node.args[0]
                if isinstance(base, ast.Name) and self.local_targets.get(base.id, ("", ""))[1] is None \
                        and not self.in_kernel:  # getattr(helpers, "k"): a kernel of the unit as a value
                    self.kernel_ref(node, base.id, name.value, None)
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant):  # a docstring may talk about /proc
            return
        self.generic_visit(node)

    def _check_loader(self, node: ast.Call) -> None:
        """torch.load only with weights_only=True; numpy.load never with allow_pickle (both spelled literally);
        and either only from bytes in memory (``io.BytesIO(...)``): a file is a channel between processes."""
        full = self.full(node.func)
        if full not in LOADERS:
            return
        kw = {k.arg: k.value for k in node.keywords}
        if None in kw:  # **options: the audit cannot read them
            self.finding(node, f"{_dotted(node.func)}(**...)", CODE_CARRYING + ": spell the options out")
        elif full.startswith("torch") and not _is_true(kw.get("weights_only")):
            self.finding(node, f"{_dotted(node.func)}(...) without weights_only=True", CODE_CARRYING)
        elif full.startswith("numpy") and "allow_pickle" in kw and not _is_false(kw["allow_pickle"]):
            self.finding(node, f"{_dotted(node.func)}(..., allow_pickle=...)", CODE_CARRYING)
        elif not (node.args and isinstance(node.args[0], ast.Call) and self.full(node.args[0].func) == "io.BytesIO"):
            self.finding(node, f"{_dotted(node.func)}(...) of a file", CHANNEL)

    def visit_Constant(self, node: ast.Constant) -> None:
        if not isinstance(node.value, str):
            return
        text = node.value
        if "/proc/" in text:
            self.finding(node, repr(text)[:40], "process internals")
        elif text in DENIED_DUNDER_ATTRS or (_is_dunder(text) and text not in ALLOWED_DUNDERS):  # getattr, type()
            self.finding(node, repr(text), "reflection or raw memory by name")
        elif text.isidentifier() and (_is_private(text) or text in DENIED_NAMES or text in DENIED_ATTRS):
            why = _ranks_only_or(text, "names a refused attribute (it could be reached by that name)")
            self.finding(node, repr(text), why)
        elif _FORMAT_ATTR.search(text):
            self.finding(node, repr(text)[:40], "a format string that reaches a private attribute")
        else:  # "{0.handle}".format(t): attributes read by a format string are held to the same allowlist
            for field_name in re.findall(r"\{([^{}!:]*)", text):
                for attr in re.findall(r"\.\s*(\w+)", field_name):
                    self.object_attr(node, attr, repr(text)[:40])

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        for attr in node.kwd_attrs:  # case object(_C=c): attribute access spelled as a pattern
            if _is_private(attr) or attr in DENIED_ATTRS or attr in DENIED_DUNDER_ATTRS:
                why = _ranks_only_or(attr, "reaches a refused attribute by a pattern")
                self.finding(node, f"case ...({attr}=...)", why)
            else:
                self.object_attr(node, attr, f"case ...({attr}=...)")
        self.generic_visit(node)

    def _check_target(self, node: ast.AST) -> None:
        if isinstance(node, ast.Tuple | ast.List):
            for elt in node.elts:
                self._check_target(elt)
        elif isinstance(node, ast.Subscript) and _dotted(node.value) == "os.environ":
            return  # os.environ["TRITON_INTERPRET"] = "1", as Triton's tutorials do: no grader reads it there
        elif isinstance(node, ast.Attribute | ast.Subscript):
            root = _root_name(node)
            if root in self.modules or root in self.aliases:
                self.finding(node, _dotted(node), "patches a module (monkeypatching)")
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Call):
                self.finding(node, f"{_dotted(node.value.func)}(...).{node.attr}", CALL_RESULT_STORE)

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            self._check_target(t)
        if isinstance(node.value, ast.Name) and node.value.id in self.modules:  # t = torch
            self.modules.update(t.id for t in node.targets if isinstance(t, ast.Name))
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_target(node.target)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for t in node.targets:
            self._check_target(t)
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.name in DENIED_METHODS:  # runs when called (by torch, pickle, copy), not where it is defined
            self.depth += 1
            self.finding(node, f"def {node.name}", DENIED_METHODS[node.name])
            self.depth -= 1
        for decorator in node.decorator_list:  # decorators and defaults run at import
            self.called_at_import(decorator)
            self.visit(decorator)
        self.visit(node.args)
        self.depth += 1
        declared = {n for stmt in ast.walk(node) if isinstance(stmt, ast.Global | ast.Nonlocal) for n in stmt.names}
        kernel = node.name in self.jit_names
        self.in_kernel += kernel
        self._in_scope((_params(node.args) | _bound_names(node.body)) - declared, node.body)
        self.in_kernel -= kernel
        if node.name in self.cuda_names:  # inside the body's depth: it runs when the kernel launches
            self.check_cuda_body(node)
        elif node.name in self.jit_names:
            self.check_jit_body(node)
        self.depth -= 1

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in [*node.bases, *node.decorator_list]:
            self.called_at_import(base)
        for part in [*node.bases, *node.keywords, *node.decorator_list]:
            self.visit(part)
        self._in_scope(_bound_names(node.body), node.body, is_class=True)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.args)
        self.depth += 1
        self._in_scope(_params(node.args), [node.body])
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def run(self, tree: ast.Module) -> dict[str, _Scope]:
        """One scope per top-level name; what runs at import is gathered in ``self.at_import``."""
        defs: dict[str, _Scope] = {}
        self.module_names = _bound_names(tree.body)
        for stmt in tree.body:  # imports first: module aliases are known before any use
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                self.visit(stmt)
        for node in ast.walk(tree):  # imports inside functions too: `tl` must resolve in every kernel
            if isinstance(node, ast.Import | ast.ImportFrom) and node not in tree.body:
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    if isinstance(node, ast.ImportFrom):
                        self.imports.setdefault(local, ("." * node.level + (node.module or ""), alias.name))
                    else:
                        self.imports.setdefault(local, (alias.name if alias.asname else local, None))
        self.aliases = self._library_aliases(tree)
        self.find_jit(tree)
        for stmt in tree.body:
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                continue
            if _is_main_block(stmt):  # never runs when graded: the module is not __main__ (renaming is a finding)
                for other in stmt.orelse:
                    self.scope = _Scope()
                    self.visit(other)
                continue
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                self.scope = defs.setdefault(stmt.name, _Scope(defines={stmt.name}))
                self.visit(stmt)
                continue
            self.scope = _Scope()
            self.visit(stmt)
            for node in ast.walk(stmt):  # f = wrap(g): f refers to what g refers to
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    defs.setdefault(node.id, _Scope(defines={node.id})).refs |= self.scope.refs
        return defs


@dataclass
class _File:
    key: str  # its dotted name in the unit: "softmax", "helpers.sub" for helpers/sub.py, "helpers" for helpers/__init__
    module_findings: list[Finding]  # found in code that runs at import: they reach every function
    import_refs: set[str]  # what that code calls: a tainted one reaches every function too
    defs: dict[str, _Scope]
    imports: dict[str, tuple[str, str | None]]
    jit_names: set[str]
    targets: set[str]  # the unit's files it imports (anywhere: at module level or in a function)
    deep: set[str]  # of them, those of a package or sub-folder imported at module level: all their findings reach it
    flat: set[str]  # of them, the files beside it: their import-time findings reach it
    local_targets: dict[str, tuple[str, str | None]]
    object_attrs: list[tuple[str, Finding, list[Finding], list[Finding] | None, bool]] = field(default_factory=list)
    own: set[str] = field(default_factory=set)  # the attribute names the file defines
    kernel_objects: set[str] = field(default_factory=set)
    kernel_refs: list[tuple[tuple[str, str | None], Finding, list[Finding], list[Finding] | None]] = field(
        default_factory=list)


def _module_file(unit_dir: Path, key: str) -> Path | None:
    """The file of the unit's module ``key`` (``a.b``: a/b.py, or a/b/__init__.py for a package)."""
    parts = key.split(".")
    if not key or not all(p.isidentifier() for p in parts):
        return None
    file = unit_dir.joinpath(*parts[:-1], parts[-1] + ".py")
    if file.is_file():
        return file
    init = unit_dir.joinpath(*parts, "__init__.py")
    return init if init.is_file() else None


def _resolver(unit_dir: Path, importer: str, is_package: bool) -> Resolver:
    """How the unit's file ``importer`` resolves an import to the unit's files: (their keys, the packages on the
    way included; whether any is in a package or sub-folder), or None when it names no file of the unit."""

    def resolve(module: str, name: str | None) -> tuple[list[str], bool] | None:
        rest = module.lstrip(".")
        level = len(module) - len(rest)
        base = importer.split(".") if is_package else importer.split(".")[:-1]
        if level:
            if level - 1 > len(base):
                return None
            base = base[: len(base) - (level - 1)]
        else:
            base = []
        parts = base + [p for p in rest.split(".") if p]
        keys = [k for i in range(1, len(parts) + 1) if _module_file(unit_dir, k := ".".join(parts[:i]))]
        whole = ".".join(parts)
        if name is not None and _module_file(unit_dir, f"{whole}.{name}" if whole else name):
            keys.append(f"{whole}.{name}" if whole else name)  # from package import module
        elif whole not in keys:
            return None
        deep = any("." in k or _module_file(unit_dir, k).name == "__init__.py" for k in keys)  # type: ignore[union-attr]
        return keys, deep

    return resolve


def _parse(path: Path, shown: str | None = None, unit_dir: Path | None = None) -> _File | None:
    unit_dir = unit_dir or path.parent
    rel = path.relative_to(unit_dir).with_suffix("").parts
    is_package = rel[-1] == "__init__"
    key = ".".join(rel[:-1] if is_package else rel)
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"), filename=str(path))
    except (SyntaxError, ValueError, OSError):
        return None  # loading it will report the syntax error; nothing of it runs
    audit = _FileAudit(shown or display_path(path), _resolver(unit_dir, key, is_package))
    defs = audit.run(tree)
    return _File(key, audit.at_import.findings, audit.at_import.refs, defs, audit.imports, audit.jit_names,
                 audit.targets - {key}, audit.deep - {key}, audit.flat - {key}, audit.local_targets,
                 audit.object_attrs, _defined_attr_names(tree.body), audit.kernel_objects, audit.kernel_refs)


def _check_object_attrs(files: dict[str, _File]) -> None:
    """Every attribute of a value that is no allowed module, in every file, against the allowlist of object
    attributes and the names the unit's files (these: the graded module and what it imports) define."""
    own = frozenset(n for f in files.values() for n in f.own)
    for f in files.values():
        for name, found, scope_findings, at_import, on_library in f.object_attrs:
            why = attr_refusal(name, own, on_library=on_library)
            if why is None:
                continue
            found = Finding(found.path, found.line, found.what, why)
            scope_findings.append(found)
            if at_import is not None:
                at_import.append(found)
        f.object_attrs = []
        for (local, attr), found, scope_findings, at_import in f.kernel_refs:  # a kernel of another file of the unit
            other, name = f.local_targets.get(local, (None, None))
            kernel = name if name is not None else attr
            if other in files and kernel in files[other].kernel_objects:
                scope_findings.append(found)
                if at_import is not None:
                    at_import.append(found)
        f.kernel_refs = []


def _resolve_jit_imports(files: dict[str, _File]) -> None:
    """A kernel calling a function of another file: a finding unless that is a jit function of the unit."""
    for f in files.values():
        for scope in f.defs.values():
            for local, attr, found in scope.jit_imports:
                other, name = f.local_targets.get(local, (None, None))
                called = attr if name is None else name
                if other is None or other not in files or called not in files[other].jit_names:
                    scope.findings.append(found)
            scope.jit_imports.clear()


def _everything(tainted: dict[str, list[Finding]]) -> list[Finding]:
    return list(dict.fromkeys(f for found in tainted.values() for f in found))


def _taint(files: dict[str, _File]) -> dict[str, dict[str, list[Finding]]]:
    """file key -> name -> findings reaching it ("*" for the whole file)."""
    _resolve_jit_imports(files)
    tainted: dict[str, dict[str, list[Finding]]] = {key: {} for key in files}
    for key, f in files.items():
        if f.module_findings:
            tainted[key]["*"] = list(f.module_findings)
        for name, scope in f.defs.items():
            if scope.findings:
                tainted[key][name] = list(scope.findings)
    changed = True
    while changed:
        changed = False
        for key, f in files.items():
            mine = tainted[key]

            def reached(ref: str, f: _File = f, mine: dict[str, list[Finding]] = mine) -> list[Finding]:
                head, _dot, attr = ref.partition(".")
                if head in f.defs:
                    return mine.get(head, [])
                other, name = f.local_targets.get(head, (None, None))
                if other is None or other not in tainted:
                    return []
                theirs = tainted[other]
                return theirs.get("*") or theirs.get(attr if name is None else name, [])

            # what runs when the file is imported: its own findings, the import-time findings of the files it imports
            # (all findings of a package's or sub-folder's), and the tainted functions its import-time code calls
            star = list(mine.get("*", []))
            for other in sorted(f.flat & tainted.keys()):
                star += tainted[other].get("*", [])
            for other in sorted(f.deep & tainted.keys()):
                star += _everything(tainted[other])
            for ref in sorted(f.import_refs):
                star += reached(ref)
            star = list(dict.fromkeys(star))
            if len(star) > len(mine.get("*", [])):
                mine["*"] = star
                changed = True
            for name, scope in f.defs.items():
                deep = list(dict.fromkeys(x for other in sorted(scope.deep & tainted.keys())
                                          for x in _everything(tainted[other])))
                if deep and not set(deep) <= set(mine.get(name, [])):
                    mine[name] = list(dict.fromkeys([*mine.get(name, []), *deep]))
                    changed = True
                if name in mine:
                    continue
                for ref in sorted(scope.refs - scope.defines):
                    found = reached(ref)
                    if found:
                        mine[name] = found
                        changed = True
                        break
    return tainted


def _unit_files(unit_dir: Path, module: str) -> dict[str, _File]:
    """The graded module's file and every file of the unit it imports, sub-folders included, transitively."""
    files: dict[str, _File] = {}
    todo = [module]
    while todo:
        key = todo.pop()
        if key in files or (path := _module_file(unit_dir, key)) is None:
            continue
        parsed = _parse(path, f"{unit_dir.name}/{path.relative_to(unit_dir).as_posix()}", unit_dir)
        if parsed is not None:
            files[key] = parsed
            todo.extend(parsed.targets)
    _check_object_attrs(files)
    return files


_CACHE: dict[tuple[object, ...], dict[str, dict[str, list[Finding]]]] = {}


def findings_for(unit_dir: Path, module: str, name: str, *, ranks: bool = True) -> list[Finding]:
    """What in ``unit_dir`` could switch off the grader's checks for ``module.name`` (empty: nothing): the graded
    module's file and every file of the unit it imports (sub-folders too); without what is refused for exercises
    run on ranks only (RANKS_ONLY: channels, groups of one's own) where ``ranks`` is False (a kernel exercise)."""
    paths = sorted(unit_dir.rglob("*.py")) if unit_dir.is_dir() else []
    key: list[object] = [str(unit_dir), module]
    for p in paths:
        with contextlib.suppress(OSError):
            st = p.stat()
            key.append((str(p), st.st_mtime_ns, st.st_size))
    tkey = tuple(key)
    if tkey not in _CACHE:
        _CACHE[tkey] = _taint(_unit_files(unit_dir, module))
    tainted = _CACHE[tkey].get(module, {})
    found = dict.fromkeys((tainted.get("*") or []) + tainted.get(name, []))  # in order, once each
    return [f for f in found if ranks or f.why not in RANKS_ONLY]


def check(unit_dir: Path, module: str, name: str, *, kernel: bool = True) -> None:
    """Raise TamperingRefused when a finding reaches the exercise ``module.name`` (a kernel, or another exercise
    whose checks run beside the learner's code: ``kernel=False``)."""
    found = findings_for(unit_dir, module, name, ranks=not kernel)
    if found:
        shown = "; ".join(f.describe() for f in found[:3])
        if len(found) > 3:
            shown += _("; and {n} more").format(n=len(found) - 3)
        if kernel:
            text = _("{name} reaches code a kernel exercise may not use (it could switch off the grader's checks): "
                     "{found}. Remove it: a kernel needs only triton, torch allocation and arithmetic, and what "
                     "the audit allows ({allowed})")
        else:
            text = _("{name} reaches code this exercise may not use (it could switch off the grader's checks): "
                     "{found}. Remove it: it needs no reflection, process internals or the grader's machinery, "
                     "only what the audit allows ({allowed})")
        raise TamperingRefused(text.format(name=name, found=shown, allowed=ALLOWED_TEXT))


def write_object_attrs() -> None:
    """Regenerate OBJECT_ATTRS_FILE from the installed libraries (review the diff: what an upgrade adds is allowed)."""
    OBJECT_ATTRS_FILE.write_text(generate_object_attrs(), encoding="utf-8")


if __name__ == "__main__":  # python -m grader.judge.audit --write-object-attrs
    if sys.argv[1:] == ["--write-object-attrs"]:
        write_object_attrs()
    else:
        sys.exit("usage: python -m grader.judge.audit --write-object-attrs")
