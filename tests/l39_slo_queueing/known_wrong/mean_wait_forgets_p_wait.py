"""Mistake: mean wait 1/(cμ − λ), as if every arrival waited; and the tail e^{−(cμ−λ)t} without the factor C."""

MODULE = "slo"
REJECTED_BY = {"mmc_wait": ["correctness"]}

_correct_mmc_wait = mmc_wait


def mmc_wait(arrival_rate, service_rate, servers, t_s=0.0):
    out = dict(_correct_mmc_wait(arrival_rate, service_rate, servers, t_s))
    drain = servers * service_rate - arrival_rate
    out["mean_wait_s"] = 1.0 / drain
    out["mean_response_s"] = out["mean_wait_s"] + 1.0 / service_rate
    out["p_wait_exceeds_t"] = math.exp(-drain * t_s)
    return out
