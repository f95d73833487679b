"""L35 · Prefill/decode disaggregation: KV transfer, layer-wise overlap, the P:D ratio, an xPyD plan, placement.

Lecture 35 (06_LLM推理系统与性能工程/35_分布式推理与PD分离架构_Prefill_Decode_Disaggregation.md): once
prefill and decode run on different machines, every request's KV cache crosses the network once. It
costs nothing extra only if it hides behind the prefill's own compute, layer by layer; and how many
prefill and decode instances a service needs follows from its two SLOs, TTFT and TPOT.

* ``kv_transfer_bytes`` / ``kv_transfer_seconds``: 2 · L · H_kv · d · bytes per token (§3.1);
* ``layerwise_exposed_seconds``: sending layer i's KV while layer i + 1 computes, on ONE link (§3.3);
* ``pd_ratio``: N_D / N_P = (L_out / L_in) · (Θ_P / Θ_D) (§5.3);
* ``plan_xpyd``: the fewest prefill instances meeting the TTFT SLO (M/D/1 queueing, DistServe §3) and
  decode instances meeting the TPOT SLO (Little's law);
* ``conductor_pick``: Mooncake's score (1 − H_i)·D + α·Q_i and early rejection (§5.1, §5.2).

Conventions: bytes and token counts are exact ints (``check_int``); times in seconds; rates in bytes or
tokens per second (1 GB/s = 1e9 B/s). Thresholds and ceilings are computed exactly on the decimal
values given (``exact``: 0.1 is 1/10, not the nearest binary float); invalid arguments raise
ValueError naming the argument.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from numbers import Real

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int


def check_real(name: str, value: object, *, positive: bool = False, high: float | None = None) -> float:
    """``value`` as a finite real >= 0 (> 0 when ``positive``, <= ``high``), or ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < 0 or (positive and value == 0) or (high is not None and value > high):
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"{name} must be {bound}{f' and <= {high}' if high is not None else ''}, got {value!r}")
    return value


def exact(x: float | int | Fraction) -> Fraction:
    """The decimal value a person typed: 0.45 is 45/100 (``Fraction(str(x))``), ints and Fractions as they are."""
    return Fraction(x) if isinstance(x, int | Fraction) else Fraction(str(x))


# ---------------------------------------------------------------------------------------------
# 1. Moving the KV cache
# ---------------------------------------------------------------------------------------------


def kv_transfer_bytes(n_tokens: int, n_layers: int, n_kv_heads: int, head_dim: int, elem_bytes: int = 2,
                      cached_tokens: int = 0) -> int:
    """Bytes of KV the prefill node sends: 2 · L · H_kv · d · e · (n_tokens − cached_tokens).

    K and V (the 2) for every layer, KV head and channel; tokens the decode node already holds (a cached
    prefix) are not sent. Worked (LLaMA-3-70B: 80 layers, 8 KV heads, d 128, fp16): 327,680 B per
    token; 4K tokens 1,342,177,280 B (1.25 GiB); 32K 10,737,418,240 B (10 GiB); 128K 42,949,672,960 B;
    fp8 halves them; 4K with 2K cached 671,088,640 B. ValueError when cached_tokens > n_tokens.
    """
    n = check_int("n_tokens", n_tokens)
    layers = check_int("n_layers", n_layers, 1)
    heads = check_int("n_kv_heads", n_kv_heads, 1)
    d = check_int("head_dim", head_dim, 1)
    e = check_int("elem_bytes", elem_bytes, 1)
    cached = check_int("cached_tokens", cached_tokens)
    if cached > n:
        raise ValueError(f"cached_tokens = {cached} exceeds n_tokens = {n}: the decode node cannot hold more")
    # TODO: K and V, per layer, per KV head, per channel, per element byte, for the tokens not yet cached.
    raise NotImplementedError('TODO: K and V, per layer, per KV head, per channel, per element byte, for the tokens not yet cached.')


def kv_transfer_seconds(n_bytes: int, link_bytes_per_s: float, latency_s: float = 0.0) -> float:
    """Time to send ``n_bytes`` over one link: latency + bytes / bandwidth.

    Worked: 32K tokens of 70B fp16 KV (10,737,418,240 B) over 45 GB/s → 238.6 ms (fp8 119.3 ms); over
    11 GB/s (a 100 Gb/s network) 976.1 ms. The lecture's 222 / 111 / 909 ms divide "10 GB" for 10 GiB.
    """
    b = check_int("n_bytes", n_bytes)
    link = check_real("link_bytes_per_s", link_bytes_per_s, positive=True)
    lat = check_real("latency_s", latency_s)
    # TODO: the wire time plus the fixed latency.
    raise NotImplementedError('TODO: the wire time plus the fixed latency.')


def layerwise_exposed_seconds(n_layers: int, layer_compute_s: float, layer_bytes: int,
                              link_bytes_per_s: float) -> dict[str, float]:
    """Transfer time left after the prefill's compute, sending all KV at the end vs layer by layer.

    t_x = layer_bytes / link. Eager: all layers after the last one computes, L · t_x exposed.
    Layer-wise on ONE link: layer i's transfer starts when layer i is computed ((i + 1) · t_c) or when
    the link is free, whichever is later; the exposed time is when the last transfer ends minus L · t_c:
    t_x if t_x <= t_c (only the last layer shows), else t_c + L · t_x − L · t_c (transfers queue up).
    Returns {"transfer_per_layer_s": t_x, "eager_s", "layerwise_s"}. Worked: 80 layers × 134,217,728 B
    (32K tokens of 70B) at 48 GB/s, 3.5 ms per layer → t_x 2.796 ms, 2.796 ms exposed vs 223.7 ms
    eager; at 12 GB/s (t_x 11.18 ms) → 618.3 ms exposed, not 11.18 ms.
    """
    layers = check_int("n_layers", n_layers, 1)
    t_c = check_real("layer_compute_s", layer_compute_s)
    size = check_int("layer_bytes", layer_bytes)
    link = check_real("link_bytes_per_s", link_bytes_per_s, positive=True)
    # TODO: the per-layer transfer time, the eager total, and the exposed time on one link (mind t_x > t_c).
    raise NotImplementedError('TODO: the per-layer transfer time, the eager total, and the exposed time on one link (mind t_x > t_c).')


# ---------------------------------------------------------------------------------------------
# 2. Sizing prefill and decode
# ---------------------------------------------------------------------------------------------


def pd_ratio(l_in: float, l_out: float, prefill_tok_per_s: float, decode_tok_per_s: float) -> float:
    """Decode instances per prefill instance in balance: N_D / N_P = (L_out / L_in) · (Θ_P / Θ_D).

    A prefill instance finishes Θ_P / L_in requests per second, a decode instance Θ_D / L_out. Worked
    (§5.3, Θ_P 4000, Θ_D 500 tok/s): 8000 in, 500 out → 0.5 (two P per D); 1000 in, 4000 out → 32.
    """
    lin = check_real("l_in", l_in, positive=True)
    lout = check_real("l_out", l_out, positive=True)
    tp = check_real("prefill_tok_per_s", prefill_tok_per_s, positive=True)
    td = check_real("decode_tok_per_s", decode_tok_per_s, positive=True)
    # TODO: requests per second one instance of each kind finishes; their ratio.
    raise NotImplementedError('TODO: requests per second one instance of each kind finishes; their ratio.')


def decode_batch(tpot_slo_s: Fraction, base_s: Fraction, per_seq_s: Fraction, capacity_tokens: int,
                 tokens_per_request: int) -> int:
    """Largest decode batch under the TPOT SLO and the KV capacity, or ValueError naming the binding limit."""
    by_slo = math.floor((tpot_slo_s - base_s) / per_seq_s) if per_seq_s else math.inf
    by_kv = capacity_tokens // tokens_per_request
    if by_slo < 1:
        raise ValueError(f"tpot_slo_s = {float(tpot_slo_s)} s leaves no room for one sequence "
                         f"(a step takes {float(base_s + per_seq_s)} s with a batch of 1)")
    if by_kv < 1:
        raise ValueError(f"decode_kv_capacity_tokens = {capacity_tokens} cannot hold one request's "
                         f"{tokens_per_request} tokens")
    return int(min(by_slo, by_kv))


def plan_xpyd(arrival_rps: float, l_in: int, l_out: int, prefill_tok_per_s: float, ttft_slo_s: float,
              kv_bytes_per_token: int, link_bytes_per_s: float, decode_step_base_s: float,
              decode_step_per_seq_s: float, tpot_slo_s: float, decode_kv_capacity_tokens: int,
              max_instances: int = 10_000) -> dict:
    """Fewest prefill (x) and decode (y) instances meeting a TTFT and a TPOT SLO: an "xPyD" plan.

    Prefill: each request takes s = l_in / Θ_P; Poisson arrivals split evenly over x instances, so each
    is an M/D/1 queue at ρ = λs/x with mean wait W = ρs / (2(1 − ρ)); TTFT = W + s + the KV transfer of
    l_in tokens (kv_bytes_per_token · l_in / link). x = the smallest with ρ < 1 and TTFT <= SLO.
    Decode: batch B = min(floor((TPOT_SLO − base) / per_seq), floor(capacity / (l_in + l_out))), a step
    takes TPOT = base + per_seq · B; by Little's law y = ceil(λ · (l_out − 1) · TPOT / B) (the first
    token came from prefill). Every comparison and ceiling is exact on the decimal inputs.
    Returns {"n_prefill", "n_decode", "ttft_s", "tpot_s", "prefill_utilization", "decode_batch",
    "ratio": f"{x}P{y}D"}. Worked: λ 4/s, 2000 in, 257 out, Θ_P 10k tok/s, TTFT <= 0.5 s, 327,680 B/token
    over 45 GB/s, decode 20 ms + 0.25 ms/seq, TPOT <= 50 ms, 1M KV tokens → B 120, x 2 (ρ 0.4, TTFT
    0.2812 s), y 1: "2P1D"; at λ 30/s → "9P4D" (TTFT 0.4146 s).
    ValueError: l_out < 2 (``l_out``); an idle prefill already at or over the TTFT SLO (``ttft_slo_s``);
    no batch of 1 fits (``tpot_slo_s`` or ``decode_kv_capacity_tokens``); more than max_instances needed.
    """
    lam = exact(check_real("arrival_rps", arrival_rps, positive=True))
    lin = check_int("l_in", l_in, 1)
    lout = check_int("l_out", l_out)
    if lout < 2:
        raise ValueError(f"l_out must be >= 2 (the first token comes from prefill, decode makes the rest), got {lout}")
    theta_p = exact(check_real("prefill_tok_per_s", prefill_tok_per_s, positive=True))
    ttft_slo = exact(check_real("ttft_slo_s", ttft_slo_s, positive=True))
    kv_b = check_int("kv_bytes_per_token", kv_bytes_per_token)
    link = exact(check_real("link_bytes_per_s", link_bytes_per_s, positive=True))
    base = exact(check_real("decode_step_base_s", decode_step_base_s))
    per_seq = exact(check_real("decode_step_per_seq_s", decode_step_per_seq_s))
    tpot_slo = exact(check_real("tpot_slo_s", tpot_slo_s, positive=True))
    capacity = check_int("decode_kv_capacity_tokens", decode_kv_capacity_tokens)
    cap = check_int("max_instances", max_instances, 1)
    # TODO: prefill: s, the transfer, refuse an SLO an idle instance misses, then grow x from the smallest
    #  stable one until the M/D/1 TTFT meets the SLO. Decode: the batch, its step time, Little's law.
    raise NotImplementedError("TODO: prefill: s, the transfer, refuse an SLO an idle instance misses, then grow x from the smallest stable one until the M/D/1 TTFT meets the SLO. Decode: the batch, its step time, Little's law.")


# ---------------------------------------------------------------------------------------------
# 3. Placement
# ---------------------------------------------------------------------------------------------


def conductor_pick(hit_ratios: Sequence[float], queue_s: Sequence[float], prefill_s: float, alpha: float,
                   ttft_slo_s: float) -> int | None:
    """Mooncake's choice of prefill instance, or None to reject the request early (HTTP 429).

    Score_i = (1 − H_i) · D + α · Q_i (H_i: the share of the prompt instance i has cached, D: the
    prefill time of the whole prompt, Q_i: its queue); the lowest score wins, ties to the lowest index.
    If the winner's predicted TTFT Q_i + (1 − H_i) · D exceeds the SLO, return None. Exact on decimals.
    Worked: ([0.8, 0, 0.5], [0.3, 0.05, 0.1], 0.4, 1, 1) → scores 0.38, 0.45, 0.3 → 2;
    ([0, 0], [2, 3], 0.4, 1, 1) → None.
    """
    if isinstance(hit_ratios, str | bytes) or not isinstance(hit_ratios, Sequence) or not hit_ratios:
        raise ValueError(f"hit_ratios must be a non-empty sequence (one per instance), got {hit_ratios!r}")
    if isinstance(queue_s, str | bytes) or not isinstance(queue_s, Sequence) or len(queue_s) != len(hit_ratios):
        raise ValueError(f"queue_s must hold one queueing time per instance ({len(hit_ratios)}), got {queue_s!r}")
    hits = [exact(check_real("hit_ratios", h, high=1)) for h in hit_ratios]
    queues = [exact(check_real("queue_s", q)) for q in queue_s]
    d = exact(check_real("prefill_s", prefill_s))
    a = exact(check_real("alpha", alpha))
    slo = exact(check_real("ttft_slo_s", ttft_slo_s))
    # TODO: score every instance exactly, take the lowest (first on ties), reject if it misses the SLO.
    raise NotImplementedError('TODO: score every instance exactly, take the lowest (first on ties), reject if it misses the SLO.')
