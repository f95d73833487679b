"""Static tamper audit of a submission, done by the judge before any of the submission's code runs.

The kernel guard (:mod:`grader.instrument.guard`) and the traffic counters (:mod:`grader.instrument.traffic`) run in the
process that runs the learner's code, so Python in the same process could switch them off: pop the
torch-function mode stack, patch the interpreter's hooks, rewrite the counters. Nothing in-process
can stop that. What the judge *can* do, out of the submission's reach, is read its source first.

A kernel module needs Triton, torch allocation and arithmetic; it has no use for reflection or for
the grader's machinery. :func:`findings_for` parses the target's files (``ast``, nothing executed)
and reports, with file and line, every use of

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
import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from grader.core.target import display_path

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
_FORMAT_ATTR = re.compile(r"\{[^{}]*(\.\s*_|\[\s*['\"]?_)")  # "{0._C}".format(torch): attribute access by string
SELF_NAMES = frozenset({"self", "cls"})
NOT_NEEDED = "reflection, process internals or the grader: not needed by a graded kernel or rank"
MACHINERY = "the machinery the grader's kernel checks live in"
# ``from grader.constants import GPUS``, ``from grader.validate import check_int``: the course's shared
# tables and input checks, which every unit's provided code uses.
ALLOWED_FROM = frozenset({"grader.constants", "grader.validate"})


class TamperingRefused(AssertionError):
    """An audited exercise reaches code that could switch off the grader's checks."""


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    what: str
    why: str

    def describe(self) -> str:
        return f"{self.path} line {self.line}: `{self.what}` ({self.why})"


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


@dataclass
class _Scope:
    """What one top-level definition (or the module-level code) uses and refers to."""

    findings: list[Finding] = field(default_factory=list)
    refs: set[str] = field(default_factory=set)  # names, and "alias.attr" for module attributes
    defines: set[str] = field(default_factory=set)
    # calls from a jit body to a name imported from another file: fine only if it is a jit function there
    jit_imports: list[tuple[str, str | None, str, Finding]] = field(default_factory=list)


class _FileAudit(ast.NodeVisitor):
    def __init__(self, shown: str) -> None:
        self.shown = shown
        self.modules: set[str] = set()  # local names bound to imported modules
        self.imports: dict[str, tuple[str, str | None]] = {}  # local name -> (module, attribute or None)
        self.scope = _Scope()
        self.depth = 0  # inside how many function bodies: 0 is code that runs when the module is imported
        self.at_import = _Scope()  # what import-time code (module level, decorators, defaults) uses
        self.jit_names: set[str] = set()  # functions of this file made @triton.jit
        self.top_defs: set[str] = set()
        self.jit_uses: set[int] = set()  # ids of the nodes that spell triton.jit as a decorator or a call
        self.called: set[int] = set()  # ids of Name nodes that are the function of a call

    def finding(self, node: ast.AST, what: str, why: str) -> None:
        found = Finding(self.shown, getattr(node, "lineno", 0), what, why)
        self.scope.findings.append(found)
        if self.depth == 0:
            self.at_import.findings.append(found)

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

    def full(self, node: ast.AST) -> str | None:
        """The dotted name ``node`` stands for through this file's imports (``tl.load`` -> triton.language.load)."""
        if isinstance(node, ast.Name):
            if node.id not in self.imports:
                return None
            module, name = self.imports[node.id]
            return module if name is None else f"{module.strip('.')}.{name}"
        if isinstance(node, ast.Attribute):
            head = self.full(node.value)
            return None if head is None else f"{head}.{node.attr}"
        return None

    def _is_jit(self, node: ast.AST) -> bool:
        target = node.func if isinstance(node, ast.Call) else node
        return self.full(target) in TRITON_JIT

    def find_jit(self, tree: ast.Module) -> None:
        """Which functions are kernels: decorated with triton.jit (also under autotune), or ``k = triton.jit(f)``."""
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                for d in node.decorator_list:
                    if self._is_jit(d):
                        self.jit_names.add(node.name)
                        self.jit_uses.add(id(d.func if isinstance(d, ast.Call) else d))
            if isinstance(node, ast.Call) and self._is_jit(node.func) and node.args:
                self.jit_uses.add(id(node.func))
                self.jit_names.update(a.id for a in node.args if isinstance(a, ast.Name))
        defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        self.top_defs = {s.name for s in tree.body if isinstance(s, defs)}

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
                self.scope.jit_imports.append((*self.imports[func.id], func.id, self._host(kernel, node)))
                return
        elif isinstance(func, ast.Attribute):
            root = _root_name(func)
            if root in self.imports and self.imports[root][1] is None and isinstance(func.value, ast.Name) \
                    and not full.startswith("triton"):  # import helpers; helpers.kern(...)
                self.scope.jit_imports.append((self.imports[root][0], func.attr, "", self._host(kernel, node)))
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

    # imports
    def _check_module(self, node: ast.AST, module: str) -> None:
        parts = module.split(".")
        if isinstance(node, ast.ImportFrom) and module in ALLOWED_FROM:
            return
        if parts[0] in DENIED_MODULES:
            self.finding(node, f"import {module}", NOT_NEEDED)
        elif parts[0] in CHANNEL_MODULES:
            self.finding(node, f"import {module}", CHANNEL)
        elif any(_is_private(p) for p in parts[1:]) or "overrides" in parts or "interpreter" in parts:
            self.finding(node, f"import {module}", MACHINERY)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)
            if alias.asname:  # import a.b as c: c is a.b
                local, module = alias.asname, alias.name
            else:  # import a.b: a is a
                local = module = alias.name.split(".")[0]
            self.modules.add(local)
            self.imports[local] = (module, None)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        self._check_module(node, module or ".")
        for alias in node.names:
            if alias.name == "*":
                self.finding(node, f"from {module} import *", "hides what the module uses; import names")
                continue
            if _is_private(alias.name) or alias.name in DENIED_NAMES or alias.name in DENIED_ATTRS:
                self.finding(node, f"from {module} import {alias.name}", MACHINERY)
            local = alias.asname or alias.name
            self.imports[local] = (module, alias.name)
            self.modules.add(local)  # may be a module (from triton import language): patching it is refused

    # names and attributes
    def visit_Name(self, node: ast.Name) -> None:
        if node.id == "__name__" and not isinstance(node.ctx, ast.Load):
            self.finding(node, "__name__ = ...", "renames the module (and would run its __main__ block)")
        if node.id in DENIED_NAMES:
            self.finding(node, node.id, DENIED_NAMES[node.id])
        if node.id in REFLECTIVE_BUILTINS and id(node) not in self.called and node.id not in self.imports:
            self.finding(node, f"{node.id} (as a value)", "reflection by a name the audit cannot read: call it")
        if self.full(node) in TRITON_JIT and id(node) not in self.jit_uses:
            self.finding(node, f"{node.id} (as a value)", "makes kernels the audit cannot see: decorate them")
        if isinstance(node.ctx, ast.Load):
            self.ref(node.id)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        root = node.value
        if node.attr in DENIED_ATTRS:
            self.finding(node, _dotted(node), DENIED_ATTRS[node.attr])
        elif node.attr in DENIED_DUNDER_ATTRS:
            self.finding(node, _dotted(node), "reflection on the grader's or torch's objects")
        elif _is_private(node.attr) and not (isinstance(root, ast.Name) and root.id in SELF_NAMES):
            self.finding(node, _dotted(node), "a private attribute: use the public API")
        if self.full(node) in TRITON_JIT and id(node) not in self.jit_uses:
            self.finding(node, f"{_dotted(node)} (as a value)", "makes kernels the audit cannot see: decorate them")
        if self.full(node) in LOADERS and id(node) not in self.called:
            self.finding(node, f"{_dotted(node)} (as a value)", CODE_CARRYING)
        if isinstance(root, ast.Name):
            self.ref(f"{root.id}.{node.attr}")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.called_at_import(node.func)
        self.called.add(id(node.func))
        self._check_loader(node)
        if isinstance(node.func, ast.Name) and node.func.id == "type" and len(node.args) == 3:
            self.finding(node, "type(name, bases, namespace)", "builds a class at run time: define it with `class`")
        if isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) >= 2:
            name = node.args[1]
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                self.finding(node, "getattr(..., <computed name>)", "attribute access by computed name")
            elif _is_private(name.value) or name.value in DENIED_DUNDER_ATTRS or name.value in DENIED_ATTRS:
                why = _ranks_only_or(name.value, "a private attribute by name")
                self.finding(node, f"getattr(..., {name.value!r})", why)
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
        elif text in DENIED_DUNDER_ATTRS:  # type("P", (), {"__array_interface__": ...}), getattr
            self.finding(node, repr(text), "reflection or raw memory by name")
        elif text.isidentifier() and (_is_private(text) or text in DENIED_NAMES or text in DENIED_ATTRS):
            why = _ranks_only_or(text, "names a refused attribute (it could be reached by that name)")
            self.finding(node, repr(text), why)
        elif _FORMAT_ATTR.search(text):
            self.finding(node, repr(text)[:40], "a format string that reaches a private attribute")

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        for attr in node.kwd_attrs:  # case object(_C=c): attribute access spelled as a pattern
            if _is_private(attr) or attr in DENIED_ATTRS or attr in DENIED_DUNDER_ATTRS:
                why = _ranks_only_or(attr, "reaches a refused attribute by a pattern")
                self.finding(node, f"case ...({attr}=...)", why)
        self.generic_visit(node)

    def _check_target(self, node: ast.AST) -> None:
        if isinstance(node, ast.Tuple | ast.List):
            for elt in node.elts:
                self._check_target(elt)
        elif isinstance(node, ast.Subscript) and _dotted(node.value) == "os.environ":
            return  # os.environ["TRITON_INTERPRET"] = "1", as Triton's tutorials do: no grader reads it there
        elif isinstance(node, ast.Attribute | ast.Subscript):
            root = _root_name(node)
            if root in self.modules:
                self.finding(node, _dotted(node), "patches a module (monkeypatching)")

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
        for stmt in node.body:
            self.visit(stmt)
        if node.name in self.jit_names:  # inside the body's depth: it runs when the kernel launches
            self.check_jit_body(node)
        self.depth -= 1

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in [*node.bases, *node.decorator_list]:
            self.called_at_import(base)
        self.generic_visit(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.args)
        self.depth += 1
        self.visit(node.body)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def run(self, tree: ast.Module) -> dict[str, _Scope]:
        """One scope per top-level name; what runs at import is gathered in ``self.at_import``."""
        defs: dict[str, _Scope] = {}
        for stmt in tree.body:  # imports first: module aliases are known before any use
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                self.visit(stmt)
        for node in ast.walk(tree):  # imports inside functions too: `tl` must resolve in every kernel
            if isinstance(node, ast.Import | ast.ImportFrom) and node not in tree.body:
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    if isinstance(node, ast.ImportFrom):
                        self.imports.setdefault(local, (node.module or "", alias.name))
                    else:
                        self.imports.setdefault(local, (alias.name if alias.asname else local, None))
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
    stem: str
    module_findings: list[Finding]  # found in code that runs at import: they reach every function
    import_refs: set[str]  # what that code calls: a tainted one reaches every function too
    defs: dict[str, _Scope]
    imports: dict[str, tuple[str, str | None]]
    jit_names: set[str]


def _parse(path: Path, shown: str | None = None) -> _File | None:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"), filename=str(path))
    except (SyntaxError, ValueError, OSError):
        return None  # loading it will report the syntax error; nothing of it runs
    audit = _FileAudit(shown or display_path(path))
    defs = audit.run(tree)
    return _File(path.stem, audit.at_import.findings, audit.at_import.refs, defs, audit.imports, audit.jit_names)


def _imported_file(module: str, name: str | None, files: dict[str, _File]) -> tuple[str | None, bool]:
    """The unit's file an import refers to, and whether the local name is that file (not a name in it)."""
    if name is not None and module.strip("."):  # from helpers import f
        stem, is_file = module.strip(".").split(".")[-1], False
    else:  # import helpers / from . import helpers
        stem, is_file = (name or module).strip(".").split(".")[-1], True
    return (stem if stem in files else None), is_file


def _resolve_jit_imports(files: dict[str, _File]) -> None:
    """A kernel calling a function of another file: a finding unless that is a jit function of the unit."""
    for f in files.values():
        for scope in f.defs.values():
            for module, name, _, found in scope.jit_imports:
                other, _ = _imported_file(module, name, files)
                if other is None or name not in files[other].jit_names:
                    scope.findings.append(found)
            scope.jit_imports.clear()


def _taint(files: dict[str, _File]) -> dict[str, dict[str, list[Finding]]]:
    """file stem -> name -> findings reaching it ("*" for the whole file)."""
    _resolve_jit_imports(files)
    tainted: dict[str, dict[str, list[Finding]]] = {stem: {} for stem in files}
    for stem, f in files.items():
        if f.module_findings:
            tainted[stem]["*"] = list(f.module_findings)
        for name, scope in f.defs.items():
            if scope.findings:
                tainted[stem][name] = list(scope.findings)
    changed = True
    while changed:
        changed = False
        for stem, f in files.items():
            mine = tainted[stem]

            def reached(ref: str, f: _File = f, mine: dict[str, list[Finding]] = mine) -> list[Finding]:
                head, _, attr = ref.partition(".")
                if head in f.defs:
                    return mine.get(head, [])
                if head not in f.imports:
                    return []
                other, is_file = _imported_file(*f.imports[head], files)
                if other is None:
                    return []
                theirs = tainted[other]
                return theirs.get("*") or theirs.get(attr if is_file else f.imports[head][1] or "", [])

            if "*" not in mine:
                for module, name in f.imports.values():
                    other, _ = _imported_file(module, name, files)
                    if other is not None and other != stem and "*" in tainted[other]:
                        mine["*"] = tainted[other]["*"]
                        changed = True
                        break
            if "*" not in mine:
                for ref in sorted(f.import_refs):
                    found = reached(ref)
                    if found:  # import-time code runs a tainted function
                        mine["*"] = found
                        changed = True
                        break
            for name, scope in f.defs.items():
                if name in mine:
                    continue
                for ref in sorted(scope.refs - scope.defines):
                    found = reached(ref)
                    if found:
                        mine[name] = found
                        changed = True
                        break
    return tainted


_CACHE: dict[tuple[tuple[str, int, int], ...], dict[str, dict[str, list[Finding]]]] = {}


def findings_for(unit_dir: Path, module: str, name: str, *, ranks: bool = True) -> list[Finding]:
    """What in ``unit_dir`` could switch off the grader's checks for ``module.name`` (empty: nothing); without
    what is refused for exercises run on ranks only (RANKS_ONLY: channels, groups of one's own) where ``ranks`` is
    False (a kernel exercise)."""
    paths = sorted(unit_dir.glob("*.py")) if unit_dir.is_dir() else []
    key = []
    for p in paths:
        with contextlib.suppress(OSError):
            st = p.stat()
            key.append((str(p), st.st_mtime_ns, st.st_size))
    tkey = tuple(key)
    if tkey not in _CACHE:
        files = {f.stem: f for p in paths if (f := _parse(p, f"{unit_dir.name}/{p.name}")) is not None}
        _CACHE[tkey] = _taint(files)
    tainted = _CACHE[tkey].get(module, {})
    found = dict.fromkeys((tainted.get("*") or []) + tainted.get(name, []))  # in order, once each
    return [f for f in found if ranks or f.why not in RANKS_ONLY]


def check(unit_dir: Path, module: str, name: str, *, kernel: bool = True) -> None:
    """Raise TamperingRefused when a finding reaches the exercise ``module.name`` (a kernel, or another exercise
    whose checks run beside the learner's code: ``kernel=False``)."""
    found = findings_for(unit_dir, module, name, ranks=not kernel)
    if found:
        shown = "; ".join(f.describe() for f in found[:3]) + (f"; and {len(found) - 3} more" if len(found) > 3 else "")
        what, needs = (("a kernel exercise", "a kernel needs only triton, torch allocation and arithmetic") if kernel
                       else ("this exercise", "it needs no reflection, process internals or the grader's machinery"))
        raise TamperingRefused(
            f"{name} reaches code {what} may not use (it could switch off the grader's checks): "
            f"{shown}. Remove it: {needs}"
        )
