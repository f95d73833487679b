"""Classic bug: the ITL list starts with the TTFT (the wait for the first token is not an inter-token gap)."""

MODULE = "inference"
REJECTED_BY = {"request_metrics": ["correctness"]}

_correct_metrics = request_metrics


def request_metrics(arrival_s, token_times_s):
    out = _correct_metrics(arrival_s, token_times_s)
    out["itl"] = [out["ttft"], *out["itl"]]
    return out
