"""Classic mistake (utilisation sizing): the fewest slots that keep ρ < 1, 21 for the worked load, where 59 % of
requests wait over 0.5 s."""

MODULE = "slo"
REJECTED_BY = {"servers_for_wait_slo": ["correctness"]}


def servers_for_wait_slo(arrival_rate, service_rate, wait_slo_s, max_violation, slots_per_replica=1):
    _check_real("wait_slo_s", wait_slo_s)
    _check_real("max_violation", max_violation, positive=True, high=1.0)
    slots = check_int("slots_per_replica", slots_per_replica, 1)
    c = math.floor(_check_real("arrival_rate", arrival_rate) / _check_real("service_rate", service_rate,
                                                                          positive=True)) + 1
    return {"servers": c, "replicas": -(-c // slots)}
