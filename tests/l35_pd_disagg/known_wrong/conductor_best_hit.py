"""Cache affinity only: the instance with the highest hit ratio, whatever its queue (instance 0 in the worked
case, which scores 0.38 against instance 2's 0.3)."""

MODULE = "disagg"
REJECTED_BY = {"conductor_pick": ["correctness"]}

_pick = conductor_pick


def conductor_pick(hit_ratios, queue_s, prefill_s, alpha, ttft_slo_s):
    _pick(hit_ratios, queue_s, prefill_s, alpha, ttft_slo_s)  # its validation
    best = max(range(len(hit_ratios)), key=lambda i: (exact(hit_ratios[i]), -i))
    ttft = exact(queue_s[best]) + (1 - exact(hit_ratios[best])) * exact(prefill_s)
    return None if ttft > exact(ttft_slo_s) else best
