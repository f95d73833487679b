"""Another correct algorithm: Erlang C from the factorial form evaluated in log space (lgamma, log-sum-exp), which
does not overflow; the slot search bisects on c instead of stepping one slot at a time."""

MODULE = "slo"
ACCEPTED = ["erlang_c", "servers_for_wait_slo"]


def erlang_c(servers, offered_load):
    c, a = check_int("servers", servers, 1), _check_real("offered_load", offered_load)
    if a >= c:
        raise ValueError(f"offered_load = {a} must be below servers = {c}")
    if a == 0:
        return 0.0
    logs = [k * math.log(a) - math.lgamma(k + 1) for k in range(c)]
    log_tail = c * math.log(a) - math.lgamma(c + 1) + math.log(c / (c - a))
    top = max(*logs, log_tail)
    head = sum(math.exp(x - top) for x in logs)
    tail = math.exp(log_tail - top)
    return tail / (head + tail)


def servers_for_wait_slo(arrival_rate, service_rate, wait_slo_s, max_violation, slots_per_replica=1):
    lam, mu = _check_real("arrival_rate", arrival_rate), _check_real("service_rate", service_rate, positive=True)
    t = _check_real("wait_slo_s", wait_slo_s)
    eps = _check_real("max_violation", max_violation, positive=True, high=1.0)
    slots = check_int("slots_per_replica", slots_per_replica, 1)

    def meets(c):
        return erlang_c(c, lam / mu) * math.exp(-(c * mu - lam) * t) <= eps

    low = math.floor(lam / mu) + 1
    high = low
    while not meets(high):
        high *= 2
    while low < high:
        mid = (low + high) // 2
        low, high = (low, mid) if meets(mid) else (mid + 1, high)
    return {"servers": low, "replicas": -(-low // slots)}
