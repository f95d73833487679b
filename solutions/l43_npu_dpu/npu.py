"""L43 · the NPU's layout: Ascend's NZ fractal format, what TransData costs, and a backend probe.

Lecture 43 (08_Post-Training与相邻Infra_M7/43_NPU_DPU与异构加速器硬件抽象.md): an accelerator's matrix
unit dictates the memory layout. Ascend's Cube multiplies 16 × 16 × 16 fp16 per cycle
(4096 MACs = 8192 FLOPs per cycle per AI Core) and reads its operands as contiguous 16 × 16
fractals, so matrices live in NZ layout:

    * the H × W matrix is padded with a pad value up to H_p = ⌈H/h0⌉·h0 and W_p = ⌈W/w0⌉·w0;
    * it is cut into h0 × w0 blocks, H1 = H_p/h0 block-rows by W1 = W_p/w0 block-columns;
    * blocks are stored block-column by block-column ('N': down the first block-column, then the
      next), and each block row-major inside ('Z');

so element (r, c) sits at

    ((c // w0)·H1 + r // h0)·h0·w0 + (r % h0)·w0 + c % w0.

For a 4 × 4 matrix of 0..15 with (h0, w0) = (2, 2) the buffer is
[0, 1, 4, 5,  8, 9, 12, 13,  2, 3, 6, 7,  10, 11, 14, 15]: block (0,0), block (1,0), block (0,1),
block (1,1). CANN calls this FRACTAL_NZ: shape (..., W1, H1, H0, W0).

Converting between ND (row-major) and NZ (the TransData operator) is a full read of one layout
and a full write of the other through HBM; with padding the NZ side is larger than the matrix.

A hardware abstraction layer probes backends in a fixed order: Ascend (torch_npu importable and
torch.npu.is_available()), then torch.cuda.is_available(), where ROCm builds answer True too and
only torch.version.hip (a version string on ROCm, None on CUDA builds) tells them apart; then CPU.
ROCm reuses the "cuda" device type, so its devices are "cuda:i".

Units: bytes and offsets are exact ints, times seconds, bandwidth bytes/s (decimal). Invalid
arguments raise ValueError naming the argument.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

# Lecture 43 §3.1 / §5.1: the Cube unit does a 16 × 16 × 16 fp16 matrix multiply-accumulate per cycle.
CUBE_M = CUBE_N = CUBE_K = 16
CUBE_FLOPS_PER_CYCLE = 2 * CUBE_M * CUBE_N * CUBE_K  # 8192 (a MAC is 2 FLOPs)
# Lecture 43 §5.1: an Ascend 910B-class chip with 32 AI Cores at 1.8 GHz.
ASCEND_AI_CORES = 32
ASCEND_CLOCK_HZ = 1.8e9
ASCEND_FP16_PEAK_FLOPS = ASCEND_AI_CORES * CUBE_FLOPS_PER_CYCLE * ASCEND_CLOCK_HZ  # 4.718592e14

BACKENDS = ("npu", "cuda", "rocm", "cpu")


def _check_real(name: str, value: object, *, above_zero: bool = False) -> float:
    """A finite real number >= 0 (> 0 with ``above_zero``), or ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < 0 or (above_zero and value == 0):
        raise ValueError(f"{name} must be {'> 0' if above_zero else '>= 0'}, got {value}")
    return float(value)


def _check_matrix(matrix: object) -> tuple[int, int]:
    """(H, W) of a non-empty rectangular sequence of rows, or ValueError naming ``matrix`` / ``matrix[i]``."""
    if isinstance(matrix, str | bytes) or not isinstance(matrix, Sequence) or len(matrix) == 0:
        raise ValueError(f"matrix must be a non-empty sequence of rows, got {matrix!r}")
    width = None
    for i, row in enumerate(matrix):
        if isinstance(row, str | bytes) or not isinstance(row, Sequence):
            raise ValueError(f"matrix[{i}] must be a sequence of numbers, got {row!r}")
        if width is None:
            if len(row) == 0:
                raise ValueError("matrix has an empty first row: a matrix is at least 1 × 1")
            width = len(row)
        elif len(row) != width:
            raise ValueError(f"matrix[{i}] has {len(row)} entries, matrix[0] has {width}: the matrix is ragged")
    return len(matrix), width


def nz_offset(r: int, c: int, h: int, w: int, h0: int = 16, w0: int = 16) -> int:
    """Offset of element (r, c) of an h × w matrix in its NZ buffer (fractal h0 × w0).

        H1 = ⌈h / h0⌉
        offset = ((c // w0)·H1 + r // h0)·h0·w0 + (r % h0)·w0 + c % w0

    Blocks go down each block-column first ('N'), elements row-major inside a block ('Z'); the
    offset addresses the padded buffer of ⌈h/h0⌉·h0 × ⌈w/w0⌉·w0 elements.
    Example: nz_offset(17, 20, 32, 48) = 788 (block (1, 1) is the 4th block: 3·256 + 1·16 + 4);
    nz_offset(1, 2, 4, 4, 2, 2) = 10.

    Raises ValueError naming ``h``, ``w``, ``h0``, ``w0`` (not exact ints >= 1), ``r`` (not an
    exact int in [0, h)) or ``c`` (not an exact int in [0, w)).
    """
    h, w = check_int("h", h, 1), check_int("w", w, 1)
    h0, w0 = check_int("h0", h0, 1), check_int("w0", w0, 1)
    if check_int("r", r) >= h:
        raise ValueError(f"r must be < h = {h}, got {r}")
    if check_int("c", c) >= w:
        raise ValueError(f"c must be < w = {w}, got {c}")
    # TODO: find the block (which block-column, which block-row) and the place inside it.
    ### BEGIN SOLUTION
    h1 = -(-h // h0)
    block = (c // w0) * h1 + r // h0
    return block * h0 * w0 + (r % h0) * w0 + c % w0
    ### END SOLUTION


def nd_to_nz(
    matrix: Sequence[Sequence[float]], h0: int = 16, w0: int = 16, pad_value: float = 0.0
) -> tuple[list[float], int, int]:
    """The NZ buffer of a row-major (ND) matrix: (flat, H_p, W_p).

    H_p = ⌈H/h0⌉·h0, W_p = ⌈W/w0⌉·w0; len(flat) = H_p·W_p;
    flat[nz_offset(r, c, H_p, W_p, h0, w0)] = matrix[r][c]; every padding cell is ``pad_value``.
    Entries are copied as they are (no conversion to float).

    Example: nd_to_nz([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]], 2, 2)
    = ([0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15], 4, 4).

    Raises ValueError naming ``matrix`` (empty, not a sequence of rows), ``matrix[i]`` (row i not a
    sequence, or ragged), ``h0`` / ``w0`` (not exact ints >= 1).
    """
    h, w = _check_matrix(matrix)
    h0, w0 = check_int("h0", h0, 1), check_int("w0", w0, 1)
    # TODO: pad to whole blocks, then walk the blocks column by column, each row by row.
    ### BEGIN SOLUTION
    h1, w1 = -(-h // h0), -(-w // w0)
    flat: list = []
    for bc in range(w1):
        for br in range(h1):
            for i in range(h0):
                r = br * h0 + i
                for j in range(w0):
                    c = bc * w0 + j
                    flat.append(matrix[r][c] if r < h and c < w else pad_value)
    return flat, h1 * h0, w1 * w0
    ### END SOLUTION


def nz_to_nd(flat: Sequence[float], h: int, w: int, h0: int = 16, w0: int = 16) -> list[list[float]]:
    """The h × w row-major matrix held in an NZ buffer (the inverse of nd_to_nz; padding dropped).

    ``flat`` must hold the whole padded buffer: len(flat) = ⌈h/h0⌉·h0 · ⌈w/w0⌉·w0.
    Example: nz_to_nd([0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15], 4, 4, 2, 2)
    = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]].

    Raises ValueError naming ``h``, ``w``, ``h0``, ``w0`` (not exact ints >= 1) or ``flat`` (not a
    sequence, or of the wrong length).
    """
    h, w = check_int("h", h, 1), check_int("w", w, 1)
    h0, w0 = check_int("h0", h0, 1), check_int("w0", w0, 1)
    if isinstance(flat, str | bytes) or not isinstance(flat, Sequence):
        raise ValueError(f"flat must be a sequence of numbers, got {type(flat).__name__}")
    # TODO: check the buffer's length, then read each (r, c) from its NZ offset.
    ### BEGIN SOLUTION
    h1, w1 = -(-h // h0), -(-w // w0)
    if len(flat) != h1 * h0 * w1 * w0:
        raise ValueError(
            f"flat has {len(flat)} entries; a {h} × {w} matrix in {h0} × {w0} fractals needs "
            f"{h1 * h0} × {w1 * w0} = {h1 * h0 * w1 * w0}"
        )
    return [
        [flat[((c // w0) * h1 + r // h0) * h0 * w0 + (r % h0) * w0 + c % w0] for c in range(w)] for r in range(h)
    ]
    ### END SOLUTION


def layout_conversion_cost(
    shape: Sequence[int],
    elem_bytes: int,
    hbm_bytes_per_s: float,
    n_conversions: int = 1,
    compute_s: float = 0.0,
    h0: int = 16,
    w0: int = 16,
) -> dict[str, float | int]:
    """HBM traffic and time of ND -> NZ layout conversions (TransData) of a tensor.

    The last two dims of ``shape`` are the matrix (H, W), earlier dims a batch B = Π shape[:-2]:

        nd_bytes             = B·H·W·elem_bytes
        nz_bytes             = B·H_p·W_p·elem_bytes        (H_p, W_p padded to h0, w0)
        bytes_per_conversion = nd_bytes + nz_bytes         (read one layout, write the other;
                                                            NZ -> ND moves the same bytes)
        t_conversion_s       = bytes_per_conversion / hbm_bytes_per_s
        t_total_s            = n_conversions · t_conversion_s
        step_s               = compute_s + t_total_s
        waste_fraction       = t_total_s / step_s            (0.0 when step_s is 0)

    Example (lecture §5.2): [4, 4096, 8192] fp16 at 1.2 TB/s, 320 conversions beside 0.3 s of
    compute: 268,435,456 B each way, 0.447 ms per conversion, 143.2 ms in all, 32.3 % of the step.

    Returns a dict with those seven keys (bytes as ints, the rest floats).
    Raises ValueError naming ``shape`` (not a sequence of at least 2 dims), ``shape[i]`` (not an
    exact int >= 1), ``elem_bytes`` (int >= 1), ``hbm_bytes_per_s`` (finite, > 0), ``n_conversions``
    (int >= 0), ``compute_s`` (finite, >= 0), ``h0`` / ``w0`` (ints >= 1).
    """
    if isinstance(shape, str | bytes) or not isinstance(shape, Sequence) or len(shape) < 2:
        raise ValueError(f"shape must be a sequence of at least 2 dims (..., H, W), got {shape!r}")
    dims = [check_int(f"shape[{i}]", d, 1) for i, d in enumerate(shape)]
    b = check_int("elem_bytes", elem_bytes, 1)
    bw = _check_real("hbm_bytes_per_s", hbm_bytes_per_s, above_zero=True)
    n = check_int("n_conversions", n_conversions)
    compute = _check_real("compute_s", compute_s)
    h0, w0 = check_int("h0", h0, 1), check_int("w0", w0, 1)
    # TODO: count the ND bytes and the padded NZ bytes, then the time of n conversions in the step.
    ### BEGIN SOLUTION
    batch = math.prod(dims[:-2])
    h, w = dims[-2], dims[-1]
    nd = batch * h * w * b
    nz = batch * (-(-h // h0) * h0) * (-(-w // w0) * w0) * b
    per = nd + nz
    t_one = per / bw
    t_total = n * t_one
    step = compute + t_total
    return {
        "nd_bytes": nd,
        "nz_bytes": nz,
        "bytes_per_conversion": per,
        "t_conversion_s": t_one,
        "t_total_s": t_total,
        "step_s": step,
        "waste_fraction": t_total / step if step > 0 else 0.0,
    }
    ### END SOLUTION


def _check_flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be a bool, got {value!r} ({type(value).__name__})")
    return value


def detect_backend(
    torch_npu_importable: bool, npu_available: bool, cuda_available: bool, hip_version: str | None
) -> str:
    """The backend a hardware abstraction layer picks from its probes, in the lecture's order.

    "npu" iff torch_npu is importable and torch.npu.is_available(); else, when
    torch.cuda.is_available(): "rocm" if torch.version.hip is a string, "cuda" if it is None;
    else "cpu".
    Examples: (True, True, True, None) -> "npu"; (True, False, True, "6.0") -> "rocm";
    (False, False, True, None) -> "cuda"; (False, True, False, None) -> "cpu" (no torch_npu: the
    NPU cannot be driven).

    Raises ValueError naming ``torch_npu_importable``, ``npu_available``, ``cuda_available`` (not a
    bool) or ``hip_version`` (neither a str nor None).
    """
    _check_flag("torch_npu_importable", torch_npu_importable)
    _check_flag("npu_available", npu_available)
    _check_flag("cuda_available", cuda_available)
    if hip_version is not None and not isinstance(hip_version, str):
        raise ValueError(f"hip_version must be a version string or None, got {hip_version!r}")
    # TODO: probe in order: NPU (both conditions), then CUDA vs ROCm by the HIP version, then CPU.
    ### BEGIN SOLUTION
    if torch_npu_importable and npu_available:
        return "npu"
    if cuda_available:
        return "rocm" if hip_version is not None else "cuda"
    return "cpu"
    ### END SOLUTION


def device_string(backend: str, index: int = 0) -> str:
    """The torch device string of device ``index`` of ``backend``.

    "cuda:i" for "cuda" and for "rocm" (ROCm builds reuse torch's cuda device type), "npu:i" for
    "npu", "cpu" for "cpu" (no index).
    Examples: device_string("npu", 1) = "npu:1"; device_string("rocm", 1) = "cuda:1".

    Raises ValueError naming ``backend`` (not one of "npu", "cuda", "rocm", "cpu") or ``index``
    (not an exact int >= 0).
    """
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    check_int("index", index)
    # TODO: map the backend to torch's device type; the CPU takes no index.
    ### BEGIN SOLUTION
    if backend == "cpu":
        return "cpu"
    kind = "npu" if backend == "npu" else "cuda"
    return f"{kind}:{index}"
    ### END SOLUTION
