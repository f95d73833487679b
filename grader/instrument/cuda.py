"""CUDA exercises without a GPU: numba's CUDA simulator, and CUDA C++ compiled by NVRTC.

Two kinds of CUDA exercise, two CPU tiers, one GPU tier:

* **numba.cuda kernels** (``<module>.py``) run in numba's CUDA simulator on CPU
  (``NUMBA_ENABLE_CUDASIM=1``, set by the plugin before numba is imported). The simulator runs every
  thread as a Python thread (its block scheduler is replaced by an event-driven one, :func:`_event_driven_blocks`:
  numba's polls every thread in a loop that holds the GIL; tests still keep to a few blocks). Here its
  memory accesses are traced (:func:`sim_traffic`): global bytes, the 32-byte sectors each warp
  request touches (coalescing) and the shared-memory bank conflicts of each warp request, grouped
  by the k-th access of each lane of a warp (exact for the non-divergent code these lessons teach).
  The trace also refuses a negative index (the simulator lets ``a[-1]`` wrap around) and poisons
  fresh shared memory with NaN so that reading it before it is written shows. The simulator has no
  warp shuffles: shuffle exercises are CUDA C++.
* **CUDA C++ kernels** (``<module>.cu``, ``extern "C" __global__``) are compiled by NVRTC from PyPI
  (:func:`compile_cu`, no GPU needed, ~0.1 s): a compile error names the learner's file and line;
  ptxas' verbose report gives registers, shared memory, stack and spills per kernel, and the PTX
  shows what the kernel does (``shfl.sync``, ``ld.shared``, ``ld.global.v4``). Tests hold those
  against what the lesson teaches (efficiency tier). Running them (correctness, gpu_perf) needs a
  device (:func:`launch`), or for correctness the CPU executor (:func:`run_kernel`, grader.instrument.cuda_cpu).
  Their shared-memory bank conflicts per line (:func:`bank_conflicts`) are counted by interpreting NVRTC's PTX
  (grader.instrument.ptx), whose outputs must match the executor's.

A stub's unwritten region is ``DRIPSTONE_TODO("TODO: ...");`` (a macro that traps if launched, so the
stub compiles): :meth:`CudaSource.require_done` turns it into NotImplementedError for the tests of
the functions that still hold one.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import math
import os
import re
import sys
import threading
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from grader.core import target
from grader.core.target import SubmissionError
from grader.i18n import _
from grader.instrument import cu_source

SIM_ENV = "NUMBA_ENABLE_CUDASIM"
TODO_MACRO = "DRIPSTONE_TODO"
ARCH = "sm_90"  # H100/H200; ptxas reports are for this architecture unless a test asks for another
SECTOR_BYTES = 32
N_BANKS, BANK_BYTES, WARP = 32, 4, 32


# ---------------------------------------------------------------------------------------------
# CUDA C++ through NVRTC
# ---------------------------------------------------------------------------------------------


class CudaCompileError(SubmissionError):
    """NVRTC rejected the learner's .cu file."""


@dataclass(frozen=True)
class KernelResources:
    """What ptxas reports for one kernel."""

    name: str
    registers: int
    smem_bytes: int
    stack_bytes: int
    spill_stores: int
    spill_loads: int

    def summary(self) -> str:
        return (
            f"{self.name}: {self.registers} registers, {self.smem_bytes} B smem, {self.stack_bytes} B stack, "
            f"{self.spill_stores} B spill stores, {self.spill_loads} B spill loads"
        )


@dataclass(frozen=True)
class CompiledCu:
    """One compiled .cu file: PTX, cubin, the compiler's log and per-kernel resources."""

    label: str
    arch: str
    ptx: str
    cubin: bytes
    log: str
    resources: dict[str, KernelResources]

    def kernel(self, name: str) -> KernelResources:
        """ptxas' report for kernel ``name``, or a SubmissionError saying how to declare it."""
        if name not in self.resources:
            found = ", ".join(sorted(self.resources)) or "none"
            raise SubmissionError(
                f"{self.label}: no kernel `{name}` (found: {found}); keep the stub's "
                f'`extern "C" __global__ void {name}(...)`'
            )
        return self.resources[name]

    def ptx_of(self, name: str) -> str:
        """The PTX of kernel ``name``: from its ``.entry`` to the next one."""
        self.kernel(name)
        m = re.search(rf"\.entry\s+{re.escape(name)}\s*\(", self.ptx)
        if m is None:
            raise SubmissionError(f"{self.label}: kernel `{name}` is not in the PTX")
        nxt = re.search(r"\.(entry|func)\s", self.ptx[m.end() :])
        return self.ptx[m.start() : m.end() + nxt.start()] if nxt else self.ptx[m.start() :]


_RESOURCE_RE = re.compile(
    r"Function properties for (?P<name>\S+)\s*\n.*?(?P<stack>\d+) bytes stack frame, (?P<ss>\d+) bytes spill stores, "
    r"(?P<sl>\d+) bytes spill loads\s*\n.*?Used (?P<regs>\d+) registers(?:.*?(?P<smem>\d+) bytes smem)?",
)


def parse_ptxas(log: str) -> dict[str, KernelResources]:
    """Per-kernel resources from ``--ptxas-options=--verbose`` output."""
    out = {}
    for m in _RESOURCE_RE.finditer(log):
        out[m["name"]] = KernelResources(
            m["name"], int(m["regs"]), int(m["smem"] or 0), int(m["stack"]), int(m["ss"]), int(m["sl"])
        )
    return out


@functools.cache
def _include_dirs() -> tuple[str, ...]:
    """CUDA headers from the nvidia-cuda-runtime wheel (cuda_fp16.h and friends)."""
    try:
        import nvidia
    except ImportError:
        return ()
    return tuple(str(p) for base in nvidia.__path__ for p in sorted(Path(base).glob("cu*/include")))


def _nvrtc_check(result, what: str) -> None:
    from cuda.bindings import nvrtc

    err = result[0] if isinstance(result, tuple) else result
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"NVRTC {what} failed: {err}")


def _nvrtc_bytes(prog, size_fn, get_fn) -> bytes:
    result = size_fn(prog)
    _nvrtc_check(result, size_fn.__name__)
    buf = b" " * result[1]
    _nvrtc_check(get_fn(prog, buf), get_fn.__name__)
    return buf.rstrip(b"\x00")


def compile_cu(source: str, label: str, *, arch: str = ARCH, options: Sequence[str] = ()) -> CompiledCu:
    """Compile CUDA C++ with NVRTC to PTX and a cubin for ``arch``; CudaCompileError on errors."""
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:  # the pinned environment has it: a broken environment, not the learner
        raise RuntimeError("cuda-bindings is not installed: run `make env`") from exc
    result = nvrtc.nvrtcCreateProgram(source.encode(), label.encode(), 0, [], [])
    _nvrtc_check(result, "nvrtcCreateProgram")
    prog = result[1]
    opts = [f"--gpu-architecture={arch}", "--ptxas-options=--verbose", "--std=c++17", *options]
    opts += [f"--include-path={d}" for d in _include_dirs()]
    try:
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
        log = _nvrtc_bytes(prog, nvrtc.nvrtcGetProgramLogSize, nvrtc.nvrtcGetProgramLog).decode(errors="replace")
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise CudaCompileError(_compile_error(log, label, source))
        ptx = _nvrtc_bytes(prog, nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX).decode()
        cubin = _nvrtc_bytes(prog, nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return CompiledCu(label, arch, ptx, cubin, log, parse_ptxas(log))


def _compile_error(log: str, label: str, source: str) -> str:
    """``file.cu line 12: error: ... | `the line` `` for the first error, then the count."""
    lines = source.splitlines()
    errors = re.findall(rf"^{re.escape(label)}\((\d+)\): (?:catastrophic )?error: (.*)$", log, flags=re.M)
    if not errors:
        return f"{label}: NVRTC could not compile it:\n{log.strip()}"
    lineno, msg = int(errors[0][0]), errors[0][1].strip()
    text = lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""
    more = f" (and {len(errors) - 1} more error(s))" if len(errors) > 1 else ""
    return f"{label} line {lineno}: compile error: {msg}: `{text}`{more}\n{log.strip()}"


# Every compile of a learner's file keeps line info: the bank-conflict count maps PTX to source lines, and the
# opcode and resource checks read the same compile (line info changes neither, measured on the course's kernels:
# ptxas' resources and the instructions alike; it adds only the debug sections) at the cost of one NVRTC run.
LINE_INFO = "--generate-line-info"


@dataclass(frozen=True)
class CudaSource:
    """A learner's .cu file as text, with what the stub left to do."""

    path: Path
    label: str
    text: str

    def function_body(self, name: str) -> tuple[int, str] | None:
        """(first line number, text) of the definition of function ``name``, braces matched."""
        m = re.search(rf"\b{re.escape(name)}\s*\([^;{{]*\)\s*\{{", self.text)
        if m is None:
            return None
        depth, i = 0, m.end() - 1
        for i in range(m.end() - 1, len(self.text)):
            depth += {"{": 1, "}": -1}.get(self.text[i], 0)
            if depth == 0:
                break
        return self.text.count("\n", 0, m.start()) + 1, self.text[m.start() : i + 1]

    def require_done(self, *functions: str) -> None:
        """NotImplementedError("TODO: ...") if a named function still holds the stub's TODO macro."""
        for name in functions:
            found = self.function_body(name)
            if found is None:
                continue  # compile/resource checks say the kernel is missing
            first, body = found
            m = re.search(rf'{TODO_MACRO}\(\s*"((?:[^"\\]|\\.)*)"\s*\)', body)
            if m:
                line = first + body.count("\n", 0, m.start())
                raise NotImplementedError(f"{m.group(1)} ({self.label} line {line}, in `{name}`)")

    def compile(self, *, arch: str = ARCH, options: Sequence[str] = ()) -> CompiledCu:
        """NVRTC's compile of the text the CPU executor compiles too: the same preprocessing (grader.instrument.
        cu_source refuses what would tell the compilers apart; NVRTC gets the project's macros as g++ does)."""
        cu_source.check(self.text, self.label)
        options = tuple(dict.fromkeys((LINE_INFO, *options)))  # one compile for every check of one file
        return _compile_cached(cu_source.for_nvrtc(self.text), self.label, arch, options)


@functools.lru_cache(maxsize=64)
def _compile_cached(text: str, label: str, arch: str, options: tuple[str, ...]) -> CompiledCu:
    return compile_cu(text, label, arch=arch, options=options)


def load_cu(unit: str, module: str) -> CudaSource:
    """The target's ``<unit>/<module>.cu``, or SubmissionError saying how to restore it."""
    root = target.target_root()
    path = root / unit / f"{module}.cu"
    label = f"{target.display_path(root)}/{unit}/{module}.cu"
    if not path.is_file():
        raise SubmissionError(f"{label} not found: restore it from exercises/ (git checkout -- {label})")
    return CudaSource(path, label, path.read_text())


def compile_learner(unit: str, module: str, *functions: str, options: Sequence[str] = ()) -> CompiledCu:
    """Load, check the named functions are written, compile: what an NVRTC-tier test starts with."""
    src = load_cu(unit, module)
    src.require_done(*functions)
    return src.compile(options=options)


def ptx_instructions(ptx: str, opcode_prefix: str) -> list[str]:
    """The PTX instructions of a kernel whose opcode starts with ``opcode_prefix`` (e.g. ``shfl.sync``)."""
    pat = re.compile(rf"^\s*(?:@!?%p\d+\s+)?({re.escape(opcode_prefix)}[\w.]*)", re.M)
    return pat.findall(ptx)


# ---- running compiled kernels on a GPU (correctness and gpu_perf of .cu exercises) ------------


def require_device() -> None:
    """Skip as "pending GPU" (neither 0 nor a pass) where no CUDA device can run a compiled kernel."""
    import pytest

    from grader.instrument import device as dev

    if not dev.gpu_available():
        pytest.skip(
            f"{dev.PENDING_GPU}: this test runs the compiled CUDA C++ kernel on a GPU; its NVRTC checks ran here"
        )


def kernel_device() -> str:
    """Where a .cu correctness test runs its kernels: ``"cuda"`` on a GPU, else ``"cpu"`` (the CPU executor).

    Without a GPU nor the executor's compiler (g++ on x86-64 Linux) the test is "pending GPU".
    """
    import pytest

    from grader.instrument import cuda_cpu
    from grader.instrument import device as dev

    forced = os.environ.get(cuda_cpu.FORCE_ENV)  # make gpu-check grades each .cu file both ways
    device = "cuda" if dev.gpu_available() and not dev.dry_run() and forced != "cpu" else "cpu"
    if device == "cpu" and not cuda_cpu.available():
        pytest.skip(f"{dev.PENDING_GPU}: this test runs the CUDA C++ kernel on a GPU, or on the CPU executor, "
                    "which needs g++ on x86-64 Linux; its NVRTC checks ran here")
    _executors.append(GPU_EXECUTOR if device == "cuda" else cuda_cpu.EXECUTOR)
    return device


GPU_EXECUTOR = "GPU"
_executors: list[str] = []  # what ran this test's .cu kernels (the plugin takes it for the scoreboard)


def take_executors() -> str:
    """The executors the current test's .cu kernels ran on ("" if none), and forget them."""
    names = ", ".join(dict.fromkeys(_executors))
    _executors.clear()
    return names


def run_kernel(source: CudaSource, name: str, grid: tuple[int, ...], block: tuple[int, ...],
               args: Sequence[object], *, device: str, shared_bytes: int = 0) -> None:
    """Launch kernel ``name`` of ``source`` on ``device`` (from :func:`kernel_device`): compiled by NVRTC
    for this GPU, or by g++ for the CPU executor (tensors in ``args`` get the kernel's writes either way)."""
    if device == "cuda":
        launch(source.compile(arch=device_arch()), name, grid, block, args, shared_bytes=shared_bytes)
        return
    from grader.instrument import cuda_cpu

    names = re.findall(r'extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(', source.text)
    runner = cuda_cpu.compile_cpu(source.text, source.label, sorted({*names, name}))
    cuda_cpu.launch(runner, name, grid, block, args, shared_bytes=shared_bytes)


def bank_report(data: dict):
    """A :class:`grader.instrument.cuda_cpu.BankConflicts` back from its ``as_dict()`` (an on_device check's answer)."""
    from grader.instrument import cuda_cpu

    return cuda_cpu.BankConflicts.from_dict(data)


def can_count_banks() -> bool:
    """Whether :func:`bank_conflicts` can run here (the CPU executor's g++ on x86-64 Linux)."""
    from grader.instrument import cuda_cpu

    return cuda_cpu.available()


def bank_conflicts(source: CudaSource, name: str, grid: tuple[int, ...], block: tuple[int, ...],
                   args: Sequence[object], *, shared_bytes: int = 0):
    """The shared-memory bank conflicts of one launch of kernel ``name``, per line of ``source``
    (:class:`grader.instrument.cuda_cpu.BankConflicts`), on host copies of ``args``, which are not written back.

    Counted by the judge's own code, never by the learner's (THREAT_MODEL.md R3.1): NVRTC compiles the source to PTX
    (with line info) and :mod:`grader.instrument.ptx` interprets that launch, reading the PTX as data; the launch is
    held against the CPU executor's (:func:`same_kernel`), so the count is of the kernel whose results are checked."""
    from grader.instrument import ptx

    _executor_or_pending("counting bank conflicts")
    compiled = source.compile()  # with line info (LINE_INFO), as every PTX check of the file
    banks, interpreted = ptx.bank_conflicts(compiled.ptx, source.label, source.text, name, grid, block,
                                            _host_copies(args), shared_bytes=shared_bytes)
    _hold(source, name, grid, block, args, interpreted, shared_bytes)
    return banks


def same_kernel(source: CudaSource, name: str, grid: tuple[int, ...], block: tuple[int, ...],
                args: Sequence[object], *, shared_bytes: int = 0) -> None:
    """SubmissionError unless the kernel NVRTC reads from ``source`` (the one the PTX checks grade, and the one a GPU
    runs) computes, on host copies of ``args``, what the CPU executor's reading computes (float rounding apart).

    NVRTC's PTX is interpreted by the judge's own code (:mod:`grader.instrument.ptx`); the executor launches the g++
    build. A file whose two readings differ (a type trait the compilers declare differently, behind `if constexpr`)
    is refused, naming the parameter and element. Where the g++ build races or faults on these inputs there is no
    result to hold the PTX against: nothing is said here (the correctness tests report the fault). Call it from a
    correctness test of every kernel whose PTX an efficiency test grades, on one small launch (on the device's side:
    ``on_device(check, device="cpu")``)."""
    from grader.instrument import ptx

    _executor_or_pending("holding NVRTC's reading of the kernel against the CPU executor's")
    compiled = source.compile()
    interpreted = ptx.interpret(compiled.ptx, source.label, name, grid, block, _host_copies(args),
                                shared_bytes=shared_bytes).buffers
    _hold(source, name, grid, block, args, interpreted, shared_bytes)


def _executor_or_pending(what: str) -> None:
    from grader.instrument import cuda_cpu

    if not cuda_cpu.available():
        import pytest

        from grader.instrument import device as dev

        pytest.skip(f"{dev.PENDING_GPU}: {what} needs the CPU executor (g++ on x86-64 Linux)")


def _host_copies(args: Sequence[object]) -> list[object]:
    return [np.array(a.detach().cpu().numpy(), copy=True) if hasattr(a, "detach") else
            np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]


def _hold(source: CudaSource, name: str, grid: tuple[int, ...], block: tuple[int, ...], args: Sequence[object],
          interpreted: Sequence[np.ndarray], shared_bytes: int) -> None:
    """The interpreted outputs against the CPU executor's launch of the same inputs: SubmissionError where they
    differ beyond rounding (nothing where the g++ build faults or races: no reference)."""
    from grader.instrument import cuda_cpu, ptx

    executed = _host_copies(args)
    names = re.findall(r'extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(', source.text)
    runner = cuda_cpu.compile_cpu(source.text, source.label, sorted({*names, name}))
    try:
        cuda_cpu.launch(runner, name, grid, block, executed, shared_bytes=shared_bytes)
    except cuda_cpu.CudaFault:
        return  # a race or a fault of the g++ build on these inputs: the correctness tests report it
    differs = ptx.first_difference(interpreted, [a for a in executed if isinstance(a, np.ndarray)])
    if differs is not None:
        buffer, index = differs
        params = runner.params(name)
        which = [i for i, a in enumerate(executed) if isinstance(a, np.ndarray)][buffer]
        param = params[which] if which < len(params) else f"#{which}"
        got = interpreted[buffer].reshape(-1)[index]
        want = [a for a in executed if isinstance(a, np.ndarray)][buffer].reshape(-1)[index]
        raise SubmissionError(_(
            "{label}: the kernel {name} that NVRTC compiled (the one the PTX checks grade and a GPU runs) and the one "
            "g++ compiled (whose results are checked here) compute different results: `{param}` element {index} is "
            "{got} in the first, {want} in the second. Both compilers must read the same kernel: remove what tells "
            "them apart").format(label=source.label, name=name, param=param, index=index, got=got, want=want))


def device_arch() -> str:
    """``sm_90`` for the current CUDA device."""
    import torch

    major, minor = torch.cuda.get_device_capability()
    return f"sm_{major}{minor}"


def _drv(result, what: str):
    from cuda.bindings import driver

    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA driver {what} failed: {err}")
    return rest[0] if len(rest) == 1 else rest


_modules: dict[int, object] = {}


def launch(
    compiled: CompiledCu,
    name: str,
    grid: tuple[int, ...],
    block: tuple[int, ...],
    args: Sequence[object],
    *,
    shared_bytes: int = 0,
) -> None:
    """Launch ``name`` on torch's current stream; tensors pass as pointers, ints as int32, floats as float32."""
    import torch
    from cuda.bindings import driver

    torch.cuda.init()
    torch.empty(1, device="cuda")  # makes torch's primary context current on this thread
    key = id(compiled)
    if key not in _modules:
        _modules[key] = _drv(driver.cuModuleLoadData(compiled.cubin), "cuModuleLoadData")
    fn = _drv(driver.cuModuleGetFunction(_modules[key], name.encode()), "cuModuleGetFunction")
    values, types = [], []
    for a in args:
        if isinstance(a, torch.Tensor):
            values.append(a.data_ptr())
            types.append(ctypes.c_void_p)
        elif isinstance(a, int):
            values.append(a)
            types.append(ctypes.c_int)
        else:
            values.append(float(a))
            types.append(ctypes.c_float)
    g, b = (*grid, 1, 1)[:3], (*block, 1, 1)[:3]
    stream = driver.CUstream(torch.cuda.current_stream().cuda_stream)
    _drv(driver.cuLaunchKernel(fn, *g, *b, shared_bytes, stream, (tuple(values), tuple(types)), 0), "cuLaunchKernel")


# ---------------------------------------------------------------------------------------------
# numba.cuda kernels in the simulator
# ---------------------------------------------------------------------------------------------


def sim_cuda():
    """``numba.cuda`` in simulator mode; RuntimeError if numba was imported without it."""
    if os.environ.get(SIM_ENV) != "1" and "numba" not in sys.modules:
        os.environ[SIM_ENV] = "1"
    from numba import config, cuda

    if not config.ENABLE_CUDASIM:
        raise RuntimeError(f"numba was imported before {SIM_ENV}=1 was set: grade through the plugin")
    _install_sim_hooks()
    return cuda


@dataclass
class SimTraffic:
    """What the simulated kernels launched inside one :func:`sim_traffic` block did."""

    launches: int = 0
    blocks: int = 0
    threads_per_block: list[int] = field(default_factory=list)
    bytes_loaded: int = 0
    bytes_stored: int = 0
    load_requests: int = 0  # warp-level global loads
    load_sectors: int = 0  # distinct 32-byte sectors over those requests
    store_requests: int = 0
    store_sectors: int = 0
    shared_requests: int = 0  # warp-level shared-memory accesses
    shared_wavefronts: int = 0  # sum over requests of the bank-conflict degree (1 = conflict-free)
    max_conflict_degree: int = 0
    stored_addresses: set[int] = field(default_factory=set)
    _events: list[tuple] = field(default_factory=list, repr=False)

    def summary(self) -> str:
        return (
            f"{self.launches} launch(es), {self.blocks} block(s); global: {self.bytes_loaded:,} B loaded in "
            f"{self.load_sectors:,} sectors / {self.load_requests:,} warp requests, {self.bytes_stored:,} B "
            f"stored in {self.store_sectors:,} sectors / {self.store_requests:,} requests; shared: "
            f"{self.shared_wavefronts:,} wavefronts / {self.shared_requests:,} requests "
            f"(worst {self.max_conflict_degree}-way conflict)"
        )

    def _finish(self) -> None:
        groups: dict[tuple, set[int]] = defaultdict(set)
        for space, kind, block, warp, seq, base, offset, nbytes in self._events:
            groups[(space, kind, block, warp, seq)].add((base, offset))
            if space == "global" and kind == "store":
                self.stored_addresses.update(range(base + offset, base + offset + nbytes))
        for (space, kind, *_key), addrs in groups.items():
            if space == "global":
                # cudaMalloc aligns allocations to 256 B: sectors count from the array's start
                sectors = len({(base, off // SECTOR_BYTES) for base, off in addrs})
                if kind == "load":
                    self.load_requests, self.load_sectors = self.load_requests + 1, self.load_sectors + sectors
                else:
                    self.store_requests, self.store_sectors = self.store_requests + 1, self.store_sectors + sectors
            else:
                degree = bank_conflict_degree_of({off for _, off in addrs})
                self.shared_requests += 1
                self.shared_wavefronts += degree
                self.max_conflict_degree = max(self.max_conflict_degree, degree)
        self._events.clear()


def bank_conflict_degree_of(byte_addresses: set[int]) -> int:
    """Most distinct 4-byte words one bank serves for one warp request (same word twice is a broadcast)."""
    per_bank: dict[int, set[int]] = defaultdict(set)
    for a in byte_addresses:
        word = a // BANK_BYTES
        per_bank[word % N_BANKS].add(word)
    return max((len(w) for w in per_bank.values()), default=0)


_sim_counters: list[SimTraffic] = []
_launch_id = 0  # launches run one after another: events of different launches never form one request


@contextlib.contextmanager
def sim_traffic() -> Iterator[SimTraffic]:
    """Trace every global and shared access of the simulated kernels launched in this block."""
    sim_cuda()
    t = SimTraffic()
    _sim_counters.append(t)
    try:
        yield t
    finally:
        _sim_counters.remove(t)
        t._finish()


def _record(space: str, kind: str, where: tuple[int, int], nbytes: int) -> None:
    if not _sim_counters:
        return
    th = threading.current_thread()
    tid = getattr(th, "thread_id", None)
    if tid is None:  # host code touching a device array: not a kernel access
        return
    seqs = th.__dict__.setdefault("_dripstone_seq", defaultdict(int))
    seq = seqs[(space, kind)]
    seqs[(space, kind)] = seq + 1
    event = (space, kind, (_launch_id, *th.blockIdx), tid // WARP, seq, *where, nbytes)
    for t in _sim_counters:
        t._events.append(event)
        if space == "global":
            if kind == "load":
                t.bytes_loaded += nbytes
            else:
                t.bytes_stored += nbytes


def _element_address(ary: np.ndarray, idx) -> tuple[int, int] | None:
    """(array start, byte offset) of ``ary[idx]`` for a full integer index; None for slices and fields."""
    idx = idx if isinstance(idx, tuple) else (idx,)
    if len(idx) != ary.ndim or not all(isinstance(i, int | np.integer) for i in idx):
        return None
    for i, n in zip(idx, ary.shape, strict=True):
        if i < 0:
            raise IndexError(
                f"index {tuple(map(int, idx))} is negative: on a GPU it reads before the array "
                "(the simulator would wrap around); check your index arithmetic"
            )
        if i >= n:
            raise IndexError(f"index {tuple(map(int, idx))} is out of bounds for shape {ary.shape}")
    return ary.__array_interface__["data"][0], sum(int(i) * s for i, s in zip(idx, ary.strides, strict=True))


class _SharedArray(np.ndarray):
    """A shared-memory array of the simulator whose element accesses are traced."""

    def __getitem__(self, idx):
        addr = _element_address(self, idx)
        if addr is not None:
            _record("shared", "load", addr, self.itemsize)
        return super().__getitem__(idx)

    def __setitem__(self, idx, value):
        addr = _element_address(self, idx)
        if addr is not None:
            _record("shared", "store", addr, self.itemsize)
        super().__setitem__(idx, value)


_sim_installed = False


def _install_sim_hooks() -> None:
    """Trace the simulator's global arrays, shared arrays and launches (once per process)."""
    global _sim_installed
    if _sim_installed:
        return
    from numba.cuda.simulator import kernel, kernelapi
    from numba.cuda.simulator.cudadrv import devicearray

    within = devicearray.FakeWithinKernelCUDAArray
    getitem, setitem = within.__getitem__, within.__setitem__

    def traced_getitem(self, idx):
        ary = self._item._ary
        addr = _element_address(ary, idx)
        if addr is not None:
            _record("global", "load", addr, ary.itemsize)
        with _through_argument():
            return getitem(self, idx)

    def traced_setitem(self, idx, val):
        ary = self._item._ary
        addr = _element_address(ary, idx)
        if addr is not None:
            _record("global", "store", addr, ary.itemsize)
        with _through_argument():
            return setitem(self, idx, val)

    within.__getitem__, within.__setitem__ = traced_getitem, traced_setitem
    _wrap_shared(kernelapi.FakeCUDAShared)
    _wrap_launch(kernel.FakeCUDAKernel, kernel)
    _event_driven_blocks(kernel)
    _sim_installed = True


class _Block(threading.Condition):
    """One simulated block's schedule: live threads, those waiting at the barrier, those that raised."""

    def __init__(self, alive: int) -> None:
        super().__init__()
        self.alive, self.waiting, self.failed = alive, [], []

    def ready(self) -> bool:  # what the block's manager waits for
        return bool(self.failed) or self.alive == 0 or len(self.waiting) == self.alive


def _event_driven_blocks(kernel_module) -> None:
    """numba's ``BlockManager.run`` starts a block's threads, then polls every live thread in a loop (is it at
    ``syncthreads``? did it raise? is it alive?) that holds the GIL the threads need: ~70 % of a simulated launch.
    This one keeps its schedule and waits on a condition instead: a barrier opens when every live thread waits at
    it (a thread that returned no longer counts, as in numba), the first exception aborts the block and is
    raised; the threads, their ``syncthreads`` events and their ``abort`` flag are numba's."""
    base = kernel_module.BlockThread

    class Thread(base):
        def __init__(self, f, manager, block_idx, thread_idx, debug, block: _Block) -> None:
            super().__init__(f, manager, block_idx, thread_idx, debug)
            self._block = block

        def run(self) -> None:
            try:
                super().run()  # numba's: an exception is kept in self.exception
            finally:
                with self._block:
                    self._block.alive -= 1
                    if self.exception:
                        self._block.failed.append(self)
                    if self._block.ready():
                        self._block.notify()

        def syncthreads(self) -> None:
            if self.abort:
                raise RuntimeError("abort flag set on syncthreads call")
            with self._block:
                self.syncthreads_blocked = True
                self._block.waiting.append(self)
                if self._block.ready():
                    self._block.notify()
            self.syncthreads_event.wait()
            self.syncthreads_event.clear()
            if self.abort:
                raise RuntimeError("abort flag set on syncthreads clear")

    def run(self, grid_point, *args) -> None:
        def target() -> None:
            self._f(*args)

        points = list(np.ndindex(*self._block_dim))
        block = _Block(len(points))
        threads = [Thread(target, self, grid_point, p, self._debug, block) for p in points]
        for t in threads:
            t.start()
        with block:
            while True:
                block.wait_for(block.ready)
                if block.failed:
                    for t in threads:
                        t.abort = True
                        t.syncthreads_blocked = False
                        t.syncthreads_event.set()
                    failed = block.failed[0]
                    raise failed.exception[0].with_traceback(failed.exception[1])
                if block.alive == 0:
                    break
                released, block.waiting = block.waiting, []
                for t in released:
                    t.syncthreads_blocked = False
                    t.syncthreads_event.set()
        for t in threads:  # numba's final check (an exception set just before its thread ended)
            if t.exception:
                raise t.exception[0].with_traceback(t.exception[1])

    kernel_module.BlockManager.run = run


_alloc_lock = threading.Lock()


def _wrap_shared(shared_cls) -> None:
    dynamic = shared_cls.array

    def array(self, shape, dtype, *rest, **kwargs):  # numba-cuda adds an `alignment` argument
        if shape == 0:
            return dynamic(self, shape, dtype, *rest, **kwargs)
        from numba.np import numpy_support

        if not isinstance(dtype, np.dtype | type):
            dtype = numpy_support.as_dtype(dtype)
        caller = sys._getframe(1)
        key = (caller.f_code.co_filename, caller.f_lineno)  # one allocation per source line, as numba does
        with _alloc_lock:  # the block's threads all arrive here: exactly one of them allocates
            res = self._allocations.get(key)
            if res is None:
                res = np.empty(shape, dtype)
                poison = np.nan if np.issubdtype(res.dtype, np.floating) else -(2**31) if res.dtype.itemsize >= 4 else 0
                res.fill(poison)
                res = res.view(_SharedArray)
                self._allocations[key] = res
        return res

    shared_cls.array = array


def _wrap_launch(kernel_cls, kernel_module) -> None:
    call = kernel_cls.__call__

    def __call__(self, *args):
        global _launch_id
        if self._device or getattr(kernel_module, "_kernel_context", None) is not None:
            return call(self, *args)  # a device function called from a kernel: not a launch
        _launch_id += 1
        for t in _sim_counters:
            t.launches += 1
            t.blocks += math.prod(self.grid_dim)
            t.threads_per_block.append(math.prod(self.block_dim))
        return call(self, *args)

    kernel_cls.__call__ = __call__


# What a simulated-kernel exercise's host code may use of a device array: its metadata and views of it, and
# kernels launched on it. Everything else reads (or writes) its values on the host: an element (``x[i]``, iterating,
# ``np.asarray(x)``, ``torch.as_tensor(x)``, which end in ``__getitem__`` or ``__array__``), a copy either way,
# printing, comparing, arithmetic, and the NumPy methods the simulator's array hands on from its backing array.
_HOST_METADATA = frozenset({"ndim", "dtype", "size", "strides", "itemsize", "flags"})
_HOST_READS = (
    *("__getitem__", "__setitem__", "copy_to_host", "copy_to_device", "__str__", "__repr__", "__eq__", "__ne__"),
    *("__lt__", "__le__", "__gt__", "__ge__", "__add__", "__sub__", "__mul__", "__floordiv__", "__truediv__"),
    *("__mod__", "__pow__"),
)
# What a kernel body may ask a device array by attribute (elements are read and written by index, and traced).
_KERNEL_METADATA = frozenset({"shape", "ndim", "dtype", "size", "strides", "itemsize"})


def _in_kernel() -> bool:
    """Whether this is one of the simulator's threads of a launched kernel (not the host code)."""
    return getattr(threading.current_thread(), "thread_id", None) is not None


_argument = threading.local()  # depth of traced accesses through a kernel's argument, in this thread


@contextlib.contextmanager
def _through_argument() -> Iterator[None]:
    _argument.depth = getattr(_argument, "depth", 0) + 1
    try:
        yield
    finally:
        _argument.depth -= 1


def _outside_argument(name: str, what: str) -> AssertionError:
    return AssertionError(_(
        "{name}: a kernel used a device array that is not one of its arguments (`{what}`), untraced: pass every "
        "array a kernel reads or writes as an argument of its launch"
    ).format(name=name, what=what))


def _host_read(name: str, what: str) -> AssertionError:
    return AssertionError(_(
        "{name} read a device array on the host (`{what}`): compute on the device, in your kernel, and return the "
        "device array it wrote; host code may use a device array's shape, dtype and views (reshape, T) and launch "
        "kernels on it"
    ).format(name=name, what=what))


@contextlib.contextmanager
def _no_host_transfers(name: str) -> Iterator[None]:
    """Inside a simulated-kernel exercise, no value of a device array may be read or written on the host (compute
    in the kernel): every way the simulator's array offers (elements, copies, NumPy's protocols and methods,
    arithmetic) is refused outside a launched kernel's threads, and inside them whole-array access by attribute."""
    from numba.cuda.simulator.cudadrv import devicearray

    host, within = devicearray.FakeCUDAArray, devicearray.FakeWithinKernelCUDAArray
    saved = {(cls, attr): cls.__dict__[attr] for cls, attrs in ((host, (*_HOST_READS, "__getattr__")),
                                                                 (within, ("__getattr__", "__array_ufunc__")))
             for attr in attrs if attr in cls.__dict__}

    def refuse_on_host(attr: str, original):
        shown = f"{attr}" if attr.startswith("__") else f".{attr}(...)"

        def method(self, *args, **kwargs):
            if not _in_kernel():
                raise _host_read(name, shown)
            if attr not in ("__getitem__", "__setitem__") or not getattr(_argument, "depth", 0):
                raise _outside_argument(name, shown)  # a kernel's arguments are wrapped: their accesses are traced
            return original(self, *args, **kwargs)

        return method

    def host_getattr(self, attr: str):
        if attr in _HOST_METADATA:
            return saved[host, "__getattr__"](self, attr)
        raise (_outside_argument if _in_kernel() else _host_read)(name, f".{attr}")

    def kernel_getattr(self, attr: str):
        if attr in _KERNEL_METADATA:
            return saved[within, "__getattr__"](self, attr)
        raise AssertionError(_(
            "{name}: a kernel asked a device array for `.{attr}`, which reads the whole array untraced: read and "
            "write it element by element (x[i, j]); x.shape, x.size and x.dtype are fine"
        ).format(name=name, attr=attr))

    def kernel_ufunc(self, ufunc, method, *args, **kwargs):
        raise AssertionError(_(
            "{name}: a kernel applied `{ufunc}` to a whole device array, untraced: compute element by element "
            "(math.exp(x[i]))"
        ).format(name=name, ufunc=getattr(ufunc, "__name__", ufunc)))

    for attr in _HOST_READS:
        if (host, attr) in saved:
            setattr(host, attr, refuse_on_host(attr, saved[host, attr]))
    host.__getattr__ = host_getattr
    within.__getattr__ = kernel_getattr
    within.__array_ufunc__ = kernel_ufunc
    try:
        yield
    finally:
        for (cls, attr), value in saved.items():
            setattr(cls, attr, value)


def run_sim_kernel(name: str, fn, *args) -> tuple[np.ndarray, SimTraffic]:
    """Call a learner's launcher on device copies of the numpy ``args``; host result and traffic.

    The launcher must return a device array (``cuda.device_array``) that its kernels wrote in full,
    leave its inputs unchanged and never copy to the host. In batch grading (grader.instrument.worker) the
    simulated launch runs in the learner's worker and only the host result and the counts come back.
    """
    from grader.instrument import worker

    if worker.enabled():
        host, counts = worker.call(name, _sim_kernel_as_data, (name, fn, *args), {})
        return host.numpy(), SimTraffic(**counts)
    # make grade: beside the learner's code, as in the worker (the launcher gets device copies, compared here)
    return worker.beside_learner(name, _run_sim_kernel_here, (name, fn, *args), {})


def _sim_kernel_as_data(name: str, fn, *args) -> tuple[object, dict[str, object]]:
    """In the worker: the host result as a tensor and the counts as plain fields (data the judge can load)."""
    import torch

    host, t = _run_sim_kernel_here(name, fn, *args)
    skip = ("stored_addresses", "_events")  # used by the checks above, in the worker
    counts = {f: getattr(t, f) for f in SimTraffic.__dataclass_fields__ if f not in skip}
    return torch.from_numpy(np.ascontiguousarray(host)), counts


def _run_sim_kernel_here(name: str, fn, *args) -> tuple[np.ndarray, SimTraffic]:
    cuda = sim_cuda()
    dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    with sim_traffic() as t, _no_host_transfers(name):
        out = fn(*dev)
    if not hasattr(out, "copy_to_host"):
        raise AssertionError(
            f"{name} returned {type(out).__name__}: return the device array your kernel wrote "
            "(allocate it with cuda.device_array)"
        )
    if t.launches == 0:
        raise AssertionError(f"{name} launched no kernel: the work must happen in a @cuda.jit kernel")
    for i, (a, d) in enumerate(zip(args, dev, strict=True)):
        if isinstance(a, np.ndarray) and not np.array_equal(a, d.copy_to_host(), equal_nan=a.dtype.kind == "f"):
            raise AssertionError(f"{name} modified its input #{i}: write results to a new array")
    host = out.copy_to_host()
    _check_written(name, out, t)
    return host, t


def _check_written(name: str, out, t: SimTraffic) -> None:
    ary = out._ary
    start = ary.__array_interface__["data"][0]
    if ary.size == 0:
        return
    offsets = np.indices(ary.shape).reshape(ary.ndim, -1).T @ np.asarray(ary.strides)
    missing = [int(o) for o in offsets if start + int(o) not in t.stored_addresses]
    if missing:
        first = np.unravel_index(np.flatnonzero(offsets == missing[0])[0], ary.shape)
        raise AssertionError(
            f"{name}: {len(missing)} of {ary.size} output elements were never written by a kernel "
            f"(first at {tuple(map(int, first))}): does your grid cover the whole output?"
        )
