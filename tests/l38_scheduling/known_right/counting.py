"""Correct alternatives: greedy as "the first capacity arrivals bind", gang by completion order; HAMi with a
running list of live charges."""

MODULE = "scheduling"
ACCEPTED = ["schedule_pods", "hami_memory"]


def schedule_pods(capacity, job_sizes, arrivals, gang):
    _check_jobs(capacity, job_sizes, arrivals, gang)
    arrivals = list(arrivals)
    arrived = {j: arrivals.count(j) for j in job_sizes}
    if gang:
        bound, free = dict.fromkeys(job_sizes, 0), capacity
        last = {j: i for i, j in enumerate(arrivals)}
        for j in sorted((j for j in job_sizes if arrived[j] == job_sizes[j]), key=last.get):
            if job_sizes[j] <= free:
                bound[j], free = job_sizes[j], free - job_sizes[j]
    else:
        bound = {j: arrivals[:capacity].count(j) for j in job_sizes}
        free = capacity - sum(bound.values())
    stuck = [job_sizes[j] - bound[j] for j in job_sizes if 0 < bound[j] < job_sizes[j]]
    can_free = free + sum(bound[j] for j in job_sizes if bound[j] == job_sizes[j])
    return {"bound": bound, "pending": {j: arrived[j] - bound[j] for j in job_sizes}, "free": free,
            "deadlocked": bool(stuck) and min(stuck) > can_free}


def hami_memory(limit_bytes, ops):
    check_int("limit_bytes", limit_bytes)
    charges, out = {}, []
    for i, op in enumerate(ops):
        kind, value = _check_op(i, op, charges)
        if kind == "free":
            del charges[value]
        else:
            granules = (value + HAMI_ALIGN - 1) // HAMI_ALIGN
            if sum(charges.values()) + granules * HAMI_ALIGN <= limit_bytes:
                charges[i] = granules * HAMI_ALIGN
            else:
                out.append(("oom", sum(charges.values())))
                continue
        out.append(("ok", sum(charges.values())))
    return out
