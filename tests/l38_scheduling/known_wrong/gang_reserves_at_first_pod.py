"""Gang scheduling that reserves the whole job when its first pod arrives, counting pods not yet created."""

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
        if arrived[job] == 1 and free >= job_sizes[job]:
            bound[job], free = job_sizes[job], free - job_sizes[job]
    pending = {j: max(arrived[j] - bound[j], 0) for j in job_sizes}
    return {"bound": bound, "pending": pending, "free": free, "deadlocked": False}
