"""Rejects on the score (1 − H)·D + α·Q instead of the predicted TTFT Q + (1 − H)·D: α is a weight, not time."""

MODULE = "disagg"
REJECTED_BY = {"conductor_pick": ["correctness"]}

_pick = conductor_pick


def conductor_pick(hit_ratios, queue_s, prefill_s, alpha, ttft_slo_s):
    best = _pick(hit_ratios, queue_s, prefill_s, alpha, 10**9)
    score = (1 - exact(hit_ratios[best])) * exact(prefill_s) + exact(alpha) * exact(queue_s[best])
    return None if score > exact(ttft_slo_s) else best
