"""grader/instrument/cuda.py: NVRTC compiles and reports, the simulator's traced traffic, .cu stubs and known files."""

from __future__ import annotations

import os
import sys
import textwrap

import numpy as np
import pytest

from grader.authoring import known
from grader.core import stubs
from grader.core.target import SubmissionError
from grader.instrument import cuda, loader

os.environ.setdefault(cuda.SIM_ENV, "1")

PRELUDE = "#ifndef DRIPSTONE_TODO\n#define DRIPSTONE_TODO(task) __trap()\n#endif\n"
SHFL = PRELUDE + textwrap.dedent("""\
    extern "C" __global__ void warp_total(const float* x, float* out) {
        float v = x[threadIdx.x];
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (threadIdx.x == 0) out[blockIdx.x] = v;
    }
    extern "C" __global__ void smem_total(const float* x, float* out) {
        __shared__ float s[256];
        s[threadIdx.x] = x[threadIdx.x];
        __syncthreads();
        for (int o = 128; o > 0; o >>= 1) {
            if (threadIdx.x < o) s[threadIdx.x] += s[threadIdx.x + o];
            __syncthreads();
        }
        if (threadIdx.x == 0) out[blockIdx.x] = s[0];
    }
""")


# ---- NVRTC ------------------------------------------------------------------------------------


def test_compile_reports_resources_and_ptx():
    c = cuda.compile_cu(SHFL, "demo.cu")
    assert set(c.resources) == {"warp_total", "smem_total"}
    assert c.kernel("smem_total").smem_bytes == 1024 and c.kernel("warp_total").smem_bytes == 0
    assert c.kernel("warp_total").spill_stores == 0 and c.kernel("warp_total").registers > 0
    assert cuda.ptx_instructions(c.ptx_of("warp_total"), "shfl.sync")
    assert not cuda.ptx_instructions(c.ptx_of("smem_total"), "shfl.sync")
    assert cuda.ptx_instructions(c.ptx_of("smem_total"), "bar.sync")
    assert c.cubin[:4] == b"\x7fELF"
    with pytest.raises(SubmissionError, match="no kernel `missing`"):
        c.kernel("missing")


def test_parse_ptxas_counts_spills():
    log = textwrap.dedent("""\
        ptxas info    : Compiling entry function 'k' for 'sm_90'
        ptxas info    : Function properties for k
            40 bytes stack frame, 36 bytes spill stores, 28 bytes spill loads
        ptxas info    : Used 255 registers, used 1 barriers, 4224 bytes smem
    """)
    assert cuda.parse_ptxas(log)["k"] == cuda.KernelResources("k", 255, 4224, 40, 36, 28)


def test_compile_error_names_the_line():
    src = PRELUDE + 'extern "C" __global__ void k(float* y) {\n    y[0] = undefined_name;\n}\n'
    with pytest.raises(cuda.CudaCompileError, match=r"bad\.cu line 5: compile error: .*undefined_name"):
        cuda.compile_cu(src, "bad.cu")


def test_stub_region_is_todo_and_compiles():
    solution = PRELUDE + textwrap.dedent("""\
        extern "C" __global__ void k(float* y) {
            // TODO: store 1 into y[0]
            // ### BEGIN SOLUTION
            y[0] = 1.f;
            // ### END SOLUTION
        }
        extern "C" __global__ void done(float* y) { y[0] = 2.f; }
    """)
    stub = stubs.make_stub(solution, suffix=".cu")
    assert 'DRIPSTONE_TODO("TODO: store 1 into y[0]");' in stub and "y[0] = 1.f" not in stub
    src = cuda.CudaSource(None, "stub.cu", stub)
    with pytest.raises(NotImplementedError, match=r"TODO: store 1 into y\[0\] \(stub\.cu line 6, in `k`\)"):
        src.require_done("done", "k")
    src.require_done("done")
    assert set(src.compile().resources) == {"k", "done"}


def test_stub_region_outside_a_function_is_refused():
    with pytest.raises(stubs.StubError, match="inside a function body"):
        stubs.make_stub("// TODO: x\n// ### BEGIN SOLUTION\nint x;\n// ### END SOLUTION\n", suffix=".cu")


def test_known_cu_file_replaces_the_module(tmp_path, monkeypatch):
    unit = tmp_path / "tests" / "l99_demo" / "known_wrong"
    unit.mkdir(parents=True)
    f = unit / "cuda_no_shuffle.cu"
    f.write_text(
        '// Classic bug: sums through shared memory,\n// no shuffle.\n// MODULE = "red"\n'
        '// REJECTED_BY = {"warp_total": ["efficiency"]}\nint replaced;\n'
    )
    impl = known.read(f)
    assert impl.doc == "Classic bug: sums through shared memory, no shuffle."
    assert (impl.module, impl.rejected_by) == ("red", {"warp_total": ("efficiency",)})
    sol = tmp_path / "solutions" / "l99_demo"
    sol.mkdir(parents=True)
    (sol / "red.cu").write_text("original")
    (sol / "other.py").write_text("x = 1")
    monkeypatch.setattr(known, "REPO_ROOT", tmp_path)
    dest = known.build_target(impl, tmp_path / "target")
    assert (dest / "l99_demo" / "red.cu").read_text() == f.read_text()
    assert (dest / "l99_demo" / "other.py").read_text() == "x = 1"


# ---- the simulator ------------------------------------------------------------------------------


# Kernels live at module level: the simulator swaps the global that names numba.cuda while they run.
sim = cuda.sim_cuda()


@sim.jit
def copy_rows(x, y):  # thread i of a warp reads x[i]: 4 sectors per fp32 warp request
    i = sim.grid(1)
    if i < x.shape[0]:
        y[i] = x[i]


@sim.jit
def copy_strided(x, y, stride):  # thread i reads x[i * stride]
    i = sim.grid(1)
    if i * stride < x.shape[0]:
        y[i] = x[i * stride]


@sim.jit
def column_read(y):
    padded = sim.shared.array((32, 33), np.float32)
    square = sim.shared.array((32, 32), np.float32)
    t = sim.threadIdx.x
    for r in range(32):
        padded[r, t] = r
        square[r, t] = r
    sim.syncthreads()
    y[t] = padded[t, 0] + square[t, 0]  # a column of each tile


@sim.jit
def reads_unwritten(y):
    s = sim.shared.array(32, np.float32)
    y[sim.threadIdx.x] = s[sim.threadIdx.x]


@sim.jit
def gather_shared(y):
    s = sim.shared.array(256, np.float32)
    t = sim.threadIdx.x
    s[t] = t
    sim.syncthreads()
    y[t] = s[255 - t]


@sim.jit
def off_by_one(x, y):
    i = sim.grid(1)
    y[i] = x[i - 1]


@pytest.mark.parametrize("stride, sectors", [(1, 4), (2, 8), (4, 16), (8, 32), (32, 32)])
def test_sim_counts_sectors_per_warp(stride, sectors):
    x = np.arange(32 * stride, dtype=np.float32)
    y = sim.device_array(32, np.float32)
    with cuda.sim_traffic() as t:
        copy_strided[1, 32](sim.to_device(x), y, stride)
    assert (t.launches, t.load_requests, t.load_sectors, t.store_sectors) == (1, 1, sectors, 4)
    assert t.bytes_loaded == t.bytes_stored == 128


def test_sim_bank_conflicts_and_poisoned_shared_memory():
    y = sim.device_array(32, np.float32)
    with cuda.sim_traffic() as t:
        column_read[1, 32](y)
    # 64 conflict-free row stores; the padded column read (pitch 33 words) spreads over 32 banks,
    # the square one (pitch 32) hits one bank 32 times
    assert (t.shared_requests, t.shared_wavefronts, t.max_conflict_degree) == (66, 64 + 1 + 32, 32)
    assert np.array_equal(y.copy_to_host(), 2 * np.arange(32))
    assert cuda.bank_conflict_degree_of({4 * 32 * i for i in range(32)}) == 32
    assert cuda.bank_conflict_degree_of({0} | {4 * 32 * i for i in range(2)}) == 2
    assert cuda.bank_conflict_degree_of({0, 4, 128 + 4}) == 2
    reads_unwritten[1, 32](y)
    assert np.isnan(y.copy_to_host()).all()


def test_run_sim_kernel_checks_the_output_and_refuses_negative_indices():
    x = np.arange(40, dtype=np.float32)

    def full(d):
        y = sim.device_array(40, np.float32)
        copy_rows[2, 32](d, y)
        return y

    def short_grid(d):
        y = sim.device_array(40, np.float32)
        copy_rows[1, 32](d, y)
        return y

    out, t = cuda.run_sim_kernel("copy", full, x)
    assert np.array_equal(out, x) and t.blocks == 2
    with pytest.raises(AssertionError, match="8 of 40 output elements were never written"):
        cuda.run_sim_kernel("copy", short_grid, x)
    with pytest.raises(AssertionError, match="read a device array on the host"):
        cuda.run_sim_kernel("copy", lambda d: sim.to_device(d.copy_to_host()), x)

    with pytest.raises(IndexError, match="negative"):
        off_by_one[1, 4](sim.to_device(x), sim.device_array(4, np.float32))


def test_sim_shared_array_is_one_per_block_under_preemption():
    """All threads of a block get the same shared array even when the interpreter switches threads constantly."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(3):
            y = sim.device_array(256, np.float32)
            gather_shared[1, 256](y)
            assert np.array_equal(y.copy_to_host(), np.arange(255, -1, -1))
    finally:
        sys.setswitchinterval(old)


@sim.jit
def barrier_after_early_exit(y, n):  # threads t >= n return before the barrier; the others pass it twice
    s = sim.shared.array(64, np.float32)
    t = sim.threadIdx.x
    if t >= n:
        return
    s[t] = t
    sim.syncthreads()
    v = s[n - 1 - t]
    sim.syncthreads()
    s[t] = v * 2
    sim.syncthreads()
    y[t] = s[t] + sim.syncthreads_count(t % 2 == 0)


@sim.jit
def raises_in_one_thread(y):
    t = sim.threadIdx.x
    sim.syncthreads()
    if t == 5:
        y[t] = y[1000]  # out of bounds in one thread only, after a barrier
    sim.syncthreads()
    y[t] = t


def test_sim_barrier_counts_only_live_threads_and_one_fault_stops_the_block():
    """The block scheduler (the grader's, numba's polled every thread): a barrier opens when every thread still
    running waits at it, several barriers in a row, syncthreads_count, a fault in one thread raised (naming it)."""
    for n in (64, 40, 1):
        y = sim.device_array(64, np.float32)
        y.copy_to_device(np.full(64, -7, np.float32))
        barrier_after_early_exit[1, 64](y, n)
        t = np.arange(n)
        got = y.copy_to_host()
        assert np.array_equal(got[:n], 2 * (n - 1 - t) + (n + 1) // 2)
        assert (got[n:] == -7).all()
    with pytest.raises(IndexError, match=r"tid=\[5, 0, 0\]"):
        raises_in_one_thread[1, 32](sim.device_array(32, np.float32))
    y = sim.device_array(64, np.float32)
    barrier_after_early_exit[2, 64](y, 64)  # and the scheduler is reusable afterwards, block after block
    assert np.array_equal(y.copy_to_host(), 2 * np.arange(63, -1, -1) + 32)


def test_known_py_and_cu_may_not_share_a_name(tmp_path, monkeypatch):
    folder = tmp_path / "tests" / "l99_demo" / "known_wrong"
    folder.mkdir(parents=True)
    (folder / "naive.py").write_text('"""Bug."""\nMODULE = "m"\nREJECTED_BY = {"f": ["efficiency"]}\n')
    (folder / "naive.cu").write_text('// Bug.\n// MODULE = "k"\n// REJECTED_BY = {"g": ["efficiency"]}\n')
    monkeypatch.setattr(known, "REPO_ROOT", tmp_path)
    with pytest.raises(ValueError, match=r"exist twice \(\.py, \.cu or \.cpp\)"):
        known.known_impls("l99_demo", "known_wrong")
    (folder / "naive.cu").rename(folder / "naive_cu.cu")
    assert [k.name for k in known.known_impls("l99_demo", "known_wrong")] == [
        "l99_demo/known_wrong/naive", "l99_demo/known_wrong/naive_cu"]


@pytest.mark.parametrize("path", sorted((cuda.target.REPO_ROOT / "kernels_ref").glob("*.cu")), ids=lambda p: p.name)
def test_reference_cuda_kernels_compile_without_spills(path):
    """kernels_ref/*.cu: every kernel compiles for sm_90 with NVRTC, without spills or a stack frame."""
    compiled = cuda.compile_cu(path.read_text(), path.name)
    assert compiled.resources, f"{path.name}: no extern \"C\" __global__ kernel"
    for r in compiled.resources.values():
        assert r.spill_stores == r.spill_loads == r.stack_bytes == 0, r.summary()


# ---- Triton's interpreter (the CPU tiers of Triton kernels): feedback ---------------------------------------------


def test_interpreted_static_assert_names_the_kernels_line():
    """A failed tl.static_assert said only its message (issue 35): it names the file, the line and the call."""
    pytest.importorskip("triton")
    from grader.instrument import interpreter_fixes
    from grader.judge import harness

    interpreter_fixes.install()
    with loader.triton_mode(interpret=True):
        import torch
        import triton
        import triton.language as tl

        @triton.jit
        def fill(x_ptr, BLOCK: tl.constexpr):
            tl.static_assert(BLOCK % 32 == 0, "BLOCK must be a multiple of 32")
            tl.store(x_ptr + tl.arange(0, 32), 1.0)

        x = torch.zeros(64)
        harness._unwrap_interpreter_error(lambda: fill[(1,)](x, BLOCK=64))  # holds: nothing raised
        with pytest.raises(AssertionError) as exc:
            harness._unwrap_interpreter_error(lambda: fill[(1,)](x, BLOCK=48))
    line = fill.fn.__code__.co_firstlineno + 2
    assert str(exc.value) == (f"tl.static_assert failed at tests/grader/test_cuda.py:{line} "
                              '(`tl.static_assert(BLOCK % 32 == 0, "BLOCK must be a multiple of 32")`): '
                              "BLOCK must be a multiple of 32"), str(exc.value)


@sim.jit
def sum_in_one_thread(x, y):
    if sim.threadIdx.x == 0:
        y[0] = x.sum()


def _laundered(read):
    """A launcher that reads its input on the host with ``read`` and has a kernel copy the result: every output
    element is stored by a kernel, so only the refusal of the host read stops it."""

    def launch(d):
        y = sim.device_array(40, np.float32)
        copy_rows[2, 32](sim.to_device(np.ascontiguousarray(read(d), dtype=np.float32)), y)
        return y

    return launch


@pytest.mark.parametrize("read, what", [
    (lambda d: np.asarray(d), "read a device array on the host"),
    (lambda d: [d[i] for i in range(40)], r"`__getitem__`"),
    (lambda d: d.copy(), r"`\.copy`"),
    (lambda d: d.tolist(), r"`\.tolist`"),
    (lambda d: d * 1, r"`__mul__`"),
    (lambda d: np.array(list(d)), "read a device array on the host"),
    (lambda d: d.reshape(40).T.view(np.float32).__array__(), r"`\.__array__`"),
    (lambda d: np.frombuffer(d.data, dtype=np.float32), r"`\.data`"),
])
def test_every_host_read_of_a_device_array_is_refused(read, what):
    """Not only copy_to_host: NumPy's protocols, elements, iteration, the backing array's methods and buffer,
    arithmetic; views and metadata stay allowed, and the same reads pass again once the exercise's call is over."""
    x = np.arange(40, dtype=np.float32)
    with pytest.raises(AssertionError, match=what):
        cuda.run_sim_kernel("copy", _laundered(read), x)

    def metadata_and_views(d):
        assert (d.shape, d.ndim, d.dtype, d.size, len(d)) == ((40,), 1, np.float32, 40, 40)
        y = sim.device_array_like(d.reshape(40))
        copy_rows[2, 32](d.T, y)
        return y

    out, _ = cuda.run_sim_kernel("copy", metadata_and_views, x)
    assert np.array_equal(out, x) and np.array_equal(np.asarray(sim.to_device(x)), x)


def test_a_kernel_reading_a_whole_device_array_by_attribute_is_refused():
    def launch(d):
        y = sim.device_array(40, np.float32)
        sum_in_one_thread[1, 32](d, y)
        return y

    with pytest.raises(AssertionError, match=r"asked a device array for `\.sum`"):
        cuda.run_sim_kernel("sum", launch, np.arange(40, dtype=np.float32))


_CAPTURED: list = []


@sim.jit
def copy_from_captured(y):
    i = sim.grid(1)
    if i < y.size:
        y[i] = _CAPTURED[0][i]


def test_a_kernel_reading_a_device_array_it_was_not_passed_is_refused():
    """A device array a kernel reaches through a global, not its arguments, is read untraced: refused."""
    def launch(d):
        _CAPTURED[:] = [d]
        y = sim.device_array(40, np.float32)
        copy_from_captured[2, 32](y)
        return y

    try:
        with pytest.raises(AssertionError, match="not one of its arguments"):
            cuda.run_sim_kernel("captured", launch, np.arange(40, dtype=np.float32))
    finally:
        _CAPTURED.clear()


@pytest.mark.parametrize("path", ["l23_online_softmax/cuda_reduce.cu", "l24_gemm/sgemm.cu"])
def test_line_info_changes_neither_resources_nor_instructions(path):
    """Every PTX check reads one compile with line info (cuda.LINE_INFO, for the bank-conflict count's line map):
    sound only while line info changes neither ptxas' resources nor the instructions, only the debug sections."""
    from grader.core.target import REPO_ROOT
    from grader.instrument import cu_source

    text = cu_source.for_nvrtc((REPO_ROOT / "solutions" / path).read_text())
    plain = cuda.compile_cu(text, path)
    with_info = cuda.CudaSource(REPO_ROOT / "solutions" / path, path, (REPO_ROOT / "solutions" / path).read_text())
    lined = with_info.compile()
    assert ".loc" in lined.ptx and ".loc" not in plain.ptx  # the checks' compile carries the line map
    assert lined.resources == plain.resources
    for prefix in ("ld.", "st.", "shfl.", "bar.", "atom.", "fma.", "add.", "mul.", "setp.", "bra", "mma"):
        assert cuda.ptx_instructions(lined.ptx, prefix) == cuda.ptx_instructions(plain.ptx, prefix), prefix
    assert cuda.ptx_instructions(plain.ptx, "ld.")  # the comparison saw instructions
