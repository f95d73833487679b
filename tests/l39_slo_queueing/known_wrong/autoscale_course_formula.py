"""The lecture's R_queue (§3.3): ceil(total_waiting / target · current): 3 pods, 40 waiting, 5 per pod → 24,
not 8; the fleet-wide total is multiplied by the fleet size a second time."""

MODULE = "slo"
REJECTED_BY = {"autoscale_replicas": ["correctness"]}

_correct_autoscale = autoscale_replicas


def autoscale_replicas(current, total_waiting, target_waiting_per_pod, avg_kv_usage, kv_target=0.75, min_replicas=1,
                       max_replicas=1_000_000):
    base = _correct_autoscale(current, 0, target_waiting_per_pod, avg_kv_usage, kv_target, min_replicas, max_replicas)
    by_queue = math.ceil(Fraction(total_waiting, target_waiting_per_pod) * current)
    return min(max_replicas, max(base, by_queue))
