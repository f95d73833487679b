"""Classic bug: SLOs checked with < instead of ≤: a request exactly at the limit is counted as a miss."""

MODULE = "inference"
REJECTED_BY = {"goodput_rps": ["correctness"]}


def goodput_rps(requests, ttft_slo_s, tpot_slo_s, duration_s):
    ttft_slo, tpot_slo = _check_real("ttft_slo_s", ttft_slo_s), _check_real("tpot_slo_s", tpot_slo_s)
    duration = _check_real("duration_s", duration_s, positive=True)
    return sum(1 for r in requests if r["ttft"] < ttft_slo and r["tpot"] < tpot_slo) / duration
