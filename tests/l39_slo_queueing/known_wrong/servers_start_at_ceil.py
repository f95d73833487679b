"""Mistake: the search starts at ceil(λ/μ) slots; when λ/μ is a whole number that c is unstable (ρ = 1), and
the search asks erlang_c for an infinite queue."""

MODULE = "slo"
REJECTED_BY = {"servers_for_wait_slo": ["correctness"]}


def servers_for_wait_slo(arrival_rate, service_rate, wait_slo_s, max_violation, slots_per_replica=1):
    lam, mu = _check_real("arrival_rate", arrival_rate), _check_real("service_rate", service_rate, positive=True)
    t, eps = _check_real("wait_slo_s", wait_slo_s), _check_real("max_violation", max_violation, positive=True, high=1.0)
    slots = check_int("slots_per_replica", slots_per_replica, 1)
    c = max(1, math.ceil(lam / mu))
    while erlang_c(c, lam / mu) * math.exp(-(c * mu - lam) * t) > eps:
        c += 1
    return {"servers": c, "replicas": -(-c // slots)}
