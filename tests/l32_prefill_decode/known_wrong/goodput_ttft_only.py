"""Classic bug: goodput checks the TTFT SLO only; slow-streaming requests still count."""

MODULE = "inference"
REJECTED_BY = {"goodput_rps": ["correctness"]}

_correct_goodput = goodput_rps


def goodput_rps(requests, ttft_slo_s, tpot_slo_s, duration_s):
    _correct_goodput([], ttft_slo_s, tpot_slo_s, duration_s)
    return _correct_goodput(requests, ttft_slo_s, 1e300, duration_s)
