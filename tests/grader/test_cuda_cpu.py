"""The CPU executor for CUDA C++ (grader.instrument.cuda_cpu): the execution model and the faults it reports.

Two sources share the compiles: GOOD's kernels must compute what a GPU computes (warp primitives,
shared memory, 3-D blocks, atomics, half/bf16), FAULTY's each break one rule and must be reported with
the line and the cause. The .cu known implementations of the units are checked by the course's
self-test; here only their verdicts against their numba twins.
"""

from __future__ import annotations

import math
import re
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from grader.authoring import known
from grader.instrument import cuda_cpu
from grader.instrument.cuda_cpu import CpuCompileError, CudaFault

pytestmark = pytest.mark.skipif(not cuda_cpu.available(), reason="the CPU executor needs g++ on x86-64 Linux")
REPO = Path(__file__).resolve().parents[2]

GOOD = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define FULL 0xffffffffu

// out[t] for each op: 0 down 3, 1 up 5, 2 xor 7, 3 idx (lane * 3) % 32, 4 down 1 width 8, 5 ballot(x > 0),
// 6 any(x > 100), 7 all(x > -100)
extern "C" __global__ void warp_ops(const float* x, float* out, int op) {
    const int t = threadIdx.x, lane = t % 32;
    const float v = x[t];
    float r = 0.0f;
    if (op == 0) r = __shfl_down_sync(FULL, v, 3);
    if (op == 1) r = __shfl_up_sync(FULL, v, 5);
    if (op == 2) r = __shfl_xor_sync(FULL, v, 7);
    if (op == 3) r = __shfl_sync(FULL, v, (lane * 3) % 32);
    if (op == 4) r = __shfl_down_sync(FULL, v, 1, 8);
    if (op == 5) r = (float)__ballot_sync(FULL, v > 0.0f);
    if (op == 6) r = (float)__any_sync(FULL, v > 100.0f);
    if (op == 7) r = (float)__all_sync(FULL, v > -100.0f);
    out[t] = r;
}

// A 3-D block reduces through static shared memory; one atomicAdd per block into *total.
extern "C" __global__ void block_tree(const float* x, float* per_block, float* total, int n) {
    __shared__ float buf[256];
    const int nt = blockDim.x * blockDim.y * blockDim.z;
    const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const int b = blockIdx.x + gridDim.x * blockIdx.y;
    const int i = b * nt + t;
    buf[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int s = nt / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t == 0) {
        per_block[b] = buf[0];
        atomicAdd(total, buf[0]);
    }
}

extern "C" __global__ void atomic_sum(const float* x, float* total) {
    __shared__ float seen[256];
    seen[threadIdx.x] = x[threadIdx.x];
    atomicAdd(total, seen[threadIdx.x]);
}

extern "C" __global__ void scalars(double* y, __half h, double d, long long n, float f) {
    y[threadIdx.x] = (double)__half2float(h) + d + (double)n + (double)f;
}

extern "C" __global__ void conversions(const float* x, float* half_back, float* bf16_back, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        half_back[i] = __half2float(__float2half(x[i]));
        bf16_back[i] = __bfloat162float(__float2bfloat16(x[i]));
    }
}

extern "C" __global__ void scaled_exp(const float* x, float* y, int n, float scale) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __expf(x[i] * scale) + rsqrtf(fmaxf(x[i] * x[i], 1.0f));
}
"""

FAULTY = r"""
extern "C" __global__ void reads_past_end(const float* x, float* y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i < n ? i : 0] = x[i];  // line 4: no i < n check on the read
}

extern "C" __global__ void reads_before_start(const float* x, float* y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i - 1];  // line 9: x[-1] for thread 0
}

extern "C" __global__ void shared_overflow(float* y) {
    __shared__ float s[32];
    s[threadIdx.x] = 1.0f;  // line 14: 64 threads, 32 slots
    __syncthreads();
    y[threadIdx.x] = s[threadIdx.x];
}

extern "C" __global__ void divergent_barrier(float* y) {
    if (threadIdx.x < 16) __syncthreads();  // line 20
    y[threadIdx.x] = 1.0f;
}

extern "C" __global__ void racy_reverse(const float* x, float* y) {
    __shared__ float s[64];
    s[threadIdx.x] = x[threadIdx.x];
    y[threadIdx.x] = s[63 - threadIdx.x];  // no __syncthreads() before reading another thread's slot
}

extern "C" __global__ void spins(float* y, int n) {
    while (n > 0) y[0] += 1.0f;  // line 31: never ends
}

extern "C" __global__ void traps(float* y) {
    if (threadIdx.x == 5) __trap();  // line 35
    y[threadIdx.x] = 1.0f;
}

extern "C" __global__ void shfl_divergent(float* y) {
    float v = threadIdx.x;
    if (threadIdx.x < 16) v += __shfl_down_sync(0xffffffffu, v, 1);  // line 41: lanes 16-31 never come
    y[threadIdx.x] = v;
}
"""


GOOD_KERNELS = ["warp_ops", "block_tree", "atomic_sum", "scalars", "conversions", "scaled_exp"]


@pytest.fixture(scope="module")
def good() -> cuda_cpu.Runner:
    return cuda_cpu.compile_cpu(GOOD, "good.cu", GOOD_KERNELS)


@pytest.fixture(scope="module")
def faulty() -> cuda_cpu.Runner:
    names = ["reads_past_end", "reads_before_start", "shared_overflow", "divergent_barrier", "racy_reverse",
             "spins", "traps", "shfl_divergent"]
    return cuda_cpu.compile_cpu(FAULTY, "faulty.cu", names)


def expected_warp_op(x: np.ndarray, op: int) -> np.ndarray:
    lane = np.arange(x.size) % 32
    base = np.arange(x.size) - lane
    if op == 0:
        src = np.where(lane + 3 < 32, lane + 3, lane)
    elif op == 1:
        src = np.where(lane - 5 >= 0, lane - 5, lane)
    elif op == 2:
        src = lane ^ 7
    elif op == 3:
        src = (lane * 3) % 32
    elif op == 4:
        src = np.where(lane % 8 + 1 < 8, lane + 1, lane)
    else:
        warps = x.reshape(-1, 32)
        if op == 5:
            ballot = [sum(1 << i for i in range(32) if w[i] > 0) for w in warps]
            return np.repeat(np.array(ballot, dtype=np.float64), 32).astype(np.float32)
        pred = (warps > 100).any(axis=1) if op == 6 else (warps > -100).all(axis=1)
        return np.repeat(pred.astype(np.float32), 32)
    return x[base + src]


@pytest.mark.parametrize("op", range(8))
def test_warp_primitives_match_their_definition(good, op):
    x = np.random.default_rng(op).standard_normal(64).astype(np.float32)
    out = np.full(64, np.nan, np.float32)
    cuda_cpu.launch(good, "warp_ops", (1,), (64,), [x, out, op])
    np.testing.assert_array_equal(out, expected_warp_op(x, op), err_msg=f"warp op {op}")


@pytest.mark.parametrize("block", [(256, 1, 1), (8, 4, 8), (16, 16, 1)])
def test_shared_memory_barriers_and_atomics_in_3d_blocks(good, block):
    n, grid = 1000, (2, 2)
    x = torch.randn(n)
    per_block, total = torch.full((4,), float("nan")), torch.zeros(1)
    cuda_cpu.launch(good, "block_tree", grid, block, [x, per_block, total, n])
    want = [float(x[i * 256:(i + 1) * 256].double().sum()) for i in range(4)]
    np.testing.assert_allclose(per_block.double().numpy(), want, rtol=1e-5, atol=1e-4)
    assert math.isclose(float(total), float(x.double().sum()), rel_tol=1e-5, abs_tol=1e-4)


def test_half_and_bfloat16_round_like_torch(good):
    x = torch.cat([torch.randn(500) * 1000, torch.randn(500) * 1e-6, torch.tensor([65504.0, 70000.0, 1e-8])])
    x = torch.cat([x, torch.tensor([float("inf"), -float("inf")])])
    h, b = torch.empty_like(x), torch.empty_like(x)
    cuda_cpu.launch(good, "conversions", (math.ceil(x.numel() / 128),), (128,), [x, h, b, x.numel()])
    assert torch.equal(h, x.half().float()), "fp16 round trip differs from torch's"
    assert torch.equal(b, x.bfloat16().float()), "bf16 round trip differs from torch's"


def test_scalar_parameters_of_every_kind(good):
    """A Python float becomes a float or a double as the kernel declares; a small struct (__half) takes its bits."""
    y = np.zeros(2)
    cuda_cpu.launch(good, "scalars", (1,), (2,), [y, 0x3C00, 0.1, 2**40, 0.25])  # 0x3C00: 1.0 in fp16
    assert y.tolist() == [1.0 + 0.1 + 2**40 + 0.25] * 2, y


def test_float_scalars_and_math_intrinsics(good):
    x = torch.randn(100)
    y = torch.empty(100)
    cuda_cpu.launch(good, "scaled_exp", (1,), (128,), [x, y, 100, 0.5])
    want = torch.exp(x.double() * 0.5) + 1 / torch.sqrt(torch.clamp(x.double() ** 2, min=1.0))
    torch.testing.assert_close(y.double(), want, rtol=1e-6, atol=1e-6)


def fault_of(runner: cuda_cpu.Runner, name: str, grid, block, args, **kw) -> str:
    with pytest.raises(CudaFault) as exc:
        cuda_cpu.launch(runner, name, grid, block, args, **kw)
    return str(exc.value)


DYNAMIC = r"""
extern "C" __global__ void reverse_dynamic(const float* x, float* y, int n) {
    extern __shared__ float buf[];
    __shared__ int flag;
    buf[threadIdx.x] = x[blockIdx.x * n + threadIdx.x];
    if (threadIdx.x == 0) flag = 1;
    __syncthreads();
    y[blockIdx.x * n + threadIdx.x] = buf[n - 1 - threadIdx.x] * flag;
}

extern "C" __global__ void reverse_dynamic_racy(const float* x, float* y, int n) {
    extern __shared__ float buf[];
    buf[threadIdx.x] = x[threadIdx.x];
    y[threadIdx.x] = buf[n - 1 - threadIdx.x];
}
"""


def test_extern_shared_memory_is_dynamic_per_launch():
    runner = cuda_cpu.compile_cpu(DYNAMIC, "dynamic.cu", ["reverse_dynamic", "reverse_dynamic_racy"])
    x = np.arange(192, dtype=np.float32)
    y = np.zeros(192, np.float32)
    cuda_cpu.launch(runner, "reverse_dynamic", (3,), (64,), [x, y, 64], shared_bytes=64 * 4)
    np.testing.assert_array_equal(y, x.reshape(3, 64)[:, ::-1].ravel())
    msg = fault_of(runner, "reverse_dynamic_racy", (1,), (64,), [x, y, 64], shared_bytes=256)
    assert "race on shared memory" in msg and "dynamic.cu line 14" in msg and "dynamic.cu line 13" in msg, msg
    assert "dynamic shared memory" in fault_of(runner, "reverse_dynamic", (1,), (64,), [x, y, 64],
                                               shared_bytes=1 << 20)


# Idioms of well-known public kernels (FasterTransformer's blockReduceSum, PyTorch's block reduce): each once
# failed to compile or ran wrong on the executor (issue 35).
IDIOMS = r"""
#define FINAL_MASK 0xffffffffu

template <typename T>
__inline__ __device__ T warpReduceSum(T val) {
    for (int mask = 16; mask > 0; mask >>= 1) val += __shfl_xor_sync(FINAL_MASK, val, mask, 32);
    return val;
}

template <typename T>
__inline__ __device__ T blockReduceSum(T val) {
    static __shared__ T shared[32];
    const int lane = threadIdx.x & 0x1f, wid = threadIdx.x >> 5;
    val = warpReduceSum<T>(val);
    if (lane == 0) shared[wid] = val;
    __syncthreads();
    val = (threadIdx.x < (blockDim.x / 32.f)) ? shared[lane] : (T)(0.0f);
    return warpReduceSum<T>(val);
}

extern "C" __global__ void block_sums(const float* x, float* out, int n) {
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i];
    v = blockReduceSum<float>(v);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}

extern "C" __global__ void static_in_kernel(const float* x, float* y) {
    static __shared__ float buf[64];
    buf[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    y[threadIdx.x] = buf[63 - threadIdx.x];
}

template <int N>
__device__ float reversed(const float* x) {
    __shared__ float tile[N];
    tile[threadIdx.x] = x[threadIdx.x];
    return tile[N - 1 - threadIdx.x];  // line 39: no __syncthreads() after the stores (line 38)
}

extern "C" __global__ void template_race(const float* x, float* y) {
    y[threadIdx.x] = reversed<64>(x);
}

template <typename T>
__device__ T count_blocks() {
    __shared__ T seen;
    if (threadIdx.x == 0) seen += (T)1;  // never initialised: garbage on a GPU, not the previous block's value
    __syncthreads();
    return seen;
}

extern "C" __global__ void uninitialised(float* out) {
    const float v = count_blocks<float>();
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}

extern "C" __global__ void mixed_min_max(unsigned* out, int lo, int hi) {
    const unsigned t = threadIdx.x;
    out[t] = min(t, hi) + 100u * max(t, lo) + 10000u * umin(t, 3u);
}

extern "C" __global__ void debug_print(const float* x, int n) {
    if (threadIdx.x < n) printf("thread %d of block %d: x = %.2f\n", threadIdx.x, blockIdx.x, x[threadIdx.x]);
}

extern "C" __global__ void dynamic_with_global_atomics(const float* x, float* total) {
    extern __shared__ float stage[];
    stage[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    atomicAdd(total, stage[blockDim.x - 1 - threadIdx.x]);
}
"""
IDIOM_KERNELS = ["block_sums", "static_in_kernel", "template_race", "uninitialised", "mixed_min_max", "debug_print",
                 "dynamic_with_global_atomics"]


@pytest.fixture(scope="module")
def idioms() -> cuda_cpu.Runner:
    return cuda_cpu.compile_cpu(IDIOMS, "idioms.cu", IDIOM_KERNELS)


def test_static_shared_in_a_function_template_is_a_block_reduce(idioms):
    """FasterTransformer's blockReduceSum: `static __shared__ T shared[32]` in a function template compiles (it
    said "static static") and is the block's shared memory."""
    x = torch.randn(1000)
    out = torch.full((3,), float("nan"))
    cuda_cpu.launch(idioms, "block_sums", (3,), (128,), [x, out, 1000])
    assert math.isclose(float(out.double().sum()), float(x.double().sum()), rel_tol=1e-5, abs_tol=1e-4)
    x, y = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    cuda_cpu.launch(idioms, "static_in_kernel", (2,), (64,), [x, y])
    np.testing.assert_array_equal(y, x[::-1])


def test_shared_array_of_a_function_template_is_traced_for_races(idioms):
    """A template's __shared__ array was left out of shared memory (g++ ignores its section): no race found."""
    msg = fault_of(idioms, "template_race", (1,), (64,), [np.arange(64, dtype=np.float32), np.zeros(64, np.float32)])
    assert "race on shared memory" in msg and "idioms.cu line 39" in msg and "idioms.cu line 38" in msg, msg


def test_shared_variable_of_a_function_template_is_poisoned_per_block(idioms):
    """Never initialised: NaN in every block (it read the previous block's value: 1, 2, 3)."""
    out = np.zeros(3, np.float32)
    cuda_cpu.launch(idioms, "uninitialised", (3,), (32,), [out])
    assert np.isnan(out).all(), out


def test_shared_arrays_the_executor_cannot_place_are_refused(tmp_path):
    """A block-scope static that cannot be moved into shared memory (here thread_local) stops the compile."""
    src = tmp_path / "t.cpp"
    src.write_text("template <class T> T f(T v) { static thread_local T buf[4]; buf[0] = v; return buf[1]; }\n"
                   "float g(float v) { return f(v); }\n")
    import subprocess

    subprocess.run(["g++", "-c", "-O2", str(src), "-o", str(tmp_path / "t.o")], check=True)
    with pytest.raises(CpuCompileError, match=r"x\.cu: the CPU executor cannot place `buf` in `f<float>\(float\)`"):
        cuda_cpu._place_shared(tmp_path / "t.o", {"buf", "T"}, "x.cu")


def test_min_and_max_of_mixed_signedness_are_cuda_overloads(idioms):
    """min(unsigned, int) was ambiguous; CUDA compares as unsigned."""
    out = np.zeros(32, np.uint32)
    cuda_cpu.launch(idioms, "mixed_min_max", (1,), (32,), [out, 5, 20])
    t = np.arange(32)
    np.testing.assert_array_equal(out, np.minimum(t, 20) + 100 * np.maximum(t, 5) + 10000 * np.minimum(t, 3))


def test_device_printf_reaches_the_tests_output_once(idioms, capsys):
    """printf was undeclared; its output is the test's output, from the first thread order only."""
    x = np.array([0.5, 1.25, 2.0], np.float32)
    cuda_cpu.launch(idioms, "debug_print", (2,), (32,), [x, 3])
    out = capsys.readouterr().out
    assert out.count("thread 1 of block 0: x = 1.25\n") == 1 and out.count("thread 2 of block 1: x = 2.00\n") == 1, out
    assert out.count("\n") == 6, out


def test_printf_before_a_fault_is_shown(capsys):
    src = ('extern "C" __global__ void k(float* y) {\n  printf("before %d\\n", threadIdx.x);\n'
           "  if (threadIdx.x == 1) __trap();\n  y[threadIdx.x] = 1.0f;\n}\n")
    runner = cuda_cpu.compile_cpu(src, "printing.cu", ["k"])
    assert "line 3" in fault_of(runner, "k", (1,), (4,), [np.zeros(4, np.float32)])
    assert capsys.readouterr().out.startswith("before 0\nbefore 1\n")


def test_float_atomics_to_global_beside_extern_shared_are_not_a_race(idioms):
    """With `extern __shared__` in the file, float atomics to global memory (whose rounding depends on the
    thread order) were reported as a shared-memory race."""
    x = (np.random.default_rng(3).standard_normal(256) * 1e4).astype(np.float32)
    total = np.zeros(1, np.float32)
    cuda_cpu.launch(idioms, "dynamic_with_global_atomics", (1,), (256,), [x, total], shared_bytes=256 * 4)
    assert math.isclose(float(total[0]), float(x.astype(np.float64).sum()), rel_tol=1e-4, abs_tol=1.0)


def test_struct_argument_over_8_bytes_names_the_parameter_and_the_line():
    src = ("struct Params {\n    float scale;\n    int n;\n    float bias;\n};\n\n"
           'extern "C" __global__ void scaled(const float* x, float* y,\n                       Params p) {\n'
           "    if (threadIdx.x < p.n) y[threadIdx.x] = x[threadIdx.x] * p.scale + p.bias;\n}\n")
    with pytest.raises(CpuCompileError) as exc:
        cuda_cpu.compile_cpu(src, "params.cu", ["scaled"])
    msg = str(exc.value)
    assert msg.startswith("params.cu line 8: kernel `scaled`'s parameter `p` is a `Params` of 12 bytes"), msg
    assert "at most 8 bytes by value" in msg and "required from" not in msg, msg


def test_out_of_bounds_global_reads_name_the_line_and_the_parameter(faulty):
    x, y = np.zeros(100, np.float32), np.zeros(100, np.float32)
    msg = fault_of(faulty, "reads_past_end", (1,), (128,), [x, y, 100])
    assert "out-of-bounds access at faulty.cu line 4" in msg and "`x` (parameter 0)" in msg and "past its end" in msg
    msg = fault_of(faulty, "reads_before_start", (1,), (128,), [x, y, 100])
    assert "faulty.cu line 9" in msg and "before the start of `x`" in msg, msg


def test_out_of_bounds_shared_index_names_the_line(faulty):
    msg = fault_of(faulty, "shared_overflow", (1,), (64,), [np.zeros(64, np.float32)])
    assert "faulty.cu line 14" in msg and "index 32 out of bounds" in msg, msg


def test_divergent_barrier_is_reported_as_such(faulty):
    msg = fault_of(faulty, "divergent_barrier", (1,), (32,), [np.zeros(32, np.float32)])
    assert "divergent __syncthreads()" in msg and "line 20" in msg, msg


def test_warp_primitive_missing_lanes_is_divergence(faulty):
    msg = fault_of(faulty, "shfl_divergent", (1,), (32,), [np.zeros(32, np.float32)])
    assert "line 41" in msg and "lane 16" in msg and "__shfl_down_sync" in msg, msg


def test_missing_barrier_is_a_race(faulty):
    x = np.arange(64, dtype=np.float32)
    msg = fault_of(faulty, "racy_reverse", (1,), (64,), [x, np.zeros(64, np.float32)])
    assert "race on shared memory" in msg and "reads a word at faulty.cu line 27" in msg, msg
    assert "writes it at faulty.cu line 26" in msg and "no __syncthreads()" in msg, msg


def test_order_dependent_atomics_are_not_a_race(good):
    """Float atomics add in thread order: the two orders round differently, but no shared word races."""
    x = (np.random.default_rng(7).standard_normal(256) * 1e4).astype(np.float32)
    total = np.zeros(1, np.float32)
    cuda_cpu.launch(good, "atomic_sum", (1,), (256,), [x, total])
    assert math.isclose(float(total[0]), float(x.astype(np.float64).sum()), rel_tol=1e-4, abs_tol=1.0)


def test_endless_kernel_is_stopped_with_its_line(faulty, monkeypatch):
    monkeypatch.setattr(cuda_cpu, "_limit_s", lambda: 1)
    start = time.monotonic()
    msg = fault_of(faulty, "spins", (1,), (1,), [np.zeros(1, np.float32), 1])
    assert time.monotonic() - start < 20
    assert "never returns" in msg and "faulty.cu line 31" in msg, msg


def test_trap_names_the_thread(faulty):
    msg = fault_of(faulty, "traps", (1,), (32,), [np.zeros(32, np.float32)])
    assert "line 35" in msg and "thread (5, 0, 0)" in msg, msg


def test_wrong_arguments_and_compile_errors_are_explained(faulty):
    msg = fault_of(faulty, "traps", (1,), (32,), [np.zeros(32, np.float32), 3])
    assert "takes (p) but the test passes (pi)" in msg, msg
    with pytest.raises(CpuCompileError, match=r"bad\.cu line 3: compile error"):
        cuda_cpu.compile_cpu('extern "C" __global__ void k(float* y) {\n  int i = 0;\n  y[i] = undefined_name;\n}\n',
                             "bad.cu", ["k"])


def test_compiles_are_cached_by_source(good):
    start = time.monotonic()
    again = cuda_cpu.compile_cpu(GOOD, "good.cu", GOOD_KERNELS)
    assert again.path == good.path and time.monotonic() - start < 2


def test_a_batch_builds_the_runtime_once_and_its_judges_use_it(tmp_path, monkeypatch):
    """Batch grading stages the executor's runtime object, compiled once, read-only, for every student's judge
    (whose cache starts empty: it would compile the runtime for each student); a ledger unit stages none."""
    import stat

    from grader.instructor import sandbox

    snapshot = sandbox.stage_repo(tmp_path / "snapshot", ["l23_online_softmax"])
    student = sandbox.stage_repo(tmp_path / "student", ["l23_online_softmax"], root=snapshot)  # copied, not rebuilt
    (built,) = (student / sandbox.PREBUILT / "cuda_cpu").glob("runtime-*/runtime.o")
    assert built.read_bytes() == next((snapshot / sandbox.PREBUILT).rglob("runtime.o")).read_bytes()
    assert built.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) == 0
    assert not (sandbox.stage_repo(tmp_path / "ledger", ["l02_ai_math"]) / sandbox.PREBUILT).exists()

    monkeypatch.setenv(cuda_cpu.CACHE_ENV, str(tmp_path / "empty_cache"))
    monkeypatch.setenv(cuda_cpu.PREBUILT_ENV, str(student / sandbox.PREBUILT / "cuda_cpu"))
    assert cuda_cpu._runtime_object() == built
    src = 'extern "C" __global__ void twice(const float* x, float* y) { y[threadIdx.x] = 2.0f * x[threadIdx.x]; }\n'
    runner = cuda_cpu.compile_cpu(src, "twice.cu", ["twice"])
    x, y = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    cuda_cpu.launch(runner, "twice", (1,), (32,), [x, y])
    assert np.array_equal(y, 2 * x)
    assert not list((tmp_path / "empty_cache").glob("runtime-*"))  # the prebuilt object was linked, none compiled
    monkeypatch.setenv(cuda_cpu.PREBUILT_ENV, str(tmp_path / "nothing_here"))  # none there: compiled, as before
    assert cuda_cpu._runtime_object().is_relative_to(tmp_path / "empty_cache")

    # The batch takes the object from the instructor's cache (make grade's) when it is there: nothing compiled.
    (tmp_path / "empty_cache" / "runtime-unused").mkdir()  # not this executor's version: ignored
    cached = cuda_cpu._runtime_object()
    cached.chmod(0o644)
    cached.write_bytes(b"the cached object")
    sandbox.prebuild(tmp_path / "from_cache", ["l23_online_softmax"])
    (staged,) = (tmp_path / "from_cache" / "cuda_cpu").glob("runtime-*/runtime.o")
    assert staged.read_bytes() == b"the cached object" and staged.parent.name == cached.parent.name


# Each .cu known implementation and its numba twin (the same kernel in numba.cuda, graded in numba's simulator)
# get the same correctness verdict.
TWINS = [
    ("l24_gemm", "known_wrong/cuda_sgemm_cu_no_tail_check.cu", "known_wrong/cuda_sgemm_ignores_k_tail.py"),
    ("l24_gemm", "known_wrong/cuda_sgemm_cu_naive.cu", "known_wrong/cuda_sgemm_naive.py"),
    ("l24_gemm", "known_right/cuda_sgemm_cu_padded_tiles.cu", "known_right/cuda_sgemm_tile8.py"),
    ("l23_online_softmax", "known_wrong/cuda_block_sum_smem_tree.cu", "known_right/cuda_block_sum_register_partial.py"),
]


@pytest.mark.parametrize("unit, cu, twin", TWINS)
def test_cu_known_implementations_agree_with_their_numba_twins(unit, cu, twin):
    a, b = (known.read(REPO / "tests" / unit / p) for p in (cu, twin))

    def rejected_in_correctness(impl) -> bool:
        return any("correctness" in tiers for tiers in impl.rejected_by.values())

    assert rejected_in_correctness(a) == rejected_in_correctness(b), (
        f"{cu} and its numba twin {twin} should get the same correctness verdict")


@pytest.mark.slow
def test_batch_grading_runs_the_executor_inside_the_sandbox(tmp_path, sandbox_runtime):
    """Batch grading: the .cu kernels compile (g++) and run in the student's sandbox; faults come back as messages."""
    import json
    import shutil

    from grader.instructor import batch, sandbox

    subs = tmp_path / "submissions"
    for student in ("honest", "tail_bug"):
        shutil.copytree(REPO / "solutions", subs / student, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "tests/l24_gemm/known_wrong/cuda_sgemm_cu_no_tail_check.cu", subs / "tail_bug/l24_gemm/sgemm.cu")
    limits = sandbox.Limits(wall_s=900, call_timeout_s=120, memory=3 * 2**30)
    batch.run_batch(batch.BatchOptions(subs, tmp_path / "out", jobs=2, units=("l24_gemm",), exercises=("sgemm_cu",),
                                       limits=limits))
    tests = {s: {t["name"].rsplit(" · ", 1)[-1]: t for t in json.loads(
        (tmp_path / "out" / s / "results.json").read_text())["tests"]} for s in ("honest", "tail_bug")}
    small = "test_sgemm_cu_matches[100-70-45]"
    assert tests["honest"][small]["status"] == "passed", (sandbox_runtime.describe(), tests["honest"][small])
    out = tests["tail_bug"][small]["output"]
    assert tests["tail_bug"][small]["status"] == "failed" and "past its end" in out, out
    assert re.search(r"sgemm\.cu line 3[67] \(`[ab]_tile\[ty\]\[tx\] = [AB]\[", out), out  # the unchecked load


# The four fault classes of the units' .cu known-wrong files, each with its line and its cause.
KNOWN_FAULTS = [
    ("l23_online_softmax/known_wrong/cuda_warp_sum_half_mask.cu", "block_sum_shfl", (1000, 3, 256),
     [r"warp primitive misuse at \S+ line 38 ", "not in the mask"]),
    ("l23_online_softmax/known_wrong/cuda_block_sum_missing_barrier.cu", "block_sum_shfl", (1000, 3, 256),
     ["race on shared memory", r"line 55 \(`v = lane < blockDim", r"line 53 \(`if \(lane == 0\) warp_totals"]),
    ("l23_online_softmax/known_wrong/cuda_block_reduce_template_last_warp_no_barrier.cu", "block_sum_shfl",
     (1000, 3, 256), ["race on shared memory", r"line 33 \(`v = lane < warps \? warp_totals",
                      r"line 30 \(`if \(lane == 0\) warp_totals\[warp\] = v;`\)"]),
    ("l24_gemm/known_wrong/cuda_sgemm_cu_no_tail_check.cu", "sgemm_tiled", (17, 5, 40),
     [r"out-of-bounds access at \S+ line 3[67] ", "past its end"]),
    ("l24_gemm/known_wrong/cuda_sgemm_cu_divergent_barrier.cu", "sgemm_tiled", (17, 5, 40),
     [r"divergent __syncthreads\(\)", r"line 40 \(`__syncthreads\(\);`\)", "has returned"]),
    ("l24_gemm/known_wrong/cuda_sgemm_cu_one_barrier.cu", "sgemm_tiled", (17, 5, 40),
     ["race on shared memory", "line 36", "line 40"]),
]


@pytest.mark.parametrize("path, kernel, shape, expected", KNOWN_FAULTS, ids=[Path(k[0]).stem for k in KNOWN_FAULTS])
def test_known_wrong_cu_files_fail_with_their_line_and_cause(path, kernel, shape, expected):
    text = (REPO / "tests" / path).read_text()
    runner = cuda_cpu.compile_cpu(text, Path(path).name, [kernel])
    if kernel == "block_sum_shfl":
        n, grid, block = shape
        args, launch = [np.ones(n, np.float32), np.zeros(grid, np.float32), n], ((grid,), (block,))
    else:
        m, n, k = shape
        a, b, c = np.ones((m, k), np.float32), np.ones((k, n), np.float32), np.zeros((m, n), np.float32)
        args, launch = [a, b, c, m, n, k], ((math.ceil(n / 16), math.ceil(m / 16)), (16, 16))
    msg = fault_of(runner, kernel, *launch, args)
    for pattern in expected:
        assert re.search(pattern, msg), f"{pattern!r} not in: {msg}"
