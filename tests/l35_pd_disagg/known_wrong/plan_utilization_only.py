"""Prefill sized for stability only (the smallest x with ρ < 1): one instance at ρ 0.8 queues requests
0.4 s on average and misses the 0.5 s TTFT SLO."""

MODULE = "disagg"
REJECTED_BY = {"plan_xpyd": ["correctness"]}


def plan_xpyd(arrival_rps: float, l_in: int, l_out: int, prefill_tok_per_s: float, ttft_slo_s: float,
              kv_bytes_per_token: int, link_bytes_per_s: float, decode_step_base_s: float,
              decode_step_per_seq_s: float, tpot_slo_s: float, decode_kv_capacity_tokens: int,
              max_instances: int = 10_000) -> dict:
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
    s = lin / theta_p
    transfer = kv_b * lin / link
    if s + transfer >= ttft_slo:
        raise ValueError(f"ttft_slo_s = {float(ttft_slo)} s: an idle prefill already needs "
                         f"{float(s + transfer)} s (compute + KV transfer); no number of instances helps")
    x = math.floor(lam * s) + 1
    while True:
        rho = lam * s / x
        ttft = rho * s / (2 * (1 - rho)) + s + transfer
        if rho < 1:
            break
        x += 1
        if x > cap:
            raise ValueError(f"the TTFT SLO needs more than max_instances = {cap} prefill instances")
    batch = decode_batch(tpot_slo, base, per_seq, capacity, lin + lout)
    tpot = base + per_seq * batch
    y = math.ceil(lam * (lout - 1) * tpot / batch)
    if max(x, y) > cap:
        raise ValueError(f"the plan needs {x}P{y}D, more than max_instances = {cap}")
    return {"n_prefill": x, "n_decode": y, "ttft_s": float(ttft), "tpot_s": float(tpot),
            "prefill_utilization": float(rho), "decode_batch": batch, "ratio": f"{x}P{y}D"}
