"""Mistake: replicas = slots // slots_per_replica: 26 slots in replicas of 8 make 3 replicas, two slots short."""

MODULE = "slo"
REJECTED_BY = {"servers_for_wait_slo": ["correctness"]}

_correct_servers = servers_for_wait_slo


def servers_for_wait_slo(arrival_rate, service_rate, wait_slo_s, max_violation, slots_per_replica=1):
    out = dict(_correct_servers(arrival_rate, service_rate, wait_slo_s, max_violation, slots_per_replica))
    out["replicas"] = max(1, out["servers"] // slots_per_replica)
    return out
