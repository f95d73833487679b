"""No argument checks: unknown jobs, queues and ops are silently accepted."""

MODULE = "scheduling"
REJECTED_BY = {"schedule_pods": ["correctness"], "kueue_simulate": ["correctness"], "hami_memory": ["correctness"]}

check_int = lambda name, value, minimum=0: value


def _check_jobs(capacity, job_sizes, arrivals, gang):
    for job in arrivals:
        job_sizes.setdefault(job, 1)


def _check_event(i, event, nominal, names, admitted):
    if event[0] == "submit":
        nominal.setdefault(event[2], 0)
    return event


def _check_op(i, op, live):
    if op[0] == "free":
        live.setdefault(op[1], 0)
    return op
