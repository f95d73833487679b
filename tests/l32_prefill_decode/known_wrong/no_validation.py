"""Classic bug: no argument checks: zero bandwidth, tokens out of order and q = 0 come back as numbers or crash."""

MODULE = "inference"
REJECTED_BY = {
    "step_roofline": ["correctness"],
    "decode_step_seconds": ["correctness"],
    "request_metrics": ["correctness"],
    "goodput_rps": ["correctness"],
    "percentile_nearest_rank": ["correctness"],
}


def step_roofline(n_tokens, peak_flops, mem_bw, elem_bytes=2):
    ai = 2 * n_tokens / elem_bytes if elem_bytes else 0.0
    att = min(peak_flops, ai * mem_bw)
    return {
        "intensity": ai,
        "attainable_flops": att,
        "peak_fraction": att / peak_flops if peak_flops else 0.0,
        "bound": "compute" if mem_bw and ai >= peak_flops / mem_bw else "memory",
    }


def decode_step_seconds(n_params, batch, context_len, kv_bytes_per_token, mem_bw, weight_bytes=2):
    return (n_params * weight_bytes + batch * context_len * kv_bytes_per_token) / mem_bw if mem_bw else math.inf


def request_metrics(arrival_s, token_times_s):
    times = list(token_times_s) or [arrival_s]
    ttft, e2e = times[0] - arrival_s, times[-1] - arrival_s
    return {
        "ttft": ttft,
        "e2e": e2e,
        "tpot": (e2e - ttft) / max(len(times) - 1, 1),
        "itl": [b - a for a, b in zip(times, times[1:], strict=False)],
    }


def goodput_rps(requests, ttft_slo_s, tpot_slo_s, duration_s):
    good = sum(1 for r in requests if r["ttft"] <= ttft_slo_s and r["tpot"] <= tpot_slo_s)
    return good / duration_s if duration_s else 0.0


def percentile_nearest_rank(values, q):
    ordered = sorted(values) or [0.0]
    return ordered[min(max(math.ceil(Fraction(str(q)) * len(ordered) / 100) - 1, 0), len(ordered) - 1)]
