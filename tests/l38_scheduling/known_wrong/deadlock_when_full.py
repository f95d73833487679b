"""Deadlock read off the free count: partly bound jobs and no free GPU, ignoring jobs that will finish."""

MODULE = "scheduling"
REJECTED_BY = {"schedule_pods": ["correctness"]}

_right_schedule = schedule_pods


def schedule_pods(capacity, job_sizes, arrivals, gang):
    got = _right_schedule(capacity, job_sizes, arrivals, gang)
    partial = any(0 < got["bound"][j] < job_sizes[j] for j in job_sizes)
    return {**got, "deadlocked": partial and got["free"] == 0}
