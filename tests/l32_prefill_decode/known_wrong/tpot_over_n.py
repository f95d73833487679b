"""Classic bug: TPOT = (E2E − TTFT) / N_out instead of / (N_out − 1): the first token is not a gap."""

MODULE = "inference"
REJECTED_BY = {"request_metrics": ["correctness"]}

_correct_metrics = request_metrics


def request_metrics(arrival_s, token_times_s):
    out = _correct_metrics(arrival_s, token_times_s)
    out["tpot"] = (out["e2e"] - out["ttft"]) / len(token_times_s)
    return out
