"""Other correct ways: the layer-wise exposure by simulating the link layer by layer (no closed form), the P:D
ratio as a ratio of request rates, the prefill count found by bisection on x, and the conductor by sorting
(score, index) pairs."""

MODULE = "disagg"
ACCEPTED = ["layerwise_exposed_seconds", "pd_ratio", "plan_xpyd", "conductor_pick"]


def layerwise_exposed_seconds(n_layers, layer_compute_s, layer_bytes, link_bytes_per_s):
    layers = check_int("n_layers", n_layers, 1)
    t_c = check_real("layer_compute_s", layer_compute_s)
    size = check_int("layer_bytes", layer_bytes)
    link = check_real("link_bytes_per_s", link_bytes_per_s, positive=True)
    t_x = size / link
    if t_x <= t_c:
        return {"transfer_per_layer_s": t_x, "eager_s": layers * t_x, "layerwise_s": t_x}
    link_free = t_c + t_x  # from the first layer on, the link never idles
    for _ in range(1, layers):
        link_free += t_x
    return {"transfer_per_layer_s": t_x, "eager_s": layers * t_x, "layerwise_s": link_free - layers * t_c}


def pd_ratio(l_in, l_out, prefill_tok_per_s, decode_tok_per_s):
    lin = check_real("l_in", l_in, positive=True)
    lout = check_real("l_out", l_out, positive=True)
    tp = check_real("prefill_tok_per_s", prefill_tok_per_s, positive=True)
    td = check_real("decode_tok_per_s", decode_tok_per_s, positive=True)
    return (tp / lin) / (td / lout)


_plan = plan_xpyd


def plan_xpyd(arrival_rps, l_in, l_out, prefill_tok_per_s, ttft_slo_s, kv_bytes_per_token, link_bytes_per_s,
              decode_step_base_s, decode_step_per_seq_s, tpot_slo_s, decode_kv_capacity_tokens, max_instances=10_000):
    plan = _plan(arrival_rps, l_in, l_out, prefill_tok_per_s, ttft_slo_s, kv_bytes_per_token, link_bytes_per_s,
                 decode_step_base_s, decode_step_per_seq_s, tpot_slo_s, decode_kv_capacity_tokens, max_instances)
    lam, s = exact(arrival_rps), Fraction(l_in) / exact(prefill_tok_per_s)
    transfer = Fraction(kv_bytes_per_token * l_in) / exact(link_bytes_per_s)

    def meets(x):
        rho = lam * s / x
        return rho < 1 and rho * s / (2 * (1 - rho)) + s + transfer <= exact(ttft_slo_s)

    lo, hi = 1, 1
    while not meets(hi):
        lo, hi = hi + 1, hi * 2
    while lo < hi:  # TTFT falls as x grows: the first x that meets the SLO
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if meets(mid) else (mid + 1, hi)
    rho = lam * s / lo
    ttft = rho * s / (2 * (1 - rho)) + s + transfer
    return {**plan, "n_prefill": lo, "ttft_s": float(ttft), "prefill_utilization": float(rho),
            "ratio": f"{lo}P{plan['n_decode']}D"}


def conductor_pick(hit_ratios, queue_s, prefill_s, alpha, ttft_slo_s):
    if isinstance(hit_ratios, str) or not isinstance(hit_ratios, Sequence) or not hit_ratios:
        raise ValueError("hit_ratios must be a non-empty sequence")
    if not isinstance(queue_s, Sequence) or len(queue_s) != len(hit_ratios):
        raise ValueError("queue_s must hold one value per instance")
    hs = [exact(check_real("hit_ratios", h, high=1)) for h in hit_ratios]
    qs = [exact(check_real("queue_s", q)) for q in queue_s]
    d, a, slo = (exact(check_real(n, v)) for n, v in (("prefill_s", prefill_s), ("alpha", alpha),
                                                      ("ttft_slo_s", ttft_slo_s)))
    _, best = sorted(((1 - h) * d + a * q, i) for i, (h, q) in enumerate(zip(hs, qs, strict=True)))[0]
    return best if qs[best] + (1 - hs[best]) * d <= slo else None
