"""CUDA C++ kernels run on the CPU, for correctness: the learner's .cu compiled unchanged by g++.

Where no GPU is lent, the correctness tests of the ``.cu`` exercises run here instead of waiting for one
("pending GPU"): same inputs, same checks. How (files in ``grader/instrument/cuda_cpu/``):

* ``dripstone_cuda.h``, force-included (``g++ -x c++ -include``) before the learner's file, provides the
  execution model: ``__global__``/``__device__``, ``dim3``, ``threadIdx``/``blockIdx``/``blockDim``/
  ``gridDim``, ``__shared__`` (one static copy per block, poisoned with 0xff bytes, NaN for floats,
  before each block), ``__syncthreads()``, the warp primitives (``__shfl*_sync``, ``__ballot_sync``,
  ``__syncwarp``, ``__activemask``), atomics, the math intrinsics and CUDA's ``min``/``max`` overloads (mixed
  signedness compares as unsigned), ``__half``/``__nv_bfloat16``, device ``printf`` (its output, from the first
  thread order only and cut at 1 MiB as a GPU's buffer, is printed by :func:`launch` like the learner's own
  prints, a faulting kernel's included).
* Every ``__shared__`` variable lives in one ELF section (``dripstone_smem``), which the runtime poisons and
  race tracing protects. :func:`executor_text` rewrites, line for line, what the header's macro cannot take:
  ``static __shared__`` (the macro says ``static`` already) and ``extern __shared__`` (defined in a generated file,
  in the section). g++ puts a function template's block-scope statics in sections of their own whatever their
  attribute, so after compiling :func:`_place_shared` moves the template ``__shared__`` arrays into the section
  (objcopy); one it cannot move makes the file refused, never graded as ordinary memory. A kernel parameter over
  8 bytes by value is refused with its name and line.
* ``runtime.cpp`` runs one launch per process (a kernel that faults or never returns must not take the
  grader down, and its guard pages and signal handlers are that process's own): the threads of a block
  are fibers that switch only at barriers and warp primitives, one block at a time, deterministically.
  The grid runs twice, threads in order then in reverse order, each order in a process of its own that :func:`launch`
  starts (:func:`grader.core.child.run_program`: it dies with the grader, its group is killed after it) and whose
  outputs it compares: a result that depends on the order is a race; a rerun then protects the
  ``__shared__`` pages and single-steps every access to name the two lines that touch one word with no barrier
  between them (a missing ``__syncthreads()``). The launch process decides nothing (THREAT_MODEL.md R3.1): no
  code of the learner's file runs before its main or after the kernel (:func:`_check_object`,
  :func:`_check_no_interposition`), and the kernel runs under a seccomp filter with the request on a read-only page.
  Global buffers have their exact size against PROT_NONE guard pages (the end in the first order, the
  start in the second), static shared arrays are bounds-checked (``-fsanitize=bounds``), so an access
  outside either faults with the kernel's line and the parameter's name. (AddressSanitizer would need
  terabytes of address space; the sandbox allows 6 GiB.) A barrier or warp primitive that not every
  thread reaches is reported as divergence, a lane outside the mask as misuse; a kernel that never
  returns is stopped after the per-call limit (grader.core.timeout, 30 s by default) in CPU seconds,
  where it was. ``extern __shared__`` arrays get up to 227 KiB per launch (``shared_bytes``), poisoned and traced
  like the static ones (an order-dependent float ``atomicAdd`` to global memory is no race, with or without them).

Shared-memory bank conflicts are not counted here: the launch process runs the learner's native code, and what
it reports is the kernel's word (THREAT_MODEL.md R3.1). ``cuda.bank_conflicts`` counts them in the judge, from
NVRTC's PTX of the same preprocessed source interpreted as data (grader.instrument.ptx), and holds the interpreted
launch's outputs against this executor's :func:`launch` of the same inputs. :class:`BankConflicts` and
:class:`LineConflicts` stay here, the format both produce and the tests read: per kernel line, kind and
``__shared__`` array, the worst degree (the most distinct 4-byte words one of the 32 banks serves in one warp
request), the conflicted requests, the requests and the wavefronts.

What it cannot check, and says so: timing, occupancy, the GPU's memory model beyond barriers (fences, volatile,
warp-synchronous code without ``__syncwarp``), fast-math intrinsics' GPU error (``__expf`` is ``expf`` here) and
FMA contraction. ``gpu_perf`` tests stay GPU-only, and on a GPU the kernels run there as before. Compiled
runners are cached per source hash under ``~/.cache/dripstone/cuda_cpu`` (``$DRIPSTONE_CUDA_CPU_CACHE``
overrides): ~2 s the first time, then only the launch.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import math
import os
import platform
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from grader.core import child
from grader.core.target import SubmissionError
from grader.i18n import _
from grader.instrument import cu_source

HERE = Path(__file__).with_name("cuda_cpu")
HEADER = HERE / "dripstone_cuda.h"
RUNTIME = HERE / "runtime.cpp"
CACHE_ENV = "DRIPSTONE_CUDA_CPU_CACHE"
# A read-only folder of runtime objects built beforehand (batch grading builds it once per batch, in the staged
# repo): a judge whose cache starts empty each time would otherwise compile the runtime for every student (~1.4 s).
PREBUILT_ENV = "DRIPSTONE_CUDA_CPU_PREBUILT"
EXECUTOR = "CPU executor (g++ fibers)"  # what the scoreboard names when a .cu kernel ran here
CXX = "g++"
FLAGS = ("-std=c++17", "-gdwarf-4", "-O2", "-ffp-contract=off", "-fsanitize=bounds", "-fno-sanitize-recover=all",
         "-no-pie", "-w")
# the link: no sanitizer library (the runtime reports -fsanitize=bounds' faults itself, __ubsan_handle_out_of_bounds)
LINK_FLAGS = tuple(f for f in FLAGS if not f.startswith(("-fsanitize", "-fno-sanitize")))
# __shared__ variables on pages of their own, far from the runtime's data: race tracing protects those pages
LINK_SHARED_APART = "-Wl,--section-start=dripstone_smem=0x40000000"
SCHEDULES = 2  # thread orders per launch, one process each: 0, 1, ... then ..., 1, 0
DEFAULT_LIMIT_S = 30
PRINTF_CAP = 1 << 20  # the runtime's cap on a launch's printf output (a GPU's default printf buffer)
RUNNER_OUTPUT_CAP = 64 << 20  # a launch process's stdout (its verdict lines) and stderr: far more than it writes
REVISION = "5"  # of what this file does to a source before g++ and checks in its object (part of the cache key)


class CudaFault(AssertionError):
    """The kernel faulted on the CPU executor: out of bounds, divergence, a race, a trap, a timeout."""


class CpuCompileError(SubmissionError):
    """g++ rejected the learner's .cu file (with the executor's header)."""


def available() -> bool:
    """g++ on an x86-64 Linux machine: what the executor's fibers and guard pages are written for."""
    return shutil.which(CXX) is not None and platform.machine() in ("x86_64", "AMD64") and os.name == "posix"


def user_cache(name: str, env: str) -> Path:
    """Where a compiler's outputs are cached: ``$env``, else ``~/.cache/dripstone/<name>`` (``$XDG_CACHE_HOME``)."""
    if os.environ.get(env):
        return Path(os.environ[env])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "dripstone" / name


def cache_root() -> Path:
    return user_cache("cuda_cpu", CACHE_ENV)


def digest(*parts: str | bytes) -> str:
    """A short SHA-256 of the parts (a cache key)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else p.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def _executor_digest() -> str:
    files = sorted(HERE.iterdir())
    return digest(*(f.read_bytes() for f in files), *FLAGS, LINK_SHARED_APART, REVISION)


@contextlib.contextmanager
def fresh_dir(final: Path) -> Iterator[Path]:
    """A temporary folder beside ``final`` that becomes it on success (atomic for concurrent graders)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=final.name + ".", dir=final.parent))
    try:
        yield tmp
        with contextlib.suppress(OSError):  # another process built the same thing first
            tmp.rename(final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _runtime_object() -> Path:
    """runtime.cpp compiled once per executor version (found prebuilt where ``$DRIPSTONE_CUDA_CPU_PREBUILT`` says)."""
    name = f"runtime-{_executor_digest()}"
    prebuilt = os.environ.get(PREBUILT_ENV)
    if prebuilt and (Path(prebuilt) / name / "runtime.o").is_file():
        return Path(prebuilt) / name / "runtime.o"
    return prebuild(cache_root())


def prebuild(root: Path) -> Path:
    """Compile the executor's runtime into ``root/runtime-<version>/runtime.o`` unless it is there; its path."""
    final = root / f"runtime-{_executor_digest()}"
    if not (final / "runtime.o").is_file():
        with fresh_dir(final) as tmp:
            cmd = [CXX, *FLAGS, "-I", str(HERE), "-c", str(RUNTIME), "-o", str(tmp / "runtime.o")]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            if done.returncode:
                raise RuntimeError(f"the CPU executor's runtime does not compile:\n{done.stderr}")
    return final / "runtime.o"



class Runner:
    """A learner's .cu compiled with the executor into one executable per (source, kernels)."""

    def __init__(self, path: Path, source_path: Path, label: str, text: str) -> None:
        self.path, self.source_path, self.label, self.lines = path, source_path, label, text.splitlines()

    def line_text(self, line: int) -> str:
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""

    def at(self, line: int) -> str:
        """``file.cu line 12 (`v += x[i];`)``."""
        text = self.line_text(line)
        return f"{self.label} line {line}" + (f" (`{text}`)" if text else "")

    def params(self, kernel: str) -> list[str]:
        """The names of ``kernel``'s parameters, from its definition (empty if not found)."""
        m = re.search(rf"\b{re.escape(kernel)}\s*\(([^)]*)\)\s*\{{", "\n".join(self.lines))
        if m is None:
            return []
        return [(re.findall(r"\w+", p) or ["?"])[-1] for p in m.group(1).split(",")]

    def lines_of_pc(self, pc: int) -> list[int]:
        """The learner's lines at a program counter, innermost first (inlined frames included)."""
        done = subprocess.run(["addr2line", "-i", "-e", str(self.path), hex(pc)], capture_output=True, text=True,
                              timeout=60)
        out = []
        for row in done.stdout.splitlines():
            file, _, line = row.rpartition(":")
            m = re.match(r"\d+", line)
            if m and Path(file).name == self.source_path.name:
                out.append(int(m.group()))
        return out


DYNAMIC_CAP = 227 * 1024  # the most dynamic shared memory a block may ask for on sm_90
_EXTERN_SHARED = re.compile(r"extern\s+__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?[\w\s:<>,*]*?\b(\w+)\s*\[\s*\]")


def extern_shared(text: str) -> list[str]:
    """The names of the ``extern __shared__`` arrays a source declares (dynamic shared memory)."""
    code = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)
    return sorted(set(_EXTERN_SHARED.findall(code)))


def _dynamic_shared_file(names: list[str]) -> str:
    """Definitions of the ``extern __shared__`` arrays: one zone each in the shared-memory section (poisoned and
    race-traced like the static arrays), registered for its size."""
    out = ['extern "C" void dripstone_dynamic_shared(void* p, unsigned long cap);\n']
    for n in names:
        out.append(f'alignas(16) __attribute__((section("dripstone_smem"))) unsigned char {n}[{DYNAMIC_CAP}];\n'
                   f"static int dripstone_dyn_{n} = (dripstone_dynamic_shared({n}, sizeof {n}), 0);\n")
    return "".join(out)


def executor_text(text: str) -> str:
    """The learner's source as g++ compiles it: line for line the same, three spellings rewritten. The header's
    ``__shared__`` is ``static`` already (``static __shared__`` would say it twice); ``extern __shared__`` arrays
    are defined in another file (:func:`_dynamic_shared_file`), in the shared-memory section like the others."""
    text = re.sub(r"\bstatic(?=\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?__shared__\b)", " " * 6, text)
    text = re.sub(r"(?<=\b__shared__)(\s+)static\b", lambda m: m.group(1) + " " * 6, text)
    return re.sub(r"\bextern(\s+)__shared__\b", r"extern\1DRIPSTONE_DYNAMIC_SHARED", text)


def shared_names(text: str) -> set[str]:
    """Every identifier of the source's ``__shared__`` declarations (their names among them, and type words)."""
    code = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)
    return {w for m in re.finditer(r"\b__shared__\b([^;]*);", code) for w in re.findall(r"[A-Za-z_]\w*", m.group(1))}


def _place_shared(obj: Path, names: set[str], label: str) -> None:
    """Move the ``__shared__`` arrays g++ left outside the shared-memory section into it: a function template's
    block-scope statics go to a section of their own (``.bss._ZZ...``) whatever their section attribute says.
    One that cannot be moved is refused (never graded as ordinary memory: no poisoning, no race tracing, and
    its values would leak from block to block)."""
    if not names:
        return
    sections = {}
    done = subprocess.run(["readelf", "-SW", str(obj)], capture_output=True, text=True, timeout=60)
    for m in re.finditer(r"^\s*\[\s*(\d+)\]\s+(\S+)", done.stdout, flags=re.M):
        sections[m.group(1)] = m.group(2)
    done = subprocess.run(["readelf", "-sW", "-C", str(obj)], capture_output=True, text=True, timeout=60)
    moves, refused = set(), []
    for row in done.stdout.splitlines():
        f = row.split(None, 7)
        if len(f) < 8 or f[3] not in ("OBJECT", "TLS") or ")::" not in f[7]:  # a function's block-scope static
            continue
        where, name = f[7].rpartition("::")[::2]
        if name not in names:
            continue
        section = sections.get(f[6], f[6])
        if section == "dripstone_smem":
            continue
        if section.startswith((".bss.", ".data.")):
            moves.add(section)
        else:
            refused.append(f"`{name}` in `{where}` (in {section})")
    if refused:
        raise CpuCompileError(
            f"{label}: the CPU executor cannot place {', '.join(refused)} in its shared memory, so it does not run "
            "this file (it would not be shared per block: no poisoning, no race check); declare the array in a "
            "plain function or kernel, or say so in the course's issues")
    if moves:
        cmd = ["objcopy", *(a for sec in sorted(moves) for a in ("--rename-section", f"{sec}=dripstone_smem,alloc")),
               str(obj)]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        if done.returncode:
            raise RuntimeError(f"objcopy could not move {label}'s template __shared__ arrays:\n{done.stderr}")


# What a learner's object (launch.o: the .cu and the kernel table) may hold and call. Device code runs inside a
# launch: no section of code that runs before main or after the kernel (constructors, destructors), no call the
# CUDA model lacks (files, processes, signals, memory maps, the dynamic loader): the link is refused with the name.
_SECTIONS = re.compile(r"(\.rela)?(\.text|\.data|\.bss|\.rodata|\.tbss|\.tdata|\.debug_|\.eh_frame|\.gcc_except_table"
                       r"|\.note|\.comment|\.group|\.symtab|\.strtab|\.shstrtab|\.llvm_addrsig|dripstone_smem)")
_RUN_BEFORE_OR_AFTER = (".init_array", ".fini_array", ".preinit_array", ".ctors", ".dtors", ".init", ".fini")
# calls device code may make besides the math library (libm): memory, printf, assert, new/delete, and the language's
# own runtime support (function-local statics, the stack protector, unwinding, the bounds check)
_CALLS = frozenset({
    "memcpy", "memset", "memmove", "memcmp", "printf", "puts", "putchar", "vprintf", "__printf_chk", "__vprintf_chk",
    "malloc", "free", "__assert_fail", "_Znwm", "_Znam", "_ZdlPv", "_ZdlPvm", "_ZdaPv", "_ZdaPvm",
    "__cxa_guard_acquire", "__cxa_guard_release", "__cxa_guard_abort", "__stack_chk_fail", "__gxx_personality_v0",
    "_Unwind_Resume", "__cxa_begin_catch", "__cxa_end_catch", "_ZSt9terminatev", "__cxa_pure_virtual",
    "_GLOBAL_OFFSET_TABLE_", "threadIdx", "blockIdx", "blockDim", "gridDim", "dripstone_syncthreads",
    "dripstone_syncthreads_count", "dripstone_warp_op", "dripstone_activemask", "dripstone_trap"})
_CALL_PREFIXES = ("__ubsan_handle_",)


def _tool_lines(*cmd: str) -> list[str]:
    done = subprocess.run(list(cmd), capture_output=True, text=True, timeout=60)
    if done.returncode:
        raise RuntimeError(f"{cmd[0]} failed: {done.stderr}")
    return done.stdout.splitlines()


@functools.cache
def _libm() -> frozenset[str]:
    """The functions of the C math library (what device code's math calls become)."""
    path = subprocess.run([CXX, "-print-file-name=libm.so.6"], capture_output=True, text=True, timeout=60).stdout
    out = set()
    for row in _tool_lines("nm", "-D", "--defined-only", path.strip()):
        f = row.split()
        if len(f) >= 3 and f[1] in "TtWwi":
            out.add(f[2].split("@")[0])
    return frozenset(out)


def _line_naming(text: str, word: str) -> str:
    """`` at line N (`code`)`` for the first line of ``text`` that names ``word``, else ""."""
    for n, row in enumerate(text.splitlines(), 1):
        if re.search(rf"\b{re.escape(word)}\b", re.sub(r"//.*", "", row)):
            return _(" at line {line} (`{code}`)").format(line=n, code=row.strip())
    return ""


def _demangle(names: Sequence[str]) -> list[str]:
    done = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, timeout=60)
    out = done.stdout.splitlines()
    return out if len(out) == len(names) else list(names)


def _check_object(obj: Path, label: str, text: str) -> None:
    """Refuse a learner's object with code that runs outside a kernel launch or calls what the CUDA model lacks."""
    sections = re.findall(r"^\s*\[\s*\d+\]\s+(\S+)", "\n".join(_tool_lines("readelf", "-SW", str(obj))), flags=re.M)
    for sec in sections:
        if sec == "NULL" or _SECTIONS.match(sec):
            continue
        if sec.removeprefix(".rela").startswith(_RUN_BEFORE_OR_AFTER):
            raise CpuCompileError(_(
                "{label}: code that runs outside a kernel launch (section {section}: a global object with a "
                "constructor or destructor, a global initialized by a function call, [[gnu::constructor]] or "
                "[[gnu::destructor]]): on a GPU only kernels run; initialize with constants, or do the work in a "
                "kernel").format(label=label, section=sec) )
        raise CpuCompileError(_(
            "{label}: the CPU executor does not run an object file with a section named {section}: keep device code "
            "in ordinary functions and variables (no section attributes)").format(label=label, section=sec))
    resolved_at_load = sorted(n for n, kind in _defined_globals(obj, local=True).items() if kind == "i")
    if resolved_at_load:  # an indirect function: the dynamic loader runs its resolver before main
        names = _demangle(resolved_at_load)
        raise CpuCompileError(_(
            "{label}: {names} is an indirect function (ifunc), whose resolver the loader runs before any kernel: on "
            "a GPU only kernels run; call the function you mean directly").format(
                label=label, names=", ".join(f"`{n}`" for n in names)))
    allowed = _CALLS | _libm() | set(extern_shared(text))
    refused = [n for n in (r.split()[-1] for r in _tool_lines("nm", "-u", str(obj)) if r.strip())
               if n not in allowed and not n.startswith(_CALL_PREFIXES)]
    if refused:
        names = _demangle(refused)
        first = names[0].split("(")[0].rsplit("::", 1)[-1]
        raise CpuCompileError(_(
            "{label}: calls {names}{where}: a kernel on a GPU cannot call host functions (files, processes, signals, "
            "memory maps, the C++ library's I/O); the CPU executor runs device code only: compute in the kernel with "
            "the CUDA model's functions (math, memcpy/memset, printf)").format(
                label=label, names=", ".join(f"`{n}`" for n in names), where=_line_naming(text, first)))


def _defined_globals(path: Path, *, dynamic: bool = False, local: bool = False) -> dict[str, str]:
    """{symbol: nm type letter} of the global symbols ``path`` defines (``local``: and its local ones)."""
    out = {}
    for row in _tool_lines("nm", *(["-D"] if dynamic else []), "--defined-only", str(path)):
        f = row.split()
        if len(f) >= 3 and (local or f[1].isupper() or f[1] in "iuvw"):  # i: an indirect function (memcmp)
            out[f[2].split("@")[0]] = f[1]
    return out


@functools.cache
def _library_symbols(paths: tuple[str, ...]) -> frozenset[str]:
    return frozenset(n for p in paths for n in _defined_globals(Path(p), dynamic=True))


def _check_no_interposition(obj: Path, runner: Path, label: str, text: str) -> None:
    """Refuse a learner's object that defines a symbol of the runtime or of a library the runner loads: an executable's
    definition replaces the library's for every caller (the runtime's memcmp, write, operator new...), so the
    learner's code would run inside the runtime's own work, outside any kernel."""
    loaded = "\n".join(_tool_lines("ldd", str(runner)))
    libs = tuple(sorted(m.group(1) for m in re.finditer(r"=>\s+(\S+)\s+\(", loaded)))
    theirs = _library_symbols(libs)
    runtime = _defined_globals(_runtime_object())
    ours = _defined_globals(obj)
    clash = sorted(n for n, kind in ours.items() if n != "dripstone_kernels" and (
        n in theirs or (n in runtime and kind not in "uvwVW")))
    if clash:
        names = _demangle(clash)
        raise CpuCompileError(_(
            "{label}: defines {names}{where}, which the C/C++ library or the CPU executor's runtime defines too: the "
            "file's definition would replace theirs and run outside the kernel; give it another name").format(
                label=label, names=", ".join(f"`{n}`" for n in names),
                where=_line_naming(text, names[0].split("(")[0].rsplit("::", 1)[-1])))


def compile_cpu(text: str, label: str, kernels: Sequence[str]) -> Runner:
    """Compile a .cu source for the CPU executor (cached by hash); CpuCompileError names the line."""
    name = Path(label).name
    cu_source.check(text, label, cpu=True)
    # keyed by what g++ reads (the text, the file's name, the kernels), not by where the file lies: the label only
    # words messages, and a known implementation graded from a new temporary folder each time is the same build
    final = cache_root() / digest(_executor_digest(), text, name, *sorted(kernels))
    if not (final / "runner").is_file():
        runtime = _runtime_object()
        with fresh_dir(final) as tmp:
            (tmp / name).write_text(executor_text(text))
            # one line per kernel from line 2 (_struct_argument_error reads the kernel from the line): constant data
            table = "".join(f'{{"{k}", &dripstone::Kernel<&{k}>::invoke, dripstone::Kernel<&{k}>::signature}},\n'
                            for k in kernels)
            (tmp / "launch.cpp").write_text(f'#include "{name}"\nextern "C" const dripstone::Entry '
                                            f'dripstone_kernels[] = {{\n{table}{{nullptr, nullptr, nullptr}}}};\n')
            sources = ["launch.cpp"]
            dynamic = extern_shared(text)
            if dynamic:  # `extern __shared__` needs a definition elsewhere (another file: its type is ours)
                (tmp / "dynamic_shared.cpp").write_text(_dynamic_shared_file(dynamic))
                sources.append("dynamic_shared.cpp")
            # compile apart, place the shared arrays, link
            cmd = [CXX, *FLAGS, "-I", str(HERE), "-include", str(HEADER), "-x", "c++", "-c", *sources]
            done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, timeout=300)
            if done.returncode:
                raise CpuCompileError(_compile_error(done.stderr, name, label, text, kernels))
            _place_shared(tmp / "launch.o", shared_names(text), label)
            _check_object(tmp / "launch.o", label, text)
            objs = [Path(f).with_suffix(".o").name for f in sources]
            # the runtime first: where the learner's object and the runtime both instantiate a template, the
            # runtime's copy is the one kept
            cmd = [CXX, *LINK_FLAGS, str(runtime), *objs, LINK_SHARED_APART, "-o", "runner"]
            done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, timeout=300)
            if done.returncode:
                raise CpuCompileError(_compile_error(done.stderr, name, label, text, kernels))
            _check_no_interposition(tmp / "launch.o", tmp / "runner", label, text)
    final_source = final / name
    return Runner(final / "runner", final_source, label, text)


def _compile_error(log: str, name: str, label: str, text: str, kernels: Sequence[str]) -> str:
    log = log.replace(name, label)
    struct_arg = _struct_argument_error(log, label, text, kernels)
    if struct_arg:
        return struct_arg
    lines = text.splitlines()
    m = re.search(rf"^{re.escape(label)}:(\d+):\d+: error: (.*)$", log, flags=re.M)
    if m is None:
        missing = re.search(r"launch\.cpp:\d+:\d+: error: '(\w+)' was not declared", log)
        if missing and missing.group(1) in kernels:
            return (f"{label}: no kernel `{missing.group(1)}`: keep the stub's "
                    f'`extern "C" __global__ void {missing.group(1)}(...)`')
        return f"{label}: the CPU executor (g++) could not compile it:\n{log.strip()[-3000:]}"
    lineno = int(m.group(1))
    code = lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""
    return (f"{label} line {lineno}: compile error (g++, the CPU executor): {m.group(2).strip()}: `{code}`\n"
            "If NVRTC compiles this line, the executor lacks a CUDA feature: say so in the course's issues.\n"
            f"{log.strip()[-3000:]}")


def _show_printf(path: Path) -> None:
    """The kernel's ``printf`` output (its first run: thread order 0, 1, ...), printed as the learner's code
    prints: the test's output shows it, a failing test's too."""
    with contextlib.suppress(OSError):
        data = path.read_bytes()
        if data:
            text = data.decode(errors="replace")
            cut = len(data) >= PRINTF_CAP
            sys.stdout.write(text + ("" if text.endswith("\n") else "\n")
                             + ("[kernel printf output cut at 1 MiB, as a GPU's printf buffer]\n" if cut else ""))


def _param_of_type(text: str, kernel: str, type_name: str) -> tuple[int, str] | None:
    """(line, name) of the first parameter of ``kernel`` whose declared type names ``type_name``."""
    m = re.search(rf"\b{re.escape(kernel)}\s*\(", text)
    if m is None:
        return None
    depth, start, i = 0, m.end(), m.end()
    params = []
    while i < len(text):
        c = text[i]
        if c in "(<[":
            depth += 1
        elif c in ")>]" and depth:
            depth -= 1
        elif c in ",)" and not depth:
            params.append((start, text[start:i]))
            start = i + 1
            if c == ")":
                break
        i += 1
    for offset, param in params:
        words = re.findall(r"\w+", param)
        if type_name in words[:-1]:
            lead = len(param) - len(param.lstrip())
            return text.count("\n", 0, offset + lead) + 1, words[-1]
    return None


def _struct_argument_error(log: str, label: str, text: str, kernels: Sequence[str]) -> str | None:
    """A kernel parameter over 8 bytes passed by value: the line, the parameter and why (not g++'s backtrace)."""
    if "passed by value are at most 8 bytes" not in log:
        return None
    t = re.search(r"arg_of\(long long unsigned int\) \[with T = ([^\]]+)\]", log)
    at = re.search(r"launch\.cpp:(\d+):\d+:\s+required from here", log)
    size = re.search(r"\((\d+) <= 8\)", log)
    type_text = t.group(1).strip() if t else "struct"
    named = re.search(r"void \(\* F\)\(A \.\.\.\) = (\w+)", log)
    kernel = named.group(1) if named else (
        kernels[int(at.group(1)) - 3] if at and 0 <= int(at.group(1)) - 3 < len(kernels) else None)
    nbytes = f" of {size.group(1)} bytes" if size else ""
    found = _param_of_type(text, kernel, re.findall(r"\w+", type_text)[-1]) if kernel else None
    lines = text.splitlines()
    where = label
    who = f"kernel `{kernel}` takes a `{type_text}`{nbytes} by value" if kernel else \
        f"a kernel takes a `{type_text}`{nbytes} by value"
    if found:
        line, param = found
        where = f"{label} line {line}"
        who = f"kernel `{kernel}`'s parameter `{param}` is a `{type_text}`{nbytes} passed by value"
        code = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        who += f" (`{code}`)" if code else ""
    return (f"{where}: {who}: the CPU executor passes at most 8 bytes by value (the tests pass pointers, integers "
            "and floats); pass a pointer to it, or its fields as separate parameters")


def _arg_kind(a: object) -> tuple[str, int, np.ndarray | None]:
    import torch

    if isinstance(a, torch.Tensor):
        arr = a.detach().cpu().contiguous().numpy()
        return "p", arr.nbytes, arr
    if isinstance(a, np.ndarray):
        arr = np.ascontiguousarray(a)
        return "p", arr.nbytes, arr
    if isinstance(a, bool | int | np.integer):
        return "i", int(a) & (2**64 - 1), None
    if isinstance(a, float | np.floating):
        return "f", struct.unpack("<Q", struct.pack("<d", float(a)))[0], None  # float or double: the kernel decides
    raise TypeError(f"a kernel argument must be a tensor, an array, an int or a float, not {type(a).__name__}")


def _limit_s() -> int:
    from grader.core import timeout

    return math.ceil(timeout.limit_s()) or DEFAULT_LIMIT_S


# The shared-memory race a traced run located, per (runner, kernel), in this process: a later launch of the kernel whose
# thread orders disagree reports it without tracing again (the traced run stops and resumes every shared access: a
# racing C3 kernel took 5-27 s per launch, six launches per grading).
_RACES: dict[tuple[str, str], str] = {}


def launch(runner: Runner, name: str, grid: Sequence[int], block: Sequence[int], args: Sequence[object], *,
           shared_bytes: int = 0) -> None:
    """Run ``name`` on the CPU executor; tensor and array arguments get the kernel's writes, as on a GPU.

    Each thread order runs in a process of its own, told its order on its command line before any of the learner's
    code runs; this function compares their outputs (a launch process decides nothing: it holds no other order to
    skip, no comparison to rewrite). ``shared_bytes``: the launch's dynamic shared memory (``extern __shared__``)."""
    g, b = (*grid, 1, 1)[:3], (*block, 1, 1)[:3]
    seconds = _limit_s()
    request = _request(name, g, b, seconds, shared_bytes, args)
    first = _launch_once(runner, request, name, g, b, seconds, args, schedule=0)
    second = _launch_once(runner, request, name, g, b, seconds, args, schedule=1)
    differs = _first_difference(first.outputs, second.outputs)
    if differs is not None:  # the thread orders disagree: find the two lines that race
        traced_before = _RACES.get((str(runner.path), name))
        if traced_before is not None:  # traced on an earlier launch here: the same lines race (a traced run is slow)
            raise CudaFault(_("{traced}\n(This launch's thread orders disagree too; the race above was located by "
                              "tracing an earlier launch of this kernel, with the grid and block it names.)").format(
                traced=traced_before))
        traced = _launch_once(runner, request, name, g, b, seconds, args, schedule=0, trace=True, check=False)
        if traced.done.returncode == 5:
            _RACES[str(runner.path), name] = message = _fault_message(runner, name, g, b, traced.done, list(args))
            raise CudaFault(message)
        # no shared-memory race and outputs that differ by rounding only (float atomics add in thread order):
        # accepted; the parent judges the rounding on the outputs, the traced process only names the lines
        if traced.done.returncode != 0 or not _rounding_only(first.outputs, second.outputs, request[1]):
            buffer, offset = differs
            params = [i for i, a in enumerate(args) if _is_buffer(a)]
            raise CudaFault(_fault_message(runner, name, g, b, subprocess.CompletedProcess(
                [], 4, f"RACE {params[buffer]} {offset}\n", ""), list(args)))
    outs = iter(first.outputs)
    for a in args:
        if _is_buffer(a):
            _copy_back(a, next(outs))


def _request(name: str, g: tuple, b: tuple, seconds: int, shared_bytes: int,
             args: Sequence[object]) -> tuple[str, list[np.ndarray]]:
    """The launch as the runner reads it (``request``: kernel, grid, block, limit, dynamic shared memory, then one
    row per argument) and the input buffers (``in<i>.bin``)."""
    rows, buffers = [f"{name} {' '.join(map(str, g))} {' '.join(map(str, b))} {seconds} {shared_bytes}"], []
    for kind, value, arr in (_arg_kind(a) for a in args):
        rows.append(f"{kind} {value}")
        if arr is not None:
            buffers.append(arr)
    return "\n".join(rows) + "\n", buffers


@dataclass
class _Run:
    done: subprocess.CompletedProcess
    outputs: list[bytes]


def _launch_once(runner: Runner, request: tuple[str, list[np.ndarray]], name: str, g: tuple, b: tuple, seconds: int,
                 args: Sequence[object], *, schedule: int, trace: bool = False, check: bool = True) -> _Run:
    """One process, one thread order, in a folder of its own made for it (an earlier run cannot have touched it).
    ``check``: a fault raises CudaFault; so does a process that exits without every output buffer whole."""
    text, buffers = request
    with tempfile.TemporaryDirectory(prefix="dripstone-cu-") as d:
        Path(d, "request").write_text(text)
        for i, arr in enumerate(buffers):
            arr.tofile(f"{d}/in{i}.bin")
        argv = [str(runner.path), d, str(schedule), str(int(trace))]
        # the runner stops itself after `seconds` of CPU time; the wall-clock limit only backs that up
        ran = child.run_program(argv, wall_s=10 * seconds + 60, result_cap=RUNNER_OUTPUT_CAP,
                                output_cap=RUNNER_OUTPUT_CAP)
        if ran.kind == child.WALL:
            raise CudaFault(f"{name}<<<{g}, {b}>>> did not finish within {seconds} s on the CPU executor: "
                            "an endless loop?")
        done = subprocess.CompletedProcess(argv, ran.returncode, ran.result.decode(errors="replace"),
                                           ran.output.decode(errors="replace"))
        if schedule == 0 and not trace:
            _show_printf(Path(d, "printf.txt"))
        outputs = []
        for i in range(len(buffers)):
            with contextlib.suppress(OSError):
                outputs.append(Path(d, f"out{i}.bin").read_bytes())
        if not check:
            return _Run(done, outputs)
        if done.returncode:
            raise CudaFault(_fault_message(runner, name, g, b, done, list(args)))
        whole = len(outputs) == len(buffers) and all(len(o) == a.nbytes for o, a in zip(outputs, buffers, strict=True))
        if not whole or not re.search(r"^OK$", done.stdout, flags=re.M):
            raise CudaFault(f"{name}<<<grid {g}, block {b}>>> on the CPU executor: the launch process ended (exit "
                            f"status {done.returncode}) before the kernel returned and its outputs were written: "
                            "a kernel ends by returning, not by ending the process")
        return _Run(done, outputs)


ROUNDING = 1e-3  # how far two thread orders' float outputs may differ and still be one result (atomics' rounding)


def _rounding_only(first: list[bytes], second: list[bytes], buffers: list[np.ndarray]) -> bool:
    """Whether two runs' outputs differ only as float sums added in another order do: integer buffers equal, float
    buffers with the same NaNs and infinities and each element within ROUNDING of the larger magnitude (or of a
    thousandth of the buffer's largest)."""
    for x, y, arr in zip(first, second, buffers, strict=True):
        if x == y:
            continue
        if arr.dtype.kind != "f":
            return False
        a = np.frombuffer(x, arr.dtype).astype(np.float64)
        b = np.frombuffer(y, arr.dtype).astype(np.float64)
        finite = np.isfinite(a)
        if not np.array_equal(finite, np.isfinite(b)) or not np.array_equal(a[~finite], b[~finite], equal_nan=True):
            return False
        a, b = a[finite], b[finite]
        scale = max(float(np.abs(a).max(initial=0.0)), float(np.abs(b).max(initial=0.0)))
        if np.any(np.abs(a - b) > ROUNDING * (np.maximum(np.abs(a), np.abs(b)) + 1e-3 * scale)):
            return False
    return True


def _first_difference(first: list[bytes], second: list[bytes]) -> tuple[int, int] | None:
    """(buffer, byte offset) of the first byte where two runs' outputs differ, or None."""
    for p, (x, y) in enumerate(zip(first, second, strict=True)):
        if x != y:
            a, c = np.frombuffer(x, np.uint8), np.frombuffer(y, np.uint8)
            return p, int(np.flatnonzero(a != c)[0])
    return None


@dataclass(frozen=True)
class LineConflicts:
    """The shared-memory reads (or writes) of one kernel line to one ``__shared__`` array, over one launch."""

    line: int
    kind: str  # "read" or "write"
    degree: int  # the worst warp request: the most distinct 4-byte words one bank served (1 = conflict-free)
    count: int  # warp requests with a conflict (degree > 1)
    requests: int  # warp requests at this line
    wavefronts: int  # sum of the requests' degrees (per phase for 8- and 16-byte accesses)
    arrays: tuple[str, ...]  # the __shared__ arrays it touched
    text: str = ""

    def describe(self) -> str:
        where = f"line {self.line}" if self.line else "the executor's header"
        code = f" `{self.text}`" if self.text else ""
        arrays = f" [{', '.join(self.arrays)}]" if self.arrays else ""
        verdict = (f"{self.degree}-way conflict in {self.count} of {self.requests} warp requests" if self.degree > 1
                   else f"conflict-free ({self.requests} warp requests)")
        return f"{where}{code}: {self.kind}s{arrays}: {verdict}"


@dataclass
class BankConflicts:
    """Shared-memory bank conflicts of one launch, per kernel line (see the module's docstring for the model)."""

    kernel: str
    lines: list[LineConflicts] = field(default_factory=list)

    @property
    def degree(self) -> int:
        """The worst request's degree over every line (0: no shared access)."""
        return max((c.degree for c in self.lines), default=0)

    def touching(self, array: str, kind: str | None = None) -> list[LineConflicts]:
        """The lines whose accesses touched the ``__shared__`` array named ``array`` (reads or writes if ``kind``)."""
        return [c for c in self.lines if array in c.arrays and kind in (None, c.kind)]

    def conflicted(self) -> list[LineConflicts]:
        return [c for c in self.lines if c.degree > 1]

    def summary(self) -> str:
        """One line per kernel line that touches shared memory: its worst degree, how many requests conflict."""
        if not self.lines:
            return f"{self.kernel}: no shared-memory access"
        return f"{self.kernel}, shared memory per line:\n" + "\n".join("  " + c.describe() for c in self.lines)

    def as_dict(self) -> dict[str, object]:
        """Plain data (for results): ``{"kernel": ..., "lines": [{"line", "kind", "degree", "count", ...}]}``."""
        return {"kernel": self.kernel, "lines": [
            {"line": c.line, "kind": c.kind, "degree": c.degree, "count": c.count, "requests": c.requests,
             "wavefronts": c.wavefronts, "arrays": list(c.arrays), "text": c.text} for c in self.lines]}

    @classmethod
    def from_dict(cls, data: dict) -> BankConflicts:
        """Back from :meth:`as_dict` (what a check run beside the learner's code returns)."""
        return cls(str(data["kernel"]), [LineConflicts(int(c["line"]), str(c["kind"]), int(c["degree"]),
                                                       int(c["count"]), int(c["requests"]), int(c["wavefronts"]),
                                                       tuple(map(str, c["arrays"])), str(c.get("text", "")))
                                         for c in data["lines"]])


def _is_buffer(a: object) -> bool:
    import torch

    return isinstance(a, torch.Tensor | np.ndarray)


def _copy_back(a: object, data: bytes) -> None:
    import torch

    if isinstance(a, torch.Tensor):
        host = np.frombuffer(data, dtype=a.detach().cpu().numpy().dtype).reshape(tuple(a.shape))
        with torch.no_grad():
            a.copy_(torch.from_numpy(host.copy()))
    else:
        host = np.frombuffer(data, dtype=a.dtype).reshape(a.shape)
        np.copyto(a, host)


# x86-64 system call numbers a refused call is most likely to be (the launch's SIGSYS reports the number)
_SYSCALLS = {0: "read", 1: "write", 2: "open", 3: "close", 4: "stat", 5: "fstat", 8: "lseek", 9: "mmap",
             10: "mprotect", 11: "munmap", 13: "rt_sigaction", 14: "rt_sigprocmask", 16: "ioctl", 17: "pread64",
             18: "pwrite64", 25: "mremap", 28: "madvise", 32: "dup", 33: "dup2", 37: "alarm", 38: "setitimer",
             41: "socket", 42: "connect", 56: "clone", 57: "fork", 58: "vfork", 59: "execve", 62: "kill",
             82: "rename", 87: "unlink", 89: "readlink", 101: "ptrace", 157: "prctl", 200: "tkill",
             222: "timer_create", 234: "tgkill", 257: "openat", 262: "newfstatat", 263: "unlinkat", 310:
             "process_vm_readv", 311: "process_vm_writev", 317: "seccomp", 322: "execveat", 435: "clone3"}


def _fault_message(runner: Runner, name: str, g: tuple, b: tuple, done: subprocess.CompletedProcess,
                   args: list[object]) -> str:
    params = runner.params(name)

    def param(m: re.Match) -> str:
        i = int(m.group(1))
        return f"`{params[i]}` (parameter {i})" if i < len(params) else m.group()

    text = re.sub(r"parameter #(\d+)", param, _fault_text(runner, name, g, b, done, args))
    return text


def _fault_text(runner: Runner, name: str, g: tuple, b: tuple, done: subprocess.CompletedProcess,
                args: list[object]) -> str:
    launch = f"{name}<<<grid {g}, block {b}>>>"
    out, err = done.stdout, done.stderr
    m = re.search(r"^FAULT (\w+) (pc=0x[0-9a-f]+|-?\d+) (.*)$", out, flags=re.M)
    if m:
        kind, where, msg = m.groups()
        if where.startswith("pc="):
            lines = runner.lines_of_pc(int(where[3:], 16))
            place = runner.at(lines[0]) if lines else f"{runner.label} (line unknown)"
        else:
            place = runner.at(int(where)) if int(where) > 0 else runner.label
        if kind == "syscall":
            number = int(msg.split()[0]) if msg.split() and msg.split()[0].isdigit() else -1
            call = _SYSCALLS.get(number, f"number {number}")
            return _("{launch} on the CPU executor: a system call ({call}) at {place}: a kernel on a GPU has no files, "
                     "processes, signals or memory maps, and the CPU executor's launch process refuses every system "
                     "call but writing what it opened for the launch and growing memory: compute in the kernel, "
                     "with the CUDA model's functions").format(launch=launch, call=call, place=place)
        cause = {"memory": "out-of-bounds access", "timeout": "a kernel that never returns",
                 "divergence": "divergence", "warp": "warp primitive misuse", "trap": "trap",
                 "launcher": "launch", "resources": "resources", "deadlock": "deadlock"}.get(kind, kind)
        return f"{launch} on the CPU executor: {cause} at {place}: {msg}"
    m = re.search(r"^RACEAT 0x([0-9a-f]+) (\w+) 0x([0-9a-f]+) (\w+) (.*)\|(.*)$", out, flags=re.M)
    if m:
        first, second = (runner.lines_of_pc(int(m.group(i), 16)) for i in (1, 3))
        where = [runner.at(x[0]) if x else f"{runner.label} (line unknown)" for x in (first, second)]
        return (f"{launch} on the CPU executor: race on shared memory: {m.group(5)} {m.group(2)} a word at "
                f"{where[0]}, then {m.group(6)} {m.group(4)} it at {where[1]}, with no __syncthreads() between "
                "them: the result depends on which thread runs first (a missing barrier)")
    m = re.search(r"^RACE (\d+) (\d+)$", out, flags=re.M)
    if m:
        return _race_message(runner, launch, int(m.group(1)), int(m.group(2)), args)
    m = re.search(rf"{re.escape(runner.source_path.name)}:(\d+):\d+: runtime error: (.*)", err)
    if m:
        line = int(m.group(1))
        return (f"{launch} on the CPU executor: out-of-bounds access at {runner.at(line)}: {m.group(2).strip()} "
                "(a __shared__ or local array indexed past its size)")
    return f"{launch} on the CPU executor failed (exit status {done.returncode}):\n{(out + err).strip()[-2000:]}"


def _race_message(runner: Runner, launch: str, buffer: int, offset: int, args: list[object]) -> str:
    arr = _arg_kind(args[buffer])[2]
    index = np.unravel_index(offset // max(arr.itemsize, 1), arr.shape) if arr is not None and arr.size else ()
    barriers = sorted({i + 1 for i, t in enumerate(runner.lines) if "__syncthreads" in t and
                       not t.strip().startswith("//")})
    where = ", ".join(map(str, barriers)) if barriers else "none"
    return (f"{launch} on the CPU executor: race: the result depends on the order in which the threads run "
            f"(parameter #{buffer} differs at element {tuple(map(int, index))} between thread orders "
            "0, 1, 2, ... and ..., 2, 1, 0): a thread reads shared memory that another thread writes, or "
            "overwrites it while another still reads, with no __syncthreads() between them "
            f"(__syncthreads() lines in {runner.label}: {where})")


# ---- make gpu-check: the CPU executor's verdicts against the GPU's, for every .cu file ----------------------

FORCE_ENV = "DRIPSTONE_CUDA_EXECUTOR"  # "cpu": .cu correctness tests use the CPU executor even on a GPU
