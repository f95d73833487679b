"""Scores and the SLO in floats: (1 − 0.7) + 0.1 = 0.4000000000000001 loses an exact tie with 0.4 and misses an
SLO of 0.4 it meets exactly."""

MODULE = "disagg"
REJECTED_BY = {"conductor_pick": ["correctness"]}


def conductor_pick(hit_ratios, queue_s, prefill_s, alpha, ttft_slo_s):
    if not hit_ratios or len(queue_s) != len(hit_ratios):
        raise ValueError("hit_ratios and queue_s must be non-empty and of equal length")
    for h in hit_ratios:
        check_real("hit_ratios", h, high=1)
    for q in queue_s:
        check_real("queue_s", q)
    check_real("prefill_s", prefill_s)
    scores = [(1 - h) * prefill_s + alpha * q for h, q in zip(hit_ratios, queue_s, strict=True)]
    best = scores.index(min(scores))
    return None if queue_s[best] + (1 - hit_ratios[best]) * prefill_s > ttft_slo_s else best
