"""Mistake: min_replicas and max_replicas are ignored: an idle fleet drops to 0, a storm asks for more than allowed."""

MODULE = "slo"
REJECTED_BY = {"autoscale_replicas": ["correctness"]}


def autoscale_replicas(current, total_waiting, target_waiting_per_pod, avg_kv_usage, kv_target=0.75, min_replicas=1,
                       max_replicas=1_000_000):
    check_int("current", current)
    by_queue = -(-check_int("total_waiting", total_waiting) // check_int("target_waiting_per_pod",
                                                                       target_waiting_per_pod, 1))
    usage = _check_real("avg_kv_usage", avg_kv_usage, high=1.0)
    kv_t = _check_real("kv_target", kv_target, positive=True, high=1.0)
    return max(by_queue, math.ceil(current * exact(usage) / exact(kv_t)))
