"""A "gang" that binds as many of a complete job's pods as fit: hold-and-wait is back."""

MODULE = "scheduling"
REJECTED_BY = {"schedule_pods": ["correctness"]}

_right_schedule = schedule_pods


def schedule_pods(capacity, job_sizes, arrivals, gang):
    if not gang:
        return _right_schedule(capacity, job_sizes, arrivals, gang)
    _check_jobs(capacity, job_sizes, arrivals, gang)
    bound, arrived, free = dict.fromkeys(job_sizes, 0), dict.fromkeys(job_sizes, 0), capacity
    for job in arrivals:
        arrived[job] += 1
        if arrived[job] == job_sizes[job]:
            take = min(free, job_sizes[job])
            bound[job], free = take, free - take
    partial = [j for j in job_sizes if 0 < bound[j] < job_sizes[j]]
    whole = free + sum(bound[j] for j in job_sizes if bound[j] == job_sizes[j])
    dead = bool(partial) and all(job_sizes[j] - bound[j] > whole for j in partial)
    return {"bound": bound, "pending": {j: arrived[j] - bound[j] for j in job_sizes}, "free": free,
            "deadlocked": dead}
