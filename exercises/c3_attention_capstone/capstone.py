"""C3 · Capstone: attention at the roofline, online softmax by blocks, shared-memory banks, FA1 vs FA2 traffic.

The capstone (09_Capstone综合实战项目/03_Capstone_CUDA_Attention算子极致性能优化实战.md) builds a
FlashAttention forward kernel; these four ledgers are the verdicts it rests on (one (batch, head),
b = elem_bytes bytes per element, all byte counts exact ints):

* Standard attention writes and re-reads the n × n scores S and probabilities P: 4n²b bytes on top of
  Q, K, V read and O written (4ndb). Its FLOPs are 4n²d (two n × n × d matmuls, 2 FLOPs per
  multiply-add; softmax not counted), so its arithmetic intensity 4n²d / (4n²b + 4ndb) tends to d/b
  (64 for fp16 at d = 128) and never passes it: below the A100's ridge (312 TFLOP/s / 2.039 TB/s =
  153) at any sequence length. Only a kernel that never writes S and P (ideal bytes 4ndb) crosses it.
* Online softmax streams a row in blocks keeping (m, l): m_k = max(m_{k-1}, max block),
  α_k = e^(m_{k-1} - m_k) (α_1 = 0), l_k = α_k·l_{k-1} + Σ_block e^(x - m_k); one rescale per block
  keeps (m, l) exact.
* A shared-memory tile ``T s[rows][cols + pad]`` read down a column by the 32 threads of a warp hits
  the banks (4-byte words mod 32) the pitch decides: padding fixes only the access width it was sized
  for (``half s[64][64 + 8]`` frees 16-byte row reads, not 2-byte column reads).
* The loop order decides what is re-read: FA1 (K/V outer) re-reads Q and re-reads/re-writes O, ℓ, m
  once per K/V tile; FA2 (Q outer) re-reads K and V once per Q tile and writes O once.

Errors: ValueError naming the argument (ints through ``check_int``; floats finite and > 0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

N_BANKS = 32  # shared-memory banks per SM, compute capability >= 5.x (CUDA C++ Programming Guide)
BANK_BYTES = 4  # each bank serves one 4-byte word per cycle; same-word reads are broadcast
# 128-bit accesses are served per quarter-warp (8 threads × 16 B = 128 B a wavefront), 64-bit per half-warp
THREADS_PER_PHASE = {1: 32, 2: 32, 4: 32, 8: 16, 16: 8}
STAT_BYTES = 4  # m and ℓ are fp32 per row


def _check_real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def attention_roofline(n: int, d: int, peak_flops: float, hbm_bytes_per_s: float,
                       elem_bytes: int = 2) -> dict[str, object]:
    """Roofline verdict of one (batch, head) of attention: standard (S and P through HBM) vs ideal.

    flops = 4n²d; naive_bytes = 4n²b + 4ndb; ideal_bytes = 4ndb; ai_* = flops / bytes; ai_limit = d/b;
    ridge = peak / bandwidth; memory_bound = ai_naive < ridge; t_compute_s = flops / peak;
    t_naive_s = max(t_compute_s, naive_bytes / bandwidth); t_ideal_s likewise.

    >>> r = attention_roofline(4096, 128, 312e12, 2.039e12)
    >>> r["naive_bytes"], r["ideal_bytes"], round(r["ai_naive"], 4), r["memory_bound"]
    (138412032, 4194304, 62.0606, True)

    Raises ValueError naming ``n``, ``d``, ``elem_bytes`` (ints ≥ 1), ``peak_flops`` or
    ``hbm_bytes_per_s`` (finite > 0).
    """
    n, d, b = check_int("n", n, 1), check_int("d", d, 1), check_int("elem_bytes", elem_bytes, 1)
    peak, bw = _check_real("peak_flops", peak_flops), _check_real("hbm_bytes_per_s", hbm_bytes_per_s)
    # TODO: the FLOPs, both byte counts, the three intensities, the ridge and the three times.
    raise NotImplementedError('TODO: the FLOPs, both byte counts, the three intensities, the ridge and the three times.')


def _check_xs(xs: object) -> list[float]:
    if isinstance(xs, str | bytes) or not isinstance(xs, Sequence) or len(xs) == 0:
        raise ValueError(f"xs must be a non-empty sequence of finite numbers, got {xs!r}")
    out = []
    for i, x in enumerate(xs):
        if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
            raise ValueError(f"xs[{i}] must be a finite number, got {x!r}")
        out.append(float(x))
    return out


def online_softmax_stream(xs: Sequence[float], block_size: int) -> dict[str, object]:
    """Online softmax over ``xs`` in blocks xs[0:B], xs[B:2B], ... (the last may be short).

    Block k: m_k = max(m_{k-1}, max of the block), α_k = e^(m_{k-1} - m_k) with α_1 = 0.0,
    l_k = l_{k-1}·α_k + Σ_block e^(x - m_k). Returns ``m`` and ``l`` (final), ``trace`` = [(m_k, l_k)],
    ``alphas`` = [α_k] and ``probs`` = [e^(x_i - m) / l] in input order.

    >>> r = online_softmax_stream([1, 3, 2, 4], 2)
    >>> [(m, round(l, 7)) for m, l in r["trace"]]
    [(3.0, 1.1353353), (4.0, 1.5530018)]

    Raises ValueError naming ``xs`` (empty, a str, not a sequence), ``xs[i]`` (a bool or a non-finite
    entry) or ``block_size`` (an int ≥ 1).
    """
    values = _check_xs(xs)
    block_size = check_int("block_size", block_size, 1)
    # TODO: one (m, l) update per block, with the rescale factor alpha; then the probabilities.
    raise NotImplementedError('TODO: one (m, l) update per block, with the rescale factor alpha; then the probabilities.')


def column_read_conflict(cols: int, pad: int, elem_bytes: int = 2, access_bytes: int | None = None,
                         col: int = 0) -> int:
    """Bank-conflict degree of 32 threads reading down column ``col`` of ``T s[rows][cols + pad]``.

    The tile starts at address 0 with pitch (cols + pad)·elem_bytes; thread t (0…31) reads
    ``access_bytes`` (default elem_bytes) from s[t][col]; bank = (byte address // 4) mod 32. Accesses
    of ≤ 4 B are one phase of 32 threads, 8 B two phases of 16, 16 B four phases of 8. The degree is
    the most distinct 4-byte words one bank serves in one phase (the same word twice is a broadcast;
    1 = conflict-free).

    >>> column_read_conflict(64, 8), column_read_conflict(64, 2), column_read_conflict(64, 8, access_bytes=16)
    (4, 1, 1)

    Raises ValueError naming ``cols`` (int ≥ 1), ``pad`` (int ≥ 0; or a pitch that is not a
    multiple of access_bytes), ``elem_bytes`` (1, 2, 4 or 8), ``access_bytes`` (1, 2, 4, 8 or 16, at
    least elem_bytes) or ``col`` (int ≥ 0, inside the row, a multiple of access_bytes in bytes).
    """
    cols, pad = check_int("cols", cols, 1), check_int("pad", pad, 0)
    eb = check_int("elem_bytes", elem_bytes, 1)
    if eb not in (1, 2, 4, 8):
        raise ValueError(f"elem_bytes must be 1, 2, 4 or 8, got {elem_bytes!r}")
    ab = eb if access_bytes is None else check_int("access_bytes", access_bytes, 1)
    if ab not in THREADS_PER_PHASE or ab < eb:
        raise ValueError(f"access_bytes must be 1, 2, 4, 8 or 16 and >= elem_bytes ({eb}), got {access_bytes!r}")
    col = check_int("col", col, 0)
    if col * eb + ab > cols * eb:
        raise ValueError(f"col = {col}: a {ab}-byte read from it leaves the {cols}-column row")
    pitch = (cols + pad) * eb
    if pitch % ab:
        raise ValueError(f"pad = {pad}: the pitch ({pitch} B) is not a multiple of the {ab}-byte access")
    if col * eb % ab:
        raise ValueError(f"col = {col}: its byte offset {col * eb} is not a multiple of the {ab}-byte access")
    # TODO: per phase of threads, the distinct 4-byte words each bank serves; the largest count.
    raise NotImplementedError('TODO: per phase of threads, the distinct 4-byte words each bank serves; the largest count.')


def fa_loop_order_bytes(n: int, d: int, block_m: int, block_n: int, elem_bytes: int = 2) -> dict[str, int]:
    """HBM bytes of one (batch, head), non-causal, no cache reuse: FA1 vs FA2 vs standard vs ideal.

    Tr = ⌈n / block_m⌉, Tc = ⌈n / block_n⌉, x = n·d·b (one n × d tensor), m and ℓ fp32 (4 B a row):
    fa1 = x + 8n (O, ℓ, m initialised in HBM) + 2x (K, V once) + Tc·(x + 2x + 16n) (per K/V tile: Q
    read, O read and written, ℓ and m read and written); fa2 = x (Q) + 2·Tr·x (K, V per Q tile) + x (O)
    + 4n (L = m + log ℓ); naive = 4n²b + 4ndb; ideal = 4x.

    >>> fa_loop_order_bytes(4096, 128, 64, 64)["fa1"], fa_loop_order_bytes(4096, 128, 128, 64)["fa2"]
    (208699392, 69222400)

    Raises ValueError naming ``n``, ``d``, ``block_m``, ``block_n`` or ``elem_bytes`` (ints ≥ 1).
    """
    n, d = check_int("n", n, 1), check_int("d", d, 1)
    block_m, block_n = check_int("block_m", block_m, 1), check_int("block_n", block_n, 1)
    b = check_int("elem_bytes", elem_bytes, 1)
    # TODO: the tile counts, then the four byte counts.
    raise NotImplementedError('TODO: the tile counts, then the four byte counts.')
