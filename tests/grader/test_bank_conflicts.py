"""The shared-memory bank-conflict count (grader.instrument.cuda.bank_conflicts: NVRTC's PTX interpreted by
grader.instrument.ptx, its outputs held against the CPU executor's), on hand-made kernels.

A warp request is the lanes of a warp that run one shared-memory instruction together; its degree is the most
distinct 4-byte words one of the 32 banks serves (same word: a broadcast).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grader.core.target import SubmissionError
from grader.instrument import cuda, cuda_cpu

pytestmark = pytest.mark.skipif(not cuda_cpu.available(), reason="the CPU executor needs g++ on x86-64 Linux")

SOURCE = r"""
extern "C" __global__ void strided(float* out, int stride) {
    __shared__ float s[32 * 64];
    const int t = threadIdx.x;
    for (int i = t; i < 32 * 64; i += blockDim.x) s[i] = (float)i;
    __syncthreads();
    out[t] = s[(t * stride) % (32 * 64)];
}

extern "C" __global__ void broadcast(float* out) {
    __shared__ float b[32];
    b[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = b[0] + b[threadIdx.x / 4];
}

extern "C" __global__ void tiles(float* out, int col) {
    __shared__ float padded[32][33];
    __shared__ float plain[32][32];
    const int t = threadIdx.x;
    for (int c = 0; c < 32; ++c) {
        padded[t][c] = (float)c;
        plain[t][c] = (float)c;
    }
    __syncthreads();
    const float a = padded[t][col];
    const float b = plain[t][col];
    out[t] = a + b;
}

extern "C" __global__ void vectors(float* out) {
    __shared__ float4 v[64];
    __shared__ double d[64];
    const int t = threadIdx.x;
    v[t] = make_float4(1.0f, 2.0f, 3.0f, 4.0f);
    d[t] = 1.0;
    __syncthreads();
    const float4 x = v[t];       // 16 B per lane: four phases of 8 lanes, conflict-free
    const double y = d[2 * t];   // 8 B, stride 16 B: two phases of 16 lanes, 2-way
    out[t] = x.x + x.w + (float)y;
}

extern "C" __global__ void dynamic(float* out, int stride) {
    extern __shared__ float dyn[];
    const int t = threadIdx.x;
    dyn[t * stride] = 1.0f;
    __syncthreads();
    out[t] = dyn[t * stride];
}
"""


def count(kernel: str, *args: object, threads: int = 32, shared_bytes: int = 0) -> cuda_cpu.BankConflicts:
    out = np.zeros(threads, np.float32)
    return cuda.bank_conflicts(cuda.CudaSource(Path("banks.cu"), "banks.cu", SOURCE), kernel, (1,), (threads,),
                               [out, *args], shared_bytes=shared_bytes)


def reads_at(banks: cuda_cpu.BankConflicts, text: str, array: str) -> cuda_cpu.LineConflicts:
    rows = [c for c in banks.touching(array, "read") if text in c.text]
    assert len(rows) == 1, f"one read of {array} at a line holding {text!r}: {banks.summary()}"
    return rows[0]


def test_stride_one_is_conflict_free():
    banks = count("strided", 1)
    row = reads_at(banks, "out[t] = s[", "s")
    assert (row.degree, row.count, row.requests) == (1, 0, 1), banks.summary()


def test_stride_32_is_32_way():
    banks = count("strided", 32, threads=64)
    row = reads_at(banks, "out[t] = s[", "s")
    assert (row.degree, row.count, row.requests) == (32, 2, 2), banks.summary()  # two warps, each 32-way
    assert row.wavefronts == 64 and row.line == SOURCE.splitlines().index(
        "    out[t] = s[(t * stride) % (32 * 64)];") + 1
    assert "32-way conflict in 2 of 2 warp requests" in row.describe() and "[s]" in row.describe()
    writes = [c for c in banks.touching("s", "write")]
    assert writes and all(c.degree == 1 for c in writes), banks.summary()  # the fill loop: consecutive words


def test_stride_two_is_2_way():
    row = reads_at(count("strided", 2), "out[t] = s[", "s")
    assert row.degree == 2


def test_same_word_is_a_broadcast():
    banks = count("broadcast")
    row = reads_at(banks, "b[0] + b[threadIdx.x / 4]", "b")
    assert row.degree == 1 and row.requests == 2, banks.summary()  # b[0]: one word; b[t / 4]: 4 lanes a word


def test_padded_tile_is_conflict_free_and_the_plain_one_is_not():
    banks = count("tiles", 5)
    assert reads_at(banks, "padded[t][col]", "padded").degree == 1
    assert reads_at(banks, "plain[t][col]", "plain").degree == 32
    row_writes = banks.touching("plain", "write")
    assert row_writes and max(c.degree for c in row_writes) == 32  # each lane writes its own row: column order


def test_wide_accesses_are_counted_per_phase():
    banks = count("vectors")
    assert reads_at(banks, "x = v[t]", "v").degree == 1
    assert reads_at(banks, "y = d[2 * t]", "d").degree == 2


def test_dynamic_shared_memory_is_counted():
    banks = count("dynamic", 32, shared_bytes=32 * 32 * 4)
    row = reads_at(banks, "out[t] = dyn[", "dyn")
    assert row.degree == 32


def test_the_count_travels_as_plain_data():
    banks = count("tiles", 0)
    again = cuda_cpu.BankConflicts.from_dict(banks.as_dict())
    assert again == banks and again.degree == 32 and again.conflicted()


def test_a_kernel_nvrtc_reads_otherwise_than_g_plus_plus_is_refused(monkeypatch):
    """The count is of NVRTC's kernel, the results checked are g++'s: where the two compute different results (a file
    that tells the compilers apart, R3.1) the count is refused. Here NVRTC is handed another stride than g++."""
    honest = count("strided", 1)
    assert reads_at(honest, "out[t] = s[", "s").degree == 1
    original = cuda.cu_source.for_nvrtc
    monkeypatch.setattr(cuda.cu_source, "for_nvrtc",
                        lambda text: original(text.replace("s[(t * stride) % (32 * 64)]", "s[(t * 33) % (32 * 64)]")))
    cuda._compile_cached.cache_clear()
    try:
        with pytest.raises(SubmissionError, match=r"NVRTC compiled .* compute different results: `out` element 1"):
            count("strided", 1)
    finally:
        cuda._compile_cached.cache_clear()


def test_the_count_is_the_judges_not_the_launch_process():
    """The count comes from the interpreted PTX: the executor's launch process prints no BANK lines any more, so a
    kernel that hides its accesses from it (memcpy) or prints forged lines changes nothing."""
    source = SOURCE.replace("out[t] = s[(t * stride) % (32 * 64)];",
                            "float v; memcpy(&v, &s[(t * stride) % (32 * 64)], sizeof(float) * (stride > 0)); "
                            "out[t] = v;")
    banks = cuda.bank_conflicts(cuda.CudaSource(Path("banks.cu"), "banks.cu", source), "strided", (1,), (32,),
                                [np.zeros(32, np.float32), 32])
    assert max(c.degree for c in banks.touching("s", "read")) == 32, banks.summary()
