"""The plan computed in floats: a TTFT exactly on the SLO reads 0.4660000000000001 (one prefill instance too
many) and (0.03 − 0.02) / 0.0001 floors to 99."""

MODULE = "disagg"
REJECTED_BY = {"plan_xpyd": ["correctness"]}


def plan_xpyd(arrival_rps, l_in, l_out, prefill_tok_per_s, ttft_slo_s, kv_bytes_per_token, link_bytes_per_s,
              decode_step_base_s, decode_step_per_seq_s, tpot_slo_s, decode_kv_capacity_tokens, max_instances=10_000):
    if l_out < 2:
        raise ValueError("l_out must be >= 2")
    s = l_in / prefill_tok_per_s
    transfer = kv_bytes_per_token * l_in / link_bytes_per_s
    if s + transfer >= ttft_slo_s:
        raise ValueError("ttft_slo_s is below an idle prefill's TTFT")
    x = math.floor(arrival_rps * s) + 1
    while True:
        rho = arrival_rps * s / x
        ttft = rho * s / (2 * (1 - rho)) + s + transfer
        if ttft <= ttft_slo_s:
            break
        x += 1
    b = min(math.floor((tpot_slo_s - decode_step_base_s) / decode_step_per_seq_s),
            decode_kv_capacity_tokens // (l_in + l_out))
    tpot = decode_step_base_s + decode_step_per_seq_s * b
    y = math.ceil(arrival_rps * (l_out - 1) * tpot / b)
    return {"n_prefill": x, "n_decode": y, "ttft_s": ttft, "tpot_s": tpot, "prefill_utilization": rho,
            "decode_batch": b, "ratio": f"{x}P{y}D"}
