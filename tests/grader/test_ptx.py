"""The PTX interpreter (grader.instrument.ptx) on small kernels NVRTC compiles: what it computes, how its lanes
diverge and reconverge, barriers, shuffles, atomics, and the refusal of what it does not model."""

from __future__ import annotations

import numpy as np
import pytest

from grader.instrument import cu_source, cuda, ptx

SOURCE = r"""
extern "C" __global__ void arith(const float* x, float* y, int* k, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float v = x[i];
    y[i] = fmaf(v, 2.0f, 1.0f) / 3.0f + sqrtf(fabsf(v)) - fminf(v, 0.5f) + expf(-v * v);
    k[i] = (i * 7 - 20) / 3 + (i % 5) - (i >> 1) + (int)(v * 10.0f) + (int)((unsigned)i * 3u % 7u);
}

extern "C" __global__ void diverge(int* out) {
    const int t = threadIdx.x;
    int v = 0;
    if (t % 3 == 0) {
        for (int j = 0; j < t; ++j) v += j;
    } else if (t % 3 == 1) {
        v = -t;
    } else {
        v = t * t;
    }
    out[t] = v + 1000;
}

extern "C" __global__ void reverse(float* a) {
    __shared__ float s[256];
    const int t = threadIdx.x;
    s[t] = a[t];
    __syncthreads();
    a[t] = s[blockDim.x - 1 - t];
}

extern "C" __global__ void warp_sum(const float* x, float* out, unsigned* ballots) {
    const int t = threadIdx.x;
    float v = x[t];
    for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
    const float b = __shfl_xor_sync(0xffffffffu, x[t], 1);
    const unsigned m = __ballot_sync(0xffffffffu, x[t] > 0.0f);
    if ((t & 31) == 0) out[t / 32] = v;
    out[64 + t] = b;
    ballots[t] = m;
}

extern "C" __global__ void histogram(const int* keys, int* bins, float* total) {
    __shared__ int local[8];
    const int t = threadIdx.x;
    if (t < 8) local[t] = 0;
    __syncthreads();
    atomicAdd(&local[keys[t] & 7], 1);
    atomicAdd(total, 0.5f);
    __syncthreads();
    if (t < 8) atomicAdd(&bins[t], local[t]);
}

extern "C" __global__ void spin(volatile int* flag) {
    while (flag[0] == 0) {
    }
}

extern "C" __global__ void clock_it(long long* out) {
    out[threadIdx.x] = clock64();
}
"""


@pytest.fixture(scope="module")
def compiled() -> str:
    return cuda.compile_cu(cu_source.for_nvrtc(SOURCE), "kernels.cu", options=("--generate-line-info",)).ptx


def line_of(code: str) -> int:
    return next(i for i, text in enumerate(SOURCE.splitlines(), 1) if code in text)


def run(ptx_text: str, name: str, grid, block, args, **kw) -> ptx.Counted:
    return ptx.interpret(ptx_text, "kernels.cu", name, grid, block, args, **kw)


def test_arithmetic_matches_the_c_semantics(compiled):
    n = 70
    x = np.linspace(-3, 3, n).astype(np.float32)
    got = run(compiled, "arith", (3,), (32,), [x, np.zeros(n, np.float32), np.zeros(n, np.int32), n])
    y, k = got.buffers[1], got.buffers[2]
    v = x.astype(np.float64)
    want_y = (v * 2 + 1) / 3 + np.sqrt(np.abs(v)) - np.minimum(v, 0.5) + np.exp(-v * v)
    np.testing.assert_allclose(y, want_y, rtol=1e-5, atol=1e-6)
    i = np.arange(n)
    want_k = np.trunc((i * 7 - 20) / 3).astype(int) + i % 5 - (i >> 1) + np.trunc(x * np.float32(10)).astype(int) \
        + (i * 3 % 7)
    assert k.tolist() == want_k.tolist()


def test_divergent_paths_and_loops_reconverge(compiled):
    got = run(compiled, "diverge", (1,), (64,), [np.zeros(64, np.int32)])
    t = np.arange(64)
    want = np.where(t % 3 == 0, t * (t - 1) // 2, np.where(t % 3 == 1, -t, t * t)) + 1000
    assert got.buffers[0].tolist() == want.tolist()


def test_a_barrier_orders_shared_memory_and_the_reads_are_counted(compiled):
    a = np.arange(256, dtype=np.float32)
    got = run(compiled, "reverse", (1,), (256,), [a])
    assert got.buffers[0].tolist() == a[::-1].tolist()
    assert a.tolist() == list(range(256))  # the caller's array is a copy
    reads = [s for s in got.stats if s.kind == "read"]
    assert len(reads) == 1 and reads[0].requests == 8 and reads[0].degree == 1 and reads[0].arrays == {"s"}


def test_shuffles_and_ballots_work_per_warp(compiled):
    x = np.random.default_rng(0).standard_normal(64).astype(np.float32)
    got = run(compiled, "warp_sum", (1,), (64,), [x, np.zeros(128, np.float32), np.zeros(64, np.uint32)])
    out, ballots = got.buffers[1], got.buffers[2]
    np.testing.assert_allclose(out[[0, 1]], [x[:32].sum(), x[32:].sum()], rtol=1e-5)
    assert out[64:].tolist() == x[np.arange(64) ^ 1].tolist()
    for w in range(2):
        bits = sum(1 << j for j in range(32) if x[32 * w + j] > 0)
        assert set(ballots[32 * w: 32 * w + 32].tolist()) == {bits}


def test_atomics_on_shared_and_global_memory(compiled):
    keys = np.arange(96, dtype=np.int32) * 5
    got = run(compiled, "histogram", (2,), (96,), [keys, np.zeros(8, np.int32), np.zeros(1, np.float32)])
    want = np.bincount(keys & 7, minlength=8) * 2
    assert got.buffers[1].tolist() == want.tolist()
    assert got.buffers[2].tolist() == [96.0]  # 192 additions of 0.5


def test_an_instruction_it_does_not_model_is_named_with_its_line(compiled):
    with pytest.raises(ptx.PtxUnsupported) as err:
        run(compiled, "clock_it", (1,), (32,), [np.zeros(32, np.int64)])
    msg = str(err.value)
    assert "mov.u64" in msg and "%clock64" in msg and "PTX line" in msg
    assert f"kernels.cu line {line_of('clock64()')}" in msg


def test_an_access_outside_a_buffer_is_a_fault_with_its_line(compiled):
    with pytest.raises(ptx.PtxFault, match=rf"out-of-bounds read.*kernels.cu line {line_of('s[t] = a[t]')}"):
        run(compiled, "reverse", (1,), (256,), [np.zeros(100, np.float32)])


def test_a_kernel_that_never_ends_is_stopped(compiled, monkeypatch):
    monkeypatch.setattr(ptx, "STEP_LIMIT", 10_000)
    with pytest.raises(ptx.PtxFault, match=r"more than 10,000 instruction steps.*kernels.cu line"):
        run(compiled, "spin", (1,), (32,), [np.zeros(1, np.int32)])


def test_shared_symbols_are_demangled():
    assert ptx.demangle_shared("_ZZ9flash_fwdE2Ks") == "Ks"
    assert ptx.demangle_shared("_ZZ11BlockReduceIfLi32E3SumET_S1_RKT1_S1_E7partial") == "partial"
    assert ptx.demangle_shared("dyn") == "dyn"
