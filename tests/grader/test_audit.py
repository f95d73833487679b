"""The judge's static tamper audit (grader/judge/audit.py) and the written-by-a-kernel check of the harness."""

from __future__ import annotations

import ast
import functools
import re
import shutil
import textwrap
from pathlib import Path

import pytest
import torch

from grader.authoring import known
from grader.core import target
from grader.core.target import REPO_ROOT
from grader.judge import audit, harness
from grader.judge.audit import TamperingRefused

KERNEL = """
import torch, triton, triton.language as tl

@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
"""


def unit(tmp_path: Path, **files: str) -> Path:
    d = tmp_path / "u"
    d.mkdir(exist_ok=True)
    for stem, source in files.items():
        (d / f"{stem}.py").write_text(textwrap.dedent(source))
    return d


def whats(found: list[audit.Finding]) -> list[str]:
    return [f.what for f in found]


# Every denied construct, as a learner's function ``f`` would use it, and what the finding names.
DENIED = [
    ("import sys\ndef f(x):\n    return sys.modules", "import sys"),
    ("def f(x):\n    import gc\n    return gc.get_objects()", "import gc"),
    ("def f(x):\n    import grader.instrument.guard\n    return x", "import grader.instrument.guard"),
    ("from torch.overrides import _get_current_function_mode_stack\ndef f(x):\n    return x",
     "import torch.overrides"),
    ("import torch\ndef f(x):\n    torch._C._pop_torch_function_stack()\n    return x", "torch._C"),
    ("import torch\ndef f(x):\n    with torch._C.DisableTorchFunction():\n        return x", "DisableTorchFunction"),
    ("import torch\ndef f(x):\n    return torch.overrides.TorchFunctionMode", "torch.overrides"),
    ("from triton.runtime import interpreter\ndef f(x):\n    return x", "import interpreter"),
    ("import triton\ndef f(x):\n    triton.runtime.interpreter.GridExecutor = None", "interpreter"),
    ("import torch\ndef f(x):\n    torch.softmax = lambda *a, **k: a[0]\n    return x", "torch.softmax"),
    ("import torch\ndef f(x):\n    t = torch\n    t.allclose = None\n    return x", "t.allclose"),
    ("import torch\ndef f(x):\n    del torch.testing\n    return x", "torch.testing"),
    ("def f(x):\n    return eval('x')", "eval"),
    ("def f(x):\n    exec('y = 1')\n    return x", "exec"),
    ("def f(x):\n    return __import__('sys')", "__import__"),
    ("def f(x):\n    return globals()", "globals"),
    ("import torch\ndef f(x):\n    return getattr(torch, '_' + 'C')", "getattr(..., <computed name>)"),
    ("import torch\ndef f(x):\n    return getattr(torch, '_C')", "getattr(..., '_C')"),
    ("def f(x):\n    setattr(x, 'y', 1)\n    return x", "setattr"),
    ("def f(x):\n    return x.__class__.__mro__", "x.__class__"),
    ("import torch\ndef f(x):\n    return torch.__dict__['softmax']", "torch.__dict__"),
    ("import operator\ndef f(x):\n    return operator.attrgetter('_C')", "operator.attrgetter"),
    ("def f(x):\n    return f.__globals__", "f.__globals__"),
    ("def f(x):\n    try:\n        1 / 0\n    except Exception as e:\n        return e.__traceback__.tb_frame",
     "e.__traceback__"),
    ("def f(x):\n    return open('/proc/self/mem', 'rb')", "'/proc/self/mem'"),
    ("__name__ = '__main__'\nif __name__ == '__main__':\n    import gc\ndef f(x):\n    return x", "__name__ = ..."),
    ("class Raw:\n    __array_interface__ = {}\ndef f(x):\n    return Raw()", "__array_interface__"),
    ("def f(x):\n    return type('P', (), {'__array_interface__': {}})", "'__array_interface__'"),
    ("import numpy as np\ndef f(x):\n    return np.ctypeslib.as_array", "np.ctypeslib"),
    ("import tracemalloc\ndef f(x):\n    tracemalloc.reset_peak()\n    return x", "import tracemalloc"),
    ("import torch\ndef f(x):\n    with torch.cuda.stream(None):\n        return x", "torch.cuda.stream"),
    ("from torch.cuda import set_stream\ndef f(x):\n    return x", "import set_stream"),
    ("class M:\n    def __torch_function__(self, *a):\n        return None\ndef f(x):\n    return M()",
     "def __torch_function__"),
    # class 1: host code inside an interpreted kernel
    (KERNEL + "import numpy as np\n@triton.jit\ndef k(p):\n    x = tl.load(p)\n    np.exp(x)\ndef f(x):\n"
     "    k[(1,)](x)", "np.exp(...) in kernel k"),
    (KERNEL + "def host(t):\n    return t\n@triton.jit\ndef k(p):\n    tl.store(p, host(tl.load(p)))\ndef f(x):\n"
     "    k[(1,)](x)", "host(...) in kernel k"),
    (KERNEL + "@triton.jit\ndef k(p):\n    x = tl.load(p)\n    x.handle.data[...] = 0\ndef f(x):\n    k[(1,)](x)",
     "x.handle"),
    (KERNEL + "def comb(a, b):\n    return a\n@triton.jit\ndef k(p):\n    tl.store(p, tl.reduce(tl.load(p), 0, comb))\n"
     "def f(x):\n    k[(1,)](x)", "comb in kernel k"),
    (KERNEL + "import math\ndef body(p):\n    tl.store(p, math.exp(1.0))\nk = triton.jit(body)\ndef f(x):\n"
     "    k[(1,)](x)", "math.exp(...) in kernel body"),
    (KERNEL + "J = triton.jit\ndef f(x):\n    return J", "triton.jit (as a value)"),
    (KERNEL + "@triton.jit\ndef k(p):\n    g = lambda v: v\n    tl.store(p, g(tl.load(p)))\ndef f(x):\n    k[(1,)](x)",
     "lambda in kernel k"),
    (KERNEL + "@triton.jit\ndef k(p, H: tl.constexpr):\n    with H:\n        tl.store(p, 1.0)\ndef f(x):\n"
     "    k[(1,)](x, H=None)", "with in kernel k"),
    # class 2: refused names reached indirectly
    ("import torch\ndef f(x):\n    get = getattr\n    return get(torch, 'cuda')", "getattr (as a value)"),
    ("import functools, torch\ndef f(x):\n    return functools.reduce(getattr, ['cuda'], torch)",
     "getattr (as a value)"),
    ("import torch\ndef f(x):\n    return list(map(hasattr, [torch], ['cuda']))", "hasattr (as a value)"),
    ("def f(x):\n    return '_C'", "'_C'"),
    ("def f(x):\n    return 'DisableTorchFunction'", "'DisableTorchFunction'"),
    ("def f(x):\n    return 'modules'", "'modules'"),
    ("def f(x):\n    return '{0._C}'.format(x)", "'{0._C}'"),
    ("import torch\ndef f(x):\n    match torch:\n        case object(_C=c):\n            return c", "case ...(_C=...)"),
    ("def f(x):\n    return type('P', (), {})", "type(name, bases, namespace)"),
    # class 3: code-carrying deserialization
    ("import torch\ndef f(b):\n    return torch.load(b, weights_only=False)", "without weights_only=True"),
    ("import torch\ndef f(b):\n    return torch.load(b)", "without weights_only=True"),
    ("import torch\ndef f(b, **kw):\n    return torch.load(b, **kw)", "torch.load(**...)"),
    ("from torch import load\ndef f(b):\n    return load(b)", "without weights_only=True"),
    ("import torch\ndef f(b):\n    ld = torch.load\n    return ld", "torch.load (as a value)"),
    ("import numpy as np\ndef f(b):\n    return np.load(b, allow_pickle=True)", "allow_pickle"),
    ("def f(b):\n    import _pickle\n    return _pickle.loads(b)", "import _pickle"),
    ("def f(b):\n    import shelve\n    return shelve.open(b)", "import shelve"),
    ("def f(b):\n    import dill\n    return dill.loads(b)", "import dill"),
    ("def f(b):\n    import copy\n    return copy.deepcopy(b)", "import copy"),
    ("class P:\n    def __reduce__(self):\n        return exit, ()\ndef f(x):\n    return P()", "def __reduce__"),
    ("import pandas\ndef f(b):\n    return pandas.read_pickle(b)", "pandas.read_pickle"),
    # channels between ranks that neither the comm log nor the judge's count of the wire sees
    ("import torch.distributed as dist\ndef f(x):\n    return dist.TCPStore('127.0.0.1', 29700, 2)", "dist.TCPStore"),
    ("from torch.distributed import FileStore\ndef f(x):\n    return FileStore('/tmp/s', 2)", "import FileStore"),
    ("import torch.distributed as dist\ndef f(x):\n    return dist.rpc.rpc_sync", "dist.rpc"),
    ("def f(x):\n    import socket\n    return socket.socket()", "import socket"),
    ("def f(x):\n    import mmap\n    return mmap.mmap(-1, 8)", "import mmap"),
    ("def f(x):\n    with open('/tmp/x', 'wb') as out:\n        out.write(b'')", "open"),
    ("import os\ndef f(x):\n    return os.open('/tmp/x', 0)", "os.open"),
    ("import os\ndef f(x):\n    return os.pipe()", "os.pipe"),
    ("import io\ndef f(x):\n    return io.FileIO('/tmp/x')", "io.FileIO"),
    ("def f(x):\n    from pathlib import Path\n    return Path('/tmp/x').read_bytes()", "import pathlib"),
    ("import torch\ndef f(x):\n    torch.save(x, '/tmp/x')", "torch.save"),
    ("import torch\ndef f(x):\n    return torch.load('/tmp/x', weights_only=True)", "torch.load(...) of a file"),
    ("import numpy as np\ndef f(x):\n    return np.load('/tmp/x.npy')", "np.load(...) of a file"),
    ("import numpy as np\ndef f(x):\n    return np.memmap('/tmp/x', mode='r')", "np.memmap"),
    ("import torch\ndef f(x):\n    return torch.UntypedStorage.from_file('/tmp/x', True, 8)", "from_file"),
    ("import torch\nX = torch.zeros(4).share_memory_()\ndef f(x):\n    return X", "share_memory_"),
    ("def f(x):\n    from multiprocessing import shared_memory\n    return shared_memory", "import multiprocessing"),
    ("def f(x):\n    return getattr(x, 'TCPStore')", "getattr(..., 'TCPStore')"),
    ("import torch.distributed as dist\ndef f(x):\n    return dist.new_group([0, 1])", "dist.new_group"),
    ("from torch.distributed import init_process_group\ndef f(x):\n    return 0", "import init_process_group"),
    # R3.3: an allowlist: a module, a part of a library, a builtin or a dunder not on it is refused
    ("import os\ndef f(x):\n    return os.system('true')", "import os"),
    ("def f(x):\n    import pydoc\n    return pydoc.locate('grader.instrument.traffic')", "import pydoc"),
    ("import logging.config\ndef f(x):\n    return logging.config.BaseConfigurator({}).resolve('grader')",
     "import logging.config"),
    ("def f(x):\n    import exercises.l23_online_softmax.softmax\n    return x", "import exercises"),
    ("import torch\ndef f(x):\n    return torch.hub.load('a/b', 'c')", "torch.hub"),
    ("from torch import hub\ndef f(x):\n    return hub", "from torch import hub"),
    ("import torch\ndef f(x):\n    return torch.utils.cpp_extension.load_inline", "torch.utils"),
    ("import torch.utils.cpp_extension\ndef f(x):\n    return x", "import torch.utils.cpp_extension"),
    ("import torch\ndef f(x):\n    torch.ops.load_library('/tmp/x.so')", "torch.ops"),
    ("import torch\ndef f(x):\n    return torch.compile(f)", "torch.compile"),
    ("import numpy as np\ndef f(x):\n    return np.lib.format.read_array(x, allow_pickle=True)", "np.lib"),
    ("import triton\ndef f(x):\n    return triton.runtime.driver", "triton.runtime"),
    ("from numba import cuda\ndef f(x):\n    return cuda.simulator", "cuda.simulator"),
    ("from numba.cuda.simulator import kernel\ndef f(x):\n    return x", "import numba.cuda.simulator"),
    ("import numba\ndef f(x):\n    return numba.carray(x, 4)", "numba.carray"),
    ("import faiss\ndef f(x):\n    return faiss.read_index('/tmp/x')", "faiss.read_index"),
    ("import typing\ndef f(x: 'torch._C'):\n    return typing.get_type_hints(f)", "typing.get_type_hints"),
    ("import torch\ndef f(x):\n    return getattr(torch, 'hub')", "getattr(..., 'hub')"),
    ("from grader.constants import dataclass\ndef f(x):\n    return dataclass",
     "from grader.constants import dataclass"),
    ("import grader.validate\ndef f(x):\n    return grader.validate.check_int", "import grader.validate"),
    ("def f(x):\n    return help('grader.instrument.traffic')", "help"),
    ("def f(x, h=help):\n    return h", "help"),
    ("class C:\n    help = 1\n    def m(self):\n        return help('x')\ndef f(x):\n    return C().m()", "help"),
    ("def f(x):\n    return memoryview(x)", "memoryview"),
    ("def f(x):\n    return exit", "exit"),
    ("def f(x):\n    return x.__array__()", "x.__array__"),
    ("def f(x):\n    return getattr(x, '__array__')", "getattr(..., '__array__')"),
    ("__path__ = ['.']\ndef f(x):\n    return x", "__path__ = ..."),
    ("__package__ = __name__\nfrom .k import g\ndef f(x):\n    return x", "__package__ = ..."),
    # R3.2: a @cuda.jit body reads elements, not whole arrays, and calls no host code
    ("from numba import cuda\n@cuda.jit\ndef k(x, y):\n    y[0] = x.sum()\ndef f(x):\n    k[1, 1](x, x)",
     "x.sum(...) in kernel k"),
    ("import numpy as np\nfrom numba import cuda\n@cuda.jit\ndef k(x, y):\n    y[0] = np.max(x)\ndef f(x):\n"
     "    k[1, 1](x, x)", "np.max(...) in kernel k"),
    ("from numba import cuda\ndef host(x):\n    return x\n@cuda.jit\ndef k(x, y):\n    y[0] = host(x)\ndef f(x):\n"
     "    k[1, 1](x, x)", "host(...) in kernel k"),
    ("from numba import cuda\n@cuda.jit\ndef k(x, y):\n    y[0] = x.copy_to_host\ndef f(x):\n    k[1, 1](x, x)",
     "x.copy_to_host in kernel k"),
    ("from numba import cuda\nJ = cuda.jit\ndef f(x):\n    return J", "cuda.jit (as a value)"),
    ("from numba import cuda\n@cuda.jit('void(float32[:])')\ndef k(x):\n    x[0] = 1\ndef f(x):\n    k[1, 1](x)",
     "cuda.jit(<signature>)"),
]


@pytest.mark.parametrize("source, what", DENIED, ids=[w for _, w in DENIED])
def test_each_way_around_the_checks_is_found_with_its_line(tmp_path, source, what):
    found = audit.findings_for(unit(tmp_path, k=source), "k", "f")
    assert any(what in w for w in whats(found)), f"{what!r} not among {whats(found)}"
    assert all(f.line >= 1 and f.path.endswith("k.py") for f in found)


HONEST = """
'''A kernel module may talk about /proc/ in its docstring.'''
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import triton
import triton.language as tl

from grader.constants import GPUS


@dataclass
class Cfg:
    block: int = 128

    def __post_init__(self):
        self._cache = {}
        super().__init__()



def f(x, block=128):
    assert isinstance(x, torch.Tensor), f"{getattr(x, 'dtype', '')} {type(x).__name__}"
    n = triton.next_power_of_2(x.shape[-1])
    y = torch.empty_like(x)
    scale = 1 / math.sqrt(n)
    return y, scale, np.float32, GPUS


if __name__ == "__main__":  # never runs when graded
    import sys

    sys.exit(f(torch.randn(4, 4)) is None)
"""


def test_honest_kernel_module_has_no_findings(tmp_path):
    assert audit.findings_for(unit(tmp_path, k=HONEST), "k", "f") == []


AUDITED_DECLARATION = re.compile(r'learner\(\s*\w+\s*,\s*"(\w+)"\s*,[^)]*\b(?:kernel|audited)=True')


def audited_modules() -> set[tuple[str, str]]:
    """(unit, module) of every module holding an exercise the audit reads (declared kernel=True or audited=True):
    a ledger module that parses /proc text is never audited, so it is not held to a kernel's rules."""
    return {(test.parent.name, m) for test in (REPO_ROOT / "tests").glob("[lc][0-9]*/test_*.py")
            for m in AUDITED_DECLARATION.findall(test.read_text())}


def course_files() -> list[Path]:
    audited = audited_modules()
    assert len(audited) >= 4, f"the audited modules were not found in the tests: {audited}"
    files = [p for folder in ("solutions", "exercises") for p in (REPO_ROOT / folder).glob("*/*.py")
             if (p.parent.name, p.stem) in audited]
    files += list((REPO_ROOT / "kernels_ref").rglob("*.py"))
    files += [p for p in (REPO_ROOT / "tests").glob("*/known_*/*.py")
              if (p.parent.parent.name, known.read(p).module) in audited and not p.stem.startswith(TAMPER)]
    return sorted(files)


TAMPER = "tamper_"  # a known-wrong file that tampers with the grader's checks: the audit must refuse it


def _boundary(path: Path) -> str | None:
    """``BOUNDARY = "grader/...::name"``: a tampering file that goes past the audit's denylist on purpose, stopped at
    run time by that defence (its known-wrong run shows it scores 0 on what it attacks)."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "BOUNDARY":
            return ast.literal_eval(node.value)
    return None


def test_every_tampering_known_wrong_is_refused_by_the_audit_on_what_it_attacks(tmp_path):
    """The known-wrong files named tamper_* (left out of the no-false-alarm test below) each have a finding on every
    exercise they declare rejected, as a submission (the solution with the file appended): the audit stops them,
    they do not merely fail. Among them, a class's methods (the DDP reducer) and each way in: sys.modules, a
    function's __globals__, the grader's own public API. A file that declares a run-time ``BOUNDARY`` instead goes
    past the audit on purpose (that is its point: the boundary holds where the denylist does not), and names a
    defence that exists."""
    tampering = sorted((REPO_ROOT / "tests").glob(f"*/known_wrong/{TAMPER}*.py"))
    assert len(tampering) >= 4, tampering
    for path in tampering:
        boundary = _boundary(path)
        if boundary is not None:
            module, _, name = boundary.partition("::")
            assert (REPO_ROOT / module).is_file() and re.search(rf"^(def|class) {name}\b|^{name} =",
                                                               (REPO_ROOT / module).read_text(), re.M), boundary
            continue
        impl = known.read(path)
        folder = tmp_path / path.stem
        folder.mkdir()
        solution = (REPO_ROOT / "solutions" / impl.unit / f"{impl.module}.py").read_text()
        (folder / f"{impl.module}.py").write_text(solution + "\n\n" + path.read_text())
        for exercise in impl.rejected_by:
            assert audit.findings_for(folder, impl.module, exercise), f"{path.name}: no finding on {exercise}"


def _file_findings(unit_dir: Path, module: str) -> list[audit.Finding]:
    """Every finding of the module's file and of the files it imports (object attributes checked with the unit)."""
    files = audit._unit_files(unit_dir, module)
    assert module in files, (unit_dir, module)
    return [f for parsed in files.values() for f in parsed.module_findings + [x for s in parsed.defs.values()
                                                                              for x in s.findings]]


def test_the_course_own_code_passes_the_audit(tmp_path):
    """Solutions, stubs, reference kernels and both known corpora (each as the submission it is graded as: the
    solution with the file appended): not one finding (no false alarm)."""
    assert len(course_files()) > 50
    found = []
    for path in course_files():
        if path.parent.name.startswith("known_"):
            impl = known.read(path)
            folder = tmp_path / path.parent.parent.name / path.parent.name / path.stem
            shutil.copytree(REPO_ROOT / "solutions" / impl.unit, folder,
                            ignore=shutil.ignore_patterns("__pycache__", "*.toml", "*.md"))
            graded = folder / f"{impl.module}.py"
            graded.write_text(graded.read_text() + "\n\n" + path.read_text())
            found += [f for f in _file_findings(folder, impl.module) if f.path.endswith(f"{impl.module}.py")]
        else:
            root = REPO_ROOT / "kernels_ref" if path.is_relative_to(REPO_ROOT / "kernels_ref") else path.parent
            module = ".".join(path.relative_to(root).with_suffix("").parts)
            found += [f for f in _file_findings(root, module) if Path(f.path).name == path.name]
    # A reference kernel may build on another through the grader's loader (C3's flash_fwd wraps L25's tuned
    # attention, compiled or interpreted as the run needs): course code, never a learner's, so that one finding is
    # expected (with the attribute of the module it loads, which no file of it defines); every other one is a false
    # alarm.
    found = [f for f in found if not (f.path.startswith("kernels_ref/") and f.what == "import grader.instrument")
             and not (f.path == "kernels_ref/flash_fwd.py" and f.what == "attention.flash_attention_fwd")]
    assert not found, [f.describe() for f in found]


HONEST_NUMBA = """
import math

import numba
import numpy as np
from numba import cuda


@cuda.jit(device=True)
def _twice(v):
    return 2 * v


@cuda.jit
def _k(x, y):
    tile = cuda.shared.array((32, 33), numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < x.shape[0]:
        tile[0, cuda.threadIdx.x] = x[i]
    cuda.syncthreads()
    if i < y.size:
        y[i] = _twice(math.exp(tile[0, cuda.threadIdx.x])) + numba.float32(0) + np.float32(1)
        cuda.atomic.add(y, 0, 1.0)


def f(x, input=None):
    y = cuda.device_array(x.shape, dtype=np.float32)
    _k[(x.shape[0] + 31) // 32, 32](x, y)
    return [input for help in range(2)], y
"""


def test_honest_numba_kernels_and_launchers_have_no_findings(tmp_path):
    """numba.cuda's thread indices, shared arrays, barriers and atomics, math, numba's types, a device function;
    a parameter or a comprehension variable named like a builtin is not the builtin."""
    assert audit.findings_for(unit(tmp_path, k=HONEST_NUMBA), "k", "f") == []


def test_every_file_the_graded_module_imports_is_read_sub_folders_included(tmp_path):
    """A helper in a sub-folder or a package is read (its findings reach the importer, with their own file), a
    file nothing imports is not, an import that names no file of the unit and no allowed library is refused, and a
    file named like an installed module is refused (importing it would load the module, not the file)."""
    d = unit(tmp_path, k="from helpers.tools import fused\nimport pkg.inner\n\ndef f(x):\n    return fused(x)\n",
             unused="import sys\n", pydoc="def locate(x):\n    return x\n",
             j="import pydoc\n\ndef f(x):\n    return pydoc.locate(x)\n",
             n="from .nowhere import g\n\ndef f(x):\n    return g(x)\n")
    (d / "helpers").mkdir()
    (d / "helpers" / "tools.py").write_text("import torch\n\ndef fused(x):\n    return torch._C\n")
    (d / "pkg").mkdir()
    (d / "pkg" / "__init__.py").write_text("from . import inner\n")
    (d / "pkg" / "inner.py").write_text("import ctypes\n")
    found = {(f.path, f.what) for f in audit.findings_for(d, "k", "f")}
    assert found == {("u/helpers/tools.py", "torch._C"), ("u/pkg/inner.py", "import ctypes")}, found
    assert [f.why for f in audit.findings_for(d, "j", "f")] == [audit.SHADOWS_MODULE]
    assert whats(audit.findings_for(d, "n", "f")) == ["import .nowhere"]


def test_a_refusal_names_the_file_the_line_and_what_is_allowed(tmp_path):
    d = unit(tmp_path, k="import os\n\ndef f(x):\n    return os.getpid()\n")
    with pytest.raises(TamperingRefused, match=r"u/k\.py line 1: `import os` \(not among what a graded module may "
                                                r"import: torch \(nn, .*numba \(cuda\).*math"):
        audit.check(d, "k", "f", kernel=True)


def test_findings_reach_only_the_functions_that_use_them(tmp_path):
    d = unit(tmp_path, k="""
        import torch

        def _helper():
            return torch._C

        def g(x):
            return _helper()

        h2 = g

        def h(x):
            return x
        """)
    assert whats(audit.findings_for(d, "k", "g")) == ["torch._C"]
    assert whats(audit.findings_for(d, "k", "h2")) == ["torch._C"]
    assert audit.findings_for(d, "k", "h") == []


def test_module_level_findings_reach_every_function_of_the_file_and_its_importers(tmp_path):
    d = unit(tmp_path, evil="import sys\n\ndef ok(x):\n    return x\n",
             k="from evil import ok\n\ndef f(x):\n    return x\n", other="def f(x):\n    return x\n")
    assert whats(audit.findings_for(d, "evil", "ok")) == ["import sys"]
    assert whats(audit.findings_for(d, "k", "f")) == ["import sys"]
    assert audit.findings_for(d, "other", "f") == []


@pytest.mark.parametrize("runs_at_import", ["_patch()", "X = _patch()", "@_patch\ndef deco(x):\n    return x",
                                            "def dflt(x, y=_patch()):\n    return x", "class C(_Patch):\n    pass"])
def test_a_tainted_function_run_at_import_reaches_every_function(tmp_path, runs_at_import):
    d = unit(tmp_path, k=f"""
import torch

def _patch(f=None):
    torch._C._pop_torch_function_stack()
    return f

class _Patch:
    def __init_subclass__(cls):
        torch._C._pop_torch_function_stack()

{runs_at_import}

def f(x):
    return torch.softmax(x, -1)
""")
    assert "torch._C" in whats(audit.findings_for(d, "k", "f"))[0]


def test_findings_travel_through_imports_of_functions_and_modules(tmp_path):
    d = unit(tmp_path, helpers="def bad():\n    return eval('1')\n\ndef good():\n    return 1\n",
             a="from helpers import bad, good\n\ndef f(x):\n    return bad()\n\ndef g(x):\n    return good()\n",
             b="import helpers\n\ndef f(x):\n    return helpers.bad()\n\ndef g(x):\n    return helpers.good()\n")
    assert whats(audit.findings_for(d, "a", "f")) == ["eval"]
    assert audit.findings_for(d, "a", "g") == []
    assert whats(audit.findings_for(d, "b", "f")) == ["eval"]
    assert audit.findings_for(d, "b", "g") == []


def test_a_changed_file_is_audited_again(tmp_path):
    d = unit(tmp_path, k="def f(x):\n    return x\n")
    assert audit.findings_for(d, "k", "f") == []
    unit(tmp_path, k="def f(x):\n    return eval('x')  # now longer\n")
    assert whats(audit.findings_for(d, "k", "f")) == ["eval"]


def test_a_file_that_does_not_parse_has_no_findings(tmp_path):
    """Loading it reports the syntax error with its line; none of it runs."""
    assert audit.findings_for(unit(tmp_path, k="def f(:\n"), "k", "f") == []


@pytest.fixture
def target_unit(tmp_path, monkeypatch):
    monkeypatch.setenv(target.TARGET_ENV, str(tmp_path))
    return lambda **files: unit(tmp_path, **files)


GUARD_POPPED = KERNEL + """
from torch.overrides import _get_current_function_mode_stack

def ledger(n):
    return 4 * n

def f(x):
    for _ in _get_current_function_mode_stack():
        torch._C._pop_torch_function_stack()
    return torch.softmax(x, -1)
"""


def test_a_kernel_exercise_reached_by_a_finding_fails_with_the_finding(target_unit):
    target_unit(k=GUARD_POPPED)
    with pytest.raises(TamperingRefused, match=r"k\.py line \d+: `import torch.overrides`"):
        harness.learner("u", "k", "f", kernel=True)(torch.randn(2, 8))
    assert harness.learner("u", "k", "ledger")(3) == 12  # a ledger exercise is compared in the judge


FROM_NUMPY = KERNEL + """
import numpy as np

def f(x):
    return torch.from_numpy(np.ones((4, 4), dtype=np.float32))
"""

CACHED = KERNEL + """
_cache = []

def f(x):
    if not _cache:
        y = torch.empty_like(x)
        _copy[(1,)](x, y, x.numel(), BLOCK=64)
        _cache.append(y)
    return _cache[0]
"""

HALF_WRITTEN = KERNEL + """
def f(x):
    y = torch.empty_like(x)
    _copy[(1,)](x, y, x.numel() // 2, BLOCK=64)
    return y
"""

VIEWED = KERNEL + """
def f(x):
    y = torch.empty_like(x)
    _copy[(triton.cdiv(x.numel(), 16),)](x, y, x.numel(), BLOCK=16)
    return y.t(), y.view(-1)[::2]
"""


@pytest.mark.parametrize(
    "source, missing",
    [(FROM_NUMPY, "16 of 16"), (HALF_WRITTEN, "8 of 16"), (CACHED, "16 of 16")],
    ids=["made_on_the_host", "half_written", "cached_from_an_earlier_call"],
)
def test_every_returned_element_must_be_stored_by_a_kernel(target_unit, source, missing):
    target_unit(k=source)
    fn = harness.learner("u", "k", "f", kernel=True)
    if source is CACHED:
        fn(torch.randn(4, 4))  # stored by the kernel in this call: fine
    with pytest.raises(AssertionError, match=rf"{missing} elements of its output \(4x4\) were not written by a Triton"):
        fn(torch.randn(4, 4))


def test_views_of_what_the_kernel_wrote_pass(target_unit):
    target_unit(k=VIEWED)
    x = torch.randn(4, 4)
    t, strided = harness.learner("u", "k", "f", kernel=True)(x)
    assert torch.equal(t, x.t()) and torch.equal(strided, x.view(-1)[::2])


HONEST_KERNELS = {
    "helpers": """
import triton
import triton.language as tl


@triton.jit
def row_max(x):
    return tl.max(x, axis=0)
""",
    "k": """
import io

import numpy as np
import torch
import triton
import triton.language as tl
from triton.language import exp

from helpers import row_max
import helpers


@triton.autotune(configs=[triton.Config({"BLOCK": 16})], key=["n"])
@triton.jit
def _k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-float("inf")).to(tl.float32)
    num = exp(x - row_max(x)) + helpers.row_max(x) * 0
    for _ in range(min(2, 3)):
        num = num.to(tl.float32)
    tl.store(y_ptr + offs, (num / tl.sum(num, axis=0)).to(y_ptr.dtype.element_ty), mask=offs < n)


def f(x, blob=b""):
    y = torch.empty_like(x)
    state = torch.load(io.BytesIO(blob), weights_only=True) if blob else None
    arr = np.load(io.BytesIO(blob)) if blob else None
    _k[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, x.numel())
    return y, state, arr, getattr(x, "dtype"), isinstance(x, torch.Tensor)
""",
}


def test_honest_kernels_calling_tl_and_jit_functions_of_the_unit_have_no_findings(tmp_path):
    """tl.*, jit functions here and in the unit's other files, tile methods, range/min, weights_only loads."""
    d = unit(tmp_path, **HONEST_KERNELS)
    assert audit.findings_for(d, "k", "f") == []


def test_a_kernel_calling_a_plain_function_of_another_file_is_found(tmp_path):
    d = unit(tmp_path, helpers="def row_max(x):\n    return x\n",
             k=KERNEL + "from helpers import row_max\n@triton.jit\ndef k(p):\n    tl.store(p, row_max(tl.load(p)))\n"
             "def f(x):\n    k[(1,)](x)\n")
    assert whats(audit.findings_for(d, "k", "f")) == ["row_max(...) in kernel k"]


RUNTIME = KERNEL + """
import numpy as np


@triton.jit
def _touch(p, H: tl.constexpr):
    tl.store(p + tl.arange(0, 4), tl.load(p + tl.arange(0, 4)))


@triton.jit
def _peek(p):
    x = tl.load(p + tl.arange(0, 4))
    tl.store(p + tl.arange(0, 4), x)


def host_object(x):
    _touch[(1,)](x, H=np)
    return x


def torch_in_grid(x):
    box = []
    _touch[lambda meta: box.append(torch.softmax(x, -1)) or (1,)](x, H=1)
    return box[0]


def read_backing_array(x):
    def grid(meta):
        print(meta["p"].handle.data)
        return (1,)
    _peek[grid](x)
    return x
"""


@pytest.mark.parametrize("fn, message", [
    ("host_object", r"passed module `numpy` as argument H of kernel _touch"),
    ("torch_in_grid", r"called `torch.softmax`"),
    ("read_backing_array", r"read a tile's backing array \(`.handle.data`\) from k.py"),
])
def test_the_guard_refuses_host_code_during_a_launch_even_past_the_audit(target_unit, fn, message):
    """The run-time half of class 1, called past the static audit: host objects as launch arguments, torch
    asked by learner code while the interpreter runs a launch, a tile's backing array read by learner code."""
    from grader.instrument import guard, traffic

    traffic.install()
    target_unit(k=RUNTIME)
    run = harness.learner("u", "k", fn, kernel=True).resolve()
    x = torch.randn(4)
    with guard.refuse_torch_compute(fn), pytest.raises(guard.TorchComputeRefused, match=message):
        harness._unwrap_interpreter_error(run, x)


def test_channels_between_processes_are_refused_for_ranks_not_for_kernels(tmp_path):
    """Files, stores, groups of one's own reached through the allowed libraries (torch.save, TCPStore...) are a way
    round a rank's comm log (data passed beside decoy sends); a kernel runs in one process, where the sandbox
    contains its files and network (the cheat corpus tries those at run time), so a kernel exercise is not refused
    for them. What is not on the allowlist (pathlib, socket, the builtin open) is refused for both."""
    d = unit(tmp_path, k="import torch\ndef f(x):\n    torch.save(x, 'x')\n    "
                       "torch.distributed.new_group([0])\n    return 'TCPStore'\n"
                       "def g(x):\n    from pathlib import Path\n    return open('y')\n")
    assert {f.what for f in audit.findings_for(d, "k", "f")} == {"torch.save", "'TCPStore'",
                                                                 "torch.distributed.new_group"}
    assert audit.findings_for(d, "k", "f", ranks=False) == []
    audit.check(d, "k", "f", kernel=True)  # a kernel: nothing refused
    with pytest.raises(audit.TamperingRefused, match="a channel between processes"):
        audit.check(d, "k", "f", kernel=False)
    assert whats(audit.findings_for(d, "k", "g", ranks=False)) == ["import pathlib", "open"]
    with pytest.raises(audit.TamperingRefused, match="import pathlib"):
        audit.check(d, "k", "g", kernel=True)


# ---- R3.3: attributes of objects by allowlist ----------------------------------------------------------------------


def test_the_object_attribute_allowlist_is_what_the_libraries_generate():
    """grader/judge/object_attrs.txt is regenerated from the installed libraries and must match: an upgrade that adds
    public names (or a hand edit) fails here instead of widening the audit silently. Regenerate with
    ``python -m grader.judge.audit --write-object-attrs`` and review the diff."""
    text = audit.OBJECT_ATTRS_FILE.read_text(encoding="utf-8")
    assert audit.generate_object_attrs() == text, "object_attrs.txt drifted from the libraries: regenerate, review"
    public, internal = audit.object_attrs()
    assert {"shape", "stride", "item", "to", "append", "copy_to_host", "T"} <= public
    assert not public & set(audit.REMOVED_ATTRS), "a removed name came back"
    assert not public & internal
    assert {"handle", "untyped_storage", "data_ptr", "ctypes", "thisown"} <= set(audit.REMOVED_ATTRS) | set(
        audit.DENIED_ATTRS)


# Honest host code a learner plausibly writes: not one finding.
HONEST_ATTRS = KERNEL + """
import math
import numpy as np
from collections import deque


class Plan:
    def __init__(self, n):
        self.n = n
        self.blocks = deque([n])

    def widest(self):
        return max(self.blocks)


def f(x, plan=None):
    rows, cols = x.shape
    assert x.stride(0) == cols and x.is_contiguous() and x.dim() == 2, f"{x.dtype} {x.shape[0]:d} {cols / 3:.2f}"
    y = torch.empty_like(x).to(torch.float32)
    total = x.numel() * x.element_size() + x.T.shape[0] + torch.float32.itemsize + torch.finfo(x.dtype).eps
    sizes = [rows, cols]
    sizes.append(total)
    sizes.sort()
    table = {"a": 1}
    table.update(b=2)
    names = ",".join(f"{k}={v}" for k, v in table.items()).upper().split(",")
    arr = np.zeros(4, dtype=np.float32).reshape(2, 2).astype(np.float64).sum(axis=0).tolist()
    plan = plan or Plan(cols)
    _copy[(triton.cdiv(x.numel(), 128),)](x, y, x.numel(), BLOCK=128)
    kernel, block = (_copy, 64) if rows > 1 else (_copy, 128)  # choosing among kernels, then launching
    kernel[(1,)](x, y, x.numel(), BLOCK=block)
    label = "{0.shape} {1}".format(x, plan.widest())
    return y, names, arr, math.isfinite(total), label, getattr(x, "dtype", None), y.item() if y.numel() == 1 else 0
"""


def test_honest_attributes_of_tensors_arrays_containers_and_own_classes_have_no_findings(tmp_path):
    """.item(), .to(dtype), .shape, .stride(0), x.T, list/dict/str methods, NumPy's, f-string formatting of numbers,
    the unit's own class and its self.x fields, tl.program_id in a kernel: the allowlist lets them all through."""
    found = audit.findings_for(unit(tmp_path, k=HONEST_ATTRS), "k", "f")
    assert found == [], [f.describe() for f in found]


# Each reaches an interpreter's or simulator's internals or raw memory through a public-looking attribute chain: the
# old audit's rules (no private name, allowed dunders, no frame/channel/stream names) let every one through.
OBJECT_CHEATS = [
    ("import torch\ndef f(x):\n    return bytes(x.untyped_storage())", "x.untyped_storage"),
    ("import torch\ndef f(x):\n    return x.storage().tolist()", "x.storage"),
    ("import torch\ndef f(x):\n    return getattr(x, 'untyped_storage')()", "getattr(..., 'untyped_storage')"),
    ("import numpy as np\ndef f(x):\n    return np.zeros(3).ctypes.data", "ctypes"),
    ("def f(x):\n    return x.data_ptr()", "x.data_ptr"),
    ("from numba import cuda\ndef f(x):\n    return cuda.to_device(x).device_ctypes_pointer", "device_ctypes_pointer"),
    ("from numba import cuda\ndef f(x):\n    return cuda.to_device(x).get_ipc_handle()", "get_ipc_handle"),
    (KERNEL + "def f(x):\n    _copy.pre_run_hooks.append(print)\n    return x", "_copy.pre_run_hooks"),
    (KERNEL + "def f(x):\n    return _copy.rewritten_fn", "_copy.rewritten_fn"),
    (KERNEL + "def f(x):\n    launch = _copy[(1,)]\n    launch.fn = print\n    return x", "launch.fn"),
    (KERNEL + "def f(x):\n    k = _copy\n    return k.rewriter", "k.rewriter"),
    (KERNEL + "def fn(v):\n    return v\ndef f(x):\n    launch = _copy[(1,)]\n    launch.fn = fn\n    return x",
     "_copy (as a value)"),
    (KERNEL + "def fn(v):\n    return v\ndef f(x):\n    k, n = (_copy if x else _copy), 1\n    return k.fn", "k.fn"),
    (KERNEL + "def run(v):\n    return v\ndef go(k):\n    return k.run\ndef f(x):\n    return go(_copy)",
     "_copy (as a value)"),
    ("def f(x):\n    return '{0.untyped_storage}'.format(x)", "'{0.untyped_storage}'"),
    ("def f(x):\n    match x:\n        case object(untyped_storage=s):\n            return s",
     "case ...(untyped_storage"),
]


@pytest.mark.parametrize("source, what", OBJECT_CHEATS, ids=[w for _, w in OBJECT_CHEATS])
def test_an_attribute_outside_the_libraries_public_api_is_refused(tmp_path, source, what):
    found = audit.findings_for(unit(tmp_path, k=source), "k", "f")
    assert any(what in w for w in whats(found)), f"{what!r} not among {whats(found)}"
    hit = next(f for f in found if what in f.what)
    assert hit.why in (audit.NOT_ALLOWED_ATTR, audit.REMOVED_ATTR, audit.INTERNAL_ATTR, audit.KERNEL_OBJECT_ATTR,
                       audit.KERNEL_AS_VALUE)
    assert hit.line >= 1 and hit.path.endswith("k.py")


@pytest.mark.parametrize("main, what", [
    ("from kernels import copy_k\ndef fn(v):\n    return v\ndef f(x):\n    return copy_k.fn", "copy_k.fn"),
    ("import kernels\ndef fn(v):\n    return v\ndef f(x):\n    return kernels.copy_k.fn", "kernels.copy_k.fn"),
    ("from kernels import copy_k\ndef go(k):\n    return k\ndef f(x):\n    return go(copy_k)", "copy_k (as a value)"),
    ("import kernels\ndef go(k):\n    return k\ndef f(x):\n    return go(kernels.copy_k)",
     "kernels.copy_k (as a value)"),
    ("import kernels\ndef f(x):\n    return getattr(kernels, 'copy_k')", "kernels.copy_k (as a value)"),
])
def test_a_kernel_of_another_file_of_the_unit_is_only_launched(tmp_path, main, what):
    """A kernel imported from another file of the unit: launched (``copy_k[grid](...)``, ``kernels.copy_k[grid](...)``),
    never passed on nor asked for an attribute, even one the unit defines (``fn``)."""
    found = audit.findings_for(unit(tmp_path, k=main, kernels=KERNEL.replace("_copy", "copy_k")), "k", "f")
    assert what in whats(found), whats(found)
    honest = "from kernels import copy_k\nimport kernels\ndef f(x, y):\n    copy_k[(1,)](x, y, 1, BLOCK=16)\n" \
             "    kernels.copy_k[(1,)](x, y, 1, BLOCK=16)\n    return y\n"
    assert audit.findings_for(unit(tmp_path, k=honest, kernels=KERNEL.replace("_copy", "copy_k")), "k", "f") == []


def test_names_the_unit_defines_are_allowed_but_not_the_removed_ones(tmp_path):
    """A name the unit's files define (a class's method, a self.x field, a helper file's function) may be used on any
    value; a removed name (raw memory, the interpreter's backing array) stays refused even if the unit defines it."""
    helpers = "class Rows:\n    def __init__(self):\n        self.width = 1\n    def untyped_storage(self):\n" \
              "        return 0\ndef pack(x):\n    return x\n"
    main = "import helpers\nfrom helpers import Rows\ndef f(x):\n    r = Rows()\n" \
           "    return r.width, helpers.pack(x), x.width, x.untyped_storage()\n"
    found = audit.findings_for(unit(tmp_path, k=main, helpers=helpers), "k", "f")
    assert whats(found) == ["x.untyped_storage"], whats(found)
    assert found[0].why == audit.REMOVED_ATTR
    assert "x.width" not in whats(found)  # the unit defines width: allowed on any value


OWN_POOL = "import torch\nclass Moments:\n    pool = None\n"
# A name of the unit's kept on, or read from, an object every copy of the module shares (a library's class, spelled
# through the imports or an alias), or set on what a call returned (type(x), super()): a registry (R3.3, R3.7).
REGISTRIES = [
    (OWN_POOL + "def f(x):\n    return torch.optim.Optimizer.pool", "torch.optim.Optimizer.pool",
     audit.LIBRARY_OBJECT_ATTR),
    ("from torch.optim import Optimizer\nclass M:\n    pool = None\ndef f(x):\n    return Optimizer.pool",
     "Optimizer.pool", audit.LIBRARY_OBJECT_ATTR),
    (OWN_POOL + "REG = torch.optim.Optimizer\ndef f(x):\n    return REG.pool", "REG.pool", audit.LIBRARY_OBJECT_ATTR),
    (OWN_POOL + "def f(x):\n    reg = torch.optim.Optimizer\n    reg.pool = {}\n    return x", "reg.pool",
     "patches a module (monkeypatching)"),
    (OWN_POOL + "def f(x, reg=torch.optim.Optimizer):\n    reg.pool = {}\n    return x", "reg.pool",
     "patches a module (monkeypatching)"),
    (OWN_POOL + "def f(x, *, reg: type = torch.nn.Module):\n    return getattr(reg, 'pool')",
     "getattr(..., 'pool')", audit.LIBRARY_OBJECT_ATTR),
    (OWN_POOL + "def f(x):\n    type(x).pool = {}\n    return x", "type(...).pool", audit.CALL_RESULT_STORE),
    (OWN_POOL + "class Q(Moments):\n    def keep(self):\n        super().pool = 1\ndef f(x):\n    return Q().keep()",
     "super(...).pool", audit.CALL_RESULT_STORE),
]


@pytest.mark.parametrize("source, what, why", REGISTRIES, ids=[w for _, w, _ in REGISTRIES])
def test_a_name_of_the_units_on_a_shared_library_object_is_refused(tmp_path, source, what, why):
    found = audit.findings_for(unit(tmp_path, k=source), "k", "f")
    assert any(f.what == what and f.why == why for f in found), [f.describe() for f in found]


def test_aliases_read_as_the_library_object_only_where_bound_once(tmp_path):
    """A name bound once to a dotted library name stands for it; one bound twice (or a parameter rebound) is a value
    like any other, so honest code that reuses a name is not read as the library's object."""
    honest = ("import torch\nclass Moments:\n    pool = None\n"
              "def f(x, dtype=torch.float32):\n    d = torch.float32\n    d = x\n    m = Moments()\n"
              "    m.pool = d.shape\n    return x.to(dtype).shape, dtype.itemsize, torch.optim.Optimizer.step\n")
    assert audit.findings_for(unit(tmp_path, k=honest), "k", "f") == []
    rebound = ("import torch\nclass M:\n    pool = None\nREG = torch.optim.Optimizer\nREG = M\n"
               "def f(x):\n    return REG.pool\n")
    assert audit.findings_for(unit(tmp_path, k=rebound), "k", "f") == []


def test_no_allowed_attribute_reaches_the_interpreters_internals_on_any_value():
    """The object allowlist is one list of names for every value (R3.3): sound only while no name in it reaches, on a
    value of Python's own kinds the code can hold (functions, generators, coroutines, frames, tracebacks, code,
    cells, classes, methods, modules, properties), what carries frames, globals, code or closures. The names such
    values share with the list are reviewed here, each harmless on them."""
    import sys
    import types

    def gen():
        yield 1

    async def coroutine():
        return None

    async def agen():
        yield 1

    try:
        raise ValueError
    except ValueError as e:
        tb = e.__traceback__
    made = [gen, gen(), coroutine(), agen(), tb, sys._getframe(), gen.__code__, types.CellType(1), type, (1).__add__,
            len, types, property(), classmethod(len), staticmethod(len), type.__dict__, functools.partial(len)]
    public, _ = audit.object_attrs()
    reviewed = {"close", "clear", "replace", "fget", "fset", "fdel", "getter", "setter", "deleter", "copy", "get",
                "items", "keys", "values", "func", "args", "keywords"}
    shared = {n for v in made for n in dir(v) if not n.startswith("_")} & public
    made[2].close()
    assert shared <= reviewed, sorted(shared - reviewed)
    internals = {"f_back", "f_globals", "f_locals", "f_builtins", "f_code", "gi_frame", "gi_code", "cr_frame",
                 "cr_code", "ag_frame", "ag_code", "tb_frame", "tb_next", "co_code", "co_consts", "cell_contents",
                 "mro"}
    assert not internals & public, sorted(internals & public)
