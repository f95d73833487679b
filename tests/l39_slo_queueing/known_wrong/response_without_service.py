"""Mistake: the response time is reported as the wait alone (the service time 1/μ is left out)."""

MODULE = "slo"
REJECTED_BY = {"mmc_wait": ["correctness"]}

_correct_mmc_wait = mmc_wait


def mmc_wait(arrival_rate, service_rate, servers, t_s=0.0):
    out = dict(_correct_mmc_wait(arrival_rate, service_rate, servers, t_s))
    out["mean_response_s"] = out["mean_wait_s"]
    return out
