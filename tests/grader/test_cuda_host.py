"""A .cu is host C++ too (THREAT_MODEL.md R3.1): the CPU executor runs only kernels, under the parent's request,
and g++ and NVRTC compile the same code.

The launch process holds no decision: each thread order is a process of its own, told its order on its command
line, and the parent compares the outputs (grader.instrument.cuda_cpu.launch). No code of the learner's file runs
before the runtime's main or after the kernel (the object's sections and calls are checked before linking, main
ends with _exit), and the kernel runs under a seccomp filter: a system call reached through an address nobody
names (the runner's own PLT here) is stopped, the read-only request page stays read-only. grader.instrument.cu_source
refuses whatever would show the two compilers different code.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from grader.instrument import cu_source, cuda, cuda_cpu
from grader.instrument.cu_source import CuSourceError
from grader.instrument.cuda_cpu import CpuCompileError, CudaFault

KERNEL = 'extern "C" __global__ void k(float* out) { out[threadIdx.x] = 1.0f; }\n'

# kernels that jump to an address the test passes: what a learner could compute, and no symbol check sees
THROUGH_AN_ADDRESS = r"""
extern "C" __global__ void open_at(long long addr, float* out) {
    typedef int (*opener)(const char*, int);
    out[0] = (float)((opener)addr)("/etc/hostname", 0);
}
extern "C" __global__ void protect_at(long long addr, long long page, float* out) {
    typedef int (*protector)(void*, unsigned long, int);
    out[0] = (float)((protector)addr)((void*)page, 4096, 3);
}
extern "C" __global__ void exit_at(long long addr, float* out) {
    out[0] = 1.0f;
    ((void (*)(int))addr)(0);
}
extern "C" __global__ void quits_when_traced(long long addr, long long cfg, float* out) {
    __shared__ float s[64];
    s[threadIdx.x] = threadIdx.x;
    out[threadIdx.x] = threadIdx.x ? s[threadIdx.x - 1] : 0.0f;  // a race: right only in thread order 0, 1, ...
    if (*(volatile bool*)(cfg + 4)) ((void (*)(int))addr)(0);  // the request's tracing flag: end the rerun early
}
extern "C" __global__ void write_at(long long addr, float* out) {
    *(volatile int*)addr = 0;
    out[0] = 1.0f;
}
"""


def fault_of(runner: cuda_cpu.Runner, name: str, args: list) -> str:
    with pytest.raises(CudaFault) as exc:
        cuda_cpu.launch(runner, name, (1,), (1,), args)
    return str(exc.value)


def refusal(src: str) -> str:
    with pytest.raises(CpuCompileError) as exc:
        cuda_cpu.compile_cpu(src, "host.cu", sorted(set(re.findall(r"void (\w+)\(", src)) & {"k"}))
    return str(exc.value)


@pytest.fixture(scope="module")
def through() -> tuple[cuda_cpu.Runner, dict[str, int]]:
    """The runner of THROUGH_AN_ADDRESS and the addresses of its PLT entries and of the runtime's request page."""
    if not cuda_cpu.available():
        pytest.skip("the CPU executor needs g++ on x86-64 Linux")
    runner = cuda_cpu.compile_cpu(THROUGH_AN_ADDRESS, "through.cu", ["exit_at", "open_at", "protect_at",
                                                                                  "quits_when_traced", "write_at"])
    dump = subprocess.run(["objdump", "-d", str(runner.path)], capture_output=True, text=True, check=True).stdout
    at = {m.group(2): int(m.group(1), 16) for m in re.finditer(r"^([0-9a-f]+) <(\w+)@plt>:", dump, flags=re.M)}
    syms = subprocess.run(["nm", str(runner.path)], capture_output=True, text=True, check=True).stdout
    at["cfg"] = int(re.search(r"^([0-9a-f]+) \w _ZN2ds3cfgE$", syms, flags=re.M).group(1), 16)
    return runner, at


def test_a_system_call_through_a_computed_address_stops_the_launch(through):
    runner, at = through
    msg = fault_of(runner, "open_at", [at["open"], np.zeros(1, np.float32)])
    assert "a system call (openat)" in msg and "no files, processes" in msg, msg


def test_the_request_page_stays_read_only_under_the_kernel(through):
    """The thread order and race tracing sit on a read-only page: writing it faults, unprotecting it is refused."""
    runner, at = through
    msg = fault_of(runner, "write_at", [at["cfg"], np.zeros(1, np.float32)])
    assert "out-of-bounds access" in msg and "writes an address outside every buffer" in msg, msg
    msg = fault_of(runner, "protect_at", [at["mprotect"], at["cfg"], np.zeros(1, np.float32)])
    assert "a system call (mprotect)" in msg, msg


def test_the_parent_judges_the_two_thread_orders(through):
    """A kernel that ends the tracing rerun early (so that it finds no shared-memory race) is still a race: the
    outputs of the two orders differ by more than rounding, and that is the parent's to see."""
    runner, at = through
    with pytest.raises(CudaFault, match="race: the result depends on the order"):
        cuda_cpu.launch(runner, "quits_when_traced", (1,), (64,), [at["_exit"], at["cfg"], np.zeros(64, np.float32)])


def test_a_launch_that_ends_its_process_early_has_no_result(through):
    runner, at = through
    msg = fault_of(runner, "exit_at", [at["_exit"], np.zeros(1, np.float32)])
    assert "ended (exit status 0) before the kernel returned" in msg, msg


@pytest.mark.skipif(not cuda_cpu.available(), reason="the CPU executor needs g++ on x86-64 Linux")
@pytest.mark.parametrize("src", [
    "__device__ volatile int seen;\n[[gnu::constructor]] static __device__ void before() { seen = 1; }\n" + KERNEL,
    "__device__ volatile int seen;\n[[gnu::destructor]] static __device__ void after() { seen = 1; }\n" + KERNEL,
    "__device__ volatile int seen;\nstruct Later { __device__ ~Later() { seen = 1; } };\nLater later;\n" + KERNEL,
    "__device__ volatile float one = 1.0f;\n__device__ float e = expf(one);\n" + KERNEL,
    "__device__ volatile int seen;\nstatic __device__ void one() {}\n"
    'extern "C" __device__ void (*pick())() { seen = 1; return one; }\n'
    '[[gnu::ifunc("pick")]] __device__ void chosen();\n' + KERNEL,
], ids=["constructor", "destructor", "global-destructor", "dynamic-initializer", "ifunc-resolver"])
def test_code_that_runs_outside_a_launch_is_refused(src):
    msg = refusal(src)
    assert "code that runs outside a kernel launch" in msg or "whose resolver the loader runs before" in msg, msg


@pytest.mark.skipif(not cuda_cpu.available(), reason="the CPU executor needs g++ on x86-64 Linux")
def test_host_calls_and_replaced_library_functions_are_refused_with_their_name():
    msg = refusal('extern "C" __device__ int open(const char*, int, ...);\n'
                  'extern "C" __global__ void k(float* out) {\n    out[0] = (float)open("x", 0);\n}\n')
    assert "calls `open` at line 1" in msg and "cannot call host functions" in msg, msg
    msg = refusal('extern "C" __device__ int memcmp(const void*, const void*, unsigned long) { return 0; }\n' + KERNEL)
    assert "defines `memcmp` at line 1" in msg and "would replace theirs" in msg, msg


@pytest.mark.parametrize("src, name", [
    ("#ifdef __CUDACC__\n#endif\n", "__CUDACC__"),
    ("#ifndef __NVCC__\n#endif\n", "__NVCC__"),
    ("#if __CUDA_ARCH__ >= 800\n#endif\n", "__CUDA_ARCH__"),
    ("#if defined(__GNUC__) && !defined(__clang__)\n#endif\n", "__GNUC__"),
    ("#ifdef __CUDACC_RTC__\n#else\n#endif\n", "__CUDACC_RTC__"),
    ("#ifdef DRIPSTONE_CPU\n#endif\n", "DRIPSTONE_CPU"),
    ("#define HAS_PI defined(M_PI)\n#if HAS_PI\n#endif\n", "M_PI"),
    ("#if 0\n#define M_PI 3\n#endif\n#ifdef M_PI\n#endif\n", "M_PI"),
    ("#if __has_include(<cstdio>)\n#endif\n", "__has_include"),
    ("#if DRIPSTONE_TODO\n#endif\n", "DRIPSTONE_TODO"),
])
def test_a_conditional_on_the_toolchain_is_refused_with_its_line(src, name):
    with pytest.raises(CuSourceError) as exc:
        cu_source.check(src + KERNEL, "branch.cu")
    msg = str(exc.value)
    assert msg.startswith("branch.cu line ") and f"tests `{name}`" in msg, msg


@pytest.mark.parametrize("src, what", [
    ("#include <cstdio>\n", "#include of <cstdio>"),
    ('#include "other.cu"\n', "one file"),
    ('#pragma push_macro("X")\n', "#pragma push_macro"),
    ("#line 40\n", "#line"),
    ("#assert machine(x86_64)\n", "#assert"),
    ("__device__ const char* where = __FILE__;\n", "`__FILE__`"),
    ("__device__ int g = __builtin_constant_p(1);\n", "`__builtin_constant_p`"),
    ("#define CAT(a, b) a##b\n", "token pasting"),
    ("#define __CUDACC__ 1\n", "reserved name"),
])
def test_what_the_compilers_read_differently_is_refused(src, what):
    with pytest.raises(CuSourceError) as exc:
        cu_source.check(src + KERNEL, "odd.cu")
    assert what in str(exc.value), str(exc.value)


def test_inline_assembly_is_refused_for_the_cpu_executor():
    src = 'extern "C" __global__ void k(int* out) { asm volatile("mov.u32 %0, 1;" : "=r"(out[0])); }\n'
    cu_source.check(src, "ptx.cu")  # NVRTC reads PTX assembly
    with pytest.raises(CuSourceError, match="inline assembly"):
        cu_source.check(src, "ptx.cu", cpu=True)


def test_the_stubs_and_the_files_own_macros_pass():
    src = ("#ifndef DRIPSTONE_TODO\n#define DRIPSTONE_TODO(task) __trap()\n#endif\n#define TILE 16\n"
           "#define WIDE (TILE * 2)\n#if WIDE > 16 && defined(TILE)\n#pragma unroll\n#endif\n#include <cuda_fp16.h>\n")
    cu_source.check(src + KERNEL, "fine.cu", cpu=True)
    repo = Path(__file__).resolve().parents[2]
    for path in sorted([*repo.glob("solutions/*/*.cu"), *repo.glob("tests/*/known_right/*.cu")]):
        cu_source.check(path.read_text(), path.name, cpu=True)


def test_nvrtc_compiles_what_g_plus_plus_compiles(tmp_path):
    """The NVRTC path refuses the same branches, and gets the project's macros as g++ does (the stub's default is
    skipped by both)."""
    src = "#ifdef __CUDACC_RTC__\n#endif\n" + KERNEL
    with pytest.raises(CuSourceError, match="__CUDACC_RTC__"):
        cuda.CudaSource(tmp_path / "b.cu", "b.cu", src).compile()
    stub = "#ifndef DRIPSTONE_TODO\n#error the project's macros are missing\n#endif\n" + KERNEL
    assert cu_source.for_nvrtc(stub).endswith(stub)
    compiled = cuda.CudaSource(tmp_path / "s.cu", "s.cu", stub).compile()
    assert "k" in compiled.resources


TRAIT = """
template <class T> struct is_const_t { static constexpr bool value = false; };
template <class T> struct is_const_t<const T> { static constexpr bool value = true; };
constexpr bool SEEN_BY_NVRTC = is_const_t<decltype(threadIdx)>::value;
extern "C" __global__ void k(float* y) {
    if constexpr (SEEN_BY_NVRTC) y[threadIdx.x] = 1.f; else y[threadIdx.x] = 2.f;
}
"""


def test_a_kernel_the_compilers_read_apart_through_a_type_trait_is_refused_by_its_results(tmp_path):
    """No preprocessor branch, so cu_source lets it through; what NVRTC reads (the PTX checks' and a GPU's kernel)
    computes 1, what g++ reads 2: cuda.same_kernel interprets NVRTC's PTX and holds it against the executor."""
    src = cuda.CudaSource(tmp_path / "t.cu", "t.cu", TRAIT)
    cu_source.check(src.text, src.label)
    with pytest.raises(cuda.SubmissionError, match=r"`y` element 0 is 1\.0 in the first, 2\.0 in the second"):
        cuda.same_kernel(src, "k", (1,), (32,), [np.zeros(32, np.float32)])
    honest = cuda.CudaSource(tmp_path / "h.cu", "h.cu", TRAIT.replace("1.f;", "2.f;"))
    cuda.same_kernel(honest, "k", (1,), (32,), [np.zeros(32, np.float32)])


def test_every_kernel_whose_ptx_is_graded_is_held_against_the_executor():
    """Each CUDA C++ exercise (cuda_kernel) of the course's tests has a test that holds NVRTC's reading of its
    kernel against the CPU executor's (cuda.same_kernel, or cuda.bank_conflicts, which holds it too): otherwise its
    PTX checks could grade a kernel no test ran."""
    from grader.core.target import REPO_ROOT

    declared = re.compile(r"^(\w+) = cuda_kernel\(", re.M)
    checked = 0
    for path in sorted(REPO_ROOT.glob("tests/*/test_*.py")):
        text = path.read_text()
        for name in declared.findall(text):
            held = re.search(rf"cuda\.(?:same_kernel|bank_conflicts)\([^)]*\b{name}\.kernel\b", text)
            assert held, f"{path.relative_to(REPO_ROOT)}: `{name}`'s kernel is never held against the executor"
            checked += 1
    assert checked >= 4, checked
