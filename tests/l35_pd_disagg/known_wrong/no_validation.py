"""Classic bug: no argument checks: more cached tokens than tokens, a zero-bandwidth link, l_out = 1 or an SLO no
instance can meet come back as numbers (or hang)."""

MODULE = "disagg"
REJECTED_BY = {"kv_transfer_bytes": ["correctness"], "kv_transfer_seconds": ["correctness"],
               "layerwise_exposed_seconds": ["correctness"], "pd_ratio": ["correctness"],
               "plan_xpyd": ["correctness"], "conductor_pick": ["correctness"]}


def check_real(name, value, *, positive=False, high=None):
    return value


def kv_transfer_bytes(n_tokens, n_layers, n_kv_heads, head_dim, elem_bytes=2, cached_tokens=0):
    return 2 * n_layers * n_kv_heads * head_dim * elem_bytes * max(n_tokens - cached_tokens, 0)


def kv_transfer_seconds(n_bytes, link_bytes_per_s, latency_s=0.0):
    return latency_s + (n_bytes / link_bytes_per_s if link_bytes_per_s else math.inf)


def layerwise_exposed_seconds(n_layers, layer_compute_s, layer_bytes, link_bytes_per_s):
    t_x = layer_bytes / link_bytes_per_s if link_bytes_per_s else math.inf
    t_c = layer_compute_s
    return {"transfer_per_layer_s": t_x, "eager_s": n_layers * t_x,
            "layerwise_s": t_x if t_x <= t_c else t_c + n_layers * (t_x - t_c)}


def pd_ratio(l_in, l_out, prefill_tok_per_s, decode_tok_per_s):
    return (l_out / l_in if l_in else 0.0) * (prefill_tok_per_s / decode_tok_per_s if decode_tok_per_s else 0.0)


_plan = plan_xpyd


def plan_xpyd(arrival_rps, l_in, l_out, *rest, **kw):
    if l_out < 2 or not arrival_rps:
        return {"n_prefill": 1, "n_decode": 1, "ttft_s": 0.0, "tpot_s": 0.0, "prefill_utilization": 0.0,
                "decode_batch": 1, "ratio": "1P1D"}
    try:
        return _plan(arrival_rps, int(l_in), l_out, *rest, **kw)
    except ValueError:
        return {"n_prefill": 10_000, "n_decode": 1, "ttft_s": 0.0, "tpot_s": 0.0, "prefill_utilization": 0.0,
                "decode_batch": 1, "ratio": "10000P1D"}


def conductor_pick(hit_ratios, queue_s, prefill_s, alpha, ttft_slo_s):
    if not hit_ratios:
        return None
    pairs = zip(hit_ratios, queue_s, strict=False)
    scores = [(1 - exact(h)) * exact(prefill_s) + exact(alpha) * exact(q) for h, q in pairs]
    best = scores.index(min(scores))
    return None if exact(queue_s[best]) + (1 - exact(hit_ratios[best])) * exact(prefill_s) > exact(ttft_slo_s) else best
