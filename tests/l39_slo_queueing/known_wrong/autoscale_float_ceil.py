"""Float trap: ceil(current · usage / kv_target) in floats: 15 pods at 0.7 of a 0.7 target ask for 16."""

MODULE = "slo"
REJECTED_BY = {"autoscale_replicas": ["correctness"]}

_correct_autoscale = autoscale_replicas


def autoscale_replicas(current, total_waiting, target_waiting_per_pod, avg_kv_usage, kv_target=0.75, min_replicas=1,
                       max_replicas=1_000_000):
    _correct_autoscale(current, total_waiting, target_waiting_per_pod, avg_kv_usage, kv_target, min_replicas,
                       max_replicas)
    by_queue = -(-total_waiting // target_waiting_per_pod)
    by_kv = math.ceil(current * avg_kv_usage / kv_target)
    return min(max_replicas, max(min_replicas, by_queue, by_kv))
