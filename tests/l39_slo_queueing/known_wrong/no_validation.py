"""Classic bug: no argument checks: A >= c, bad > total, a missing window or a target of 0 come back as numbers."""

MODULE = "slo"
REJECTED_BY = {
    "erlang_c": ["correctness"],
    "mmc_wait": ["correctness"],
    "servers_for_wait_slo": ["correctness"],
    "burn_rate": ["correctness"],
    "budget_consumed": ["correctness"],
    "burn_rate_alerts": ["correctness"],
    "autoscale_replicas": ["correctness"],
}


def erlang_c(servers, offered_load):
    b = 1.0
    for k in range(1, int(servers) + 1):
        b = offered_load * b / (k + offered_load * b)
    return b / (1.0 - (offered_load / servers) * (1.0 - b))


def mmc_wait(arrival_rate, service_rate, servers, t_s=0.0):
    p = erlang_c(servers, arrival_rate / service_rate) if service_rate else 1.0
    drain = servers * service_rate - arrival_rate
    wait = p / drain if drain else math.inf
    return {"utilization": arrival_rate / (servers * service_rate) if service_rate else math.inf, "p_wait": p,
            "mean_wait_s": wait, "mean_response_s": wait + (1 / service_rate if service_rate else math.inf),
            "p_wait_exceeds_t": p * math.exp(-drain * t_s)}


def servers_for_wait_slo(arrival_rate, service_rate, wait_slo_s, max_violation, slots_per_replica=1):
    mu = service_rate or 1.0
    c = math.floor(arrival_rate / mu) + 1
    while c < 10_000 and erlang_c(c, arrival_rate / mu) * math.exp(-(c * mu - arrival_rate) * wait_slo_s) > (
        max_violation
    ):
        c += 1
    return {"servers": c, "replicas": -(-c // (slots_per_replica or 1))}


def burn_rate(bad, total, slo_target):
    if not total or slo_target == 1:
        return 0.0
    return float(Fraction(bad) / Fraction(total) / (1 - Fraction(str(slo_target))))


def budget_consumed(burn, window_s, period_s=MONTH_S):
    return burn * window_s / period_s if period_s else 0.0


def burn_rate_alerts(windows, slo_target):
    try:
        budget = 1 - Fraction(str(slo_target))
        burn = {w: Fraction(b, n) / budget if n else Fraction(0) for w, (b, n, *_) in dict(windows).items()}
        return [name for name, long, short, th in RULES if burn.get(long, 0) >= th and burn.get(short, 0) >= th]
    except (TypeError, ValueError, ZeroDivisionError):
        return []


def autoscale_replicas(current, total_waiting, target_waiting_per_pod, avg_kv_usage, kv_target=0.75, min_replicas=1,
                       max_replicas=1_000_000):
    by_queue = math.ceil(total_waiting / target_waiting_per_pod) if target_waiting_per_pod else 0
    by_kv = math.ceil(Fraction(current) * Fraction(str(avg_kv_usage)) / Fraction(str(kv_target))) if kv_target else 0
    return min(max_replicas, max(min_replicas, by_queue, by_kv))
