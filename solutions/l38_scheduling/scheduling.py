"""L38 · Scheduling GPU jobs: gang admission, Kueue quota borrowing and reclaim, HAMi memory limits.

Three small simulators of the lecture's three layers:

* pod binding (kube-scheduler vs a gang scheduler): a distributed job is useful only when *all* its
  pods run. Binding pod by pod, as a plain scheduler does, lets two interleaved jobs each grab part
  of the cluster and wait forever for the rest (hold-and-wait); binding a job only when all of it
  fits (Volcano's minMember, coscheduling) cannot deadlock;
* a Kueue cohort: each ClusterQueue owns a nominal quota; idle quota of the cohort can be borrowed,
  and a queue that wants its own quota back reclaims it by preempting the borrowers' newest workloads;
* HAMi's memory limit: ``libvgpu.so`` intercepts ``cuMemAlloc`` in user space, rounds every request up
  to 2 MiB and refuses any that would take the container past its limit.

Conventions: GPUs and bytes are exact ints; every pod asks for one GPU. Invalid arguments raise
ValueError naming the argument (``arrivals[3]``, ``events[0]``, ``ops[7]`` for one bad entry).
"""

from __future__ import annotations

from collections.abc import Sequence

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

HAMI_ALIGN = 2 * 1024 * 1024  # HAMi-core rounds every allocation up to 2 MiB


# ---------------------------------------------------------------------------------------------
# 1. Greedy pod binding vs gang scheduling
# ---------------------------------------------------------------------------------------------


def _check_jobs(capacity: int, job_sizes: dict[str, int], arrivals: Sequence[str], gang: bool) -> None:
    check_int("capacity", capacity)
    if not isinstance(job_sizes, dict) or not job_sizes:
        raise ValueError(f"job_sizes must be a non-empty dict of job → pods, got {job_sizes!r}")
    for job, size in job_sizes.items():
        check_int(f"job_sizes[{job!r}]", size, 1)
    if not isinstance(gang, bool):
        raise ValueError(f"gang must be a bool, got {gang!r}")
    if isinstance(arrivals, str) or not isinstance(arrivals, Sequence):
        raise ValueError(f"arrivals must be a sequence of job names, got {arrivals!r}")
    seen = dict.fromkeys(job_sizes, 0)
    for i, job in enumerate(arrivals):
        if job not in job_sizes:
            raise ValueError(f"arrivals[{i}] = {job!r} is not a job of job_sizes {sorted(job_sizes)}")
        seen[job] += 1
        if seen[job] > job_sizes[job]:
            raise ValueError(f"arrivals[{i}]: job {job!r} has only {job_sizes[job]} pods, this is pod {seen[job]}")


def schedule_pods(capacity: int, job_sizes: dict[str, int], arrivals: Sequence[str], gang: bool) -> dict:
    """Bind the pods of ``arrivals`` (one job name per arriving pod, one GPU each) to ``capacity`` GPUs.

    ``gang=False`` (a plain scheduler): each pod binds at its arrival if a GPU is free, else it waits.
    ``gang=True``: a job's pods wait until all ``job_sizes[job]`` of them have arrived; then the whole
    job binds at once if it fits, else none of it does. Nothing finishes during the simulation.

    Returns ``{"bound": {job: pods bound}, "pending": {job: pods arrived but not bound}, "free": GPUs
    free, "deadlocked": bool}`` (every job of ``job_sizes`` is a key). Deadlocked: some job is partly
    bound (0 < bound < size) and no partly bound job could complete even if every fully bound job
    released its GPUs. Worked example, 6 GPUs, jobs A and B of 4 pods arriving A, B, A, B, …: greedy →
    A 3, B 3, free 0, deadlocked; gang → A 4, B 0, free 2, not deadlocked. In order (A×4 then B×4)
    greedy → A 4, B 2, not deadlocked: A will finish and free 4.

    Errors: ``capacity`` not an int >= 0; ``job_sizes`` empty or a size not an int >= 1;
    ``arrivals[i]`` an unknown job or one pod too many; ``gang`` not a bool.
    """
    _check_jobs(capacity, job_sizes, arrivals, gang)
    # TODO: bind pod by pod (greedy) or job by job once complete (gang); then test for deadlock.
    ### BEGIN SOLUTION
    bound = dict.fromkeys(job_sizes, 0)
    arrived = dict.fromkeys(job_sizes, 0)
    free = capacity
    for job in arrivals:
        arrived[job] += 1
        if not gang and free > 0:
            bound[job] += 1
            free -= 1
        elif gang and arrived[job] == job_sizes[job] and free >= job_sizes[job]:
            bound[job] = job_sizes[job]
            free -= job_sizes[job]
    partial = [job for job in job_sizes if 0 < bound[job] < job_sizes[job]]
    releasable = free + sum(bound[job] for job in job_sizes if bound[job] == job_sizes[job])
    deadlocked = bool(partial) and all(job_sizes[job] - bound[job] > releasable for job in partial)
    pending = {job: arrived[job] - bound[job] for job in job_sizes}
    return {"bound": bound, "pending": pending, "free": free, "deadlocked": deadlocked}
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 2. A Kueue cohort: borrowing and reclaim
# ---------------------------------------------------------------------------------------------


def _check_event(i: int, event: object, nominal: dict[str, int], names: set[str], admitted: dict) -> tuple:
    where = f"events[{i}]"
    if not isinstance(event, tuple) or not event or event[0] not in ("submit", "finish"):
        raise ValueError(f"{where} must be ('submit', name, queue, gpus) or ('finish', name), got {event!r}")
    if event[0] == "submit":
        if len(event) != 4:
            raise ValueError(f"{where} must be ('submit', name, queue, gpus), got {event!r}")
        _, name, queue, gpus = event
        if name in names:
            raise ValueError(f"{where}: workload {name!r} was already submitted")
        if queue not in nominal:
            raise ValueError(f"{where}: queue {queue!r} is not one of {sorted(nominal)}")
        if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1:
            raise ValueError(f"{where}: gpus must be an int >= 1, got {gpus!r}")
    elif len(event) != 2 or event[1] not in admitted:
        raise ValueError(f"{where}: only an admitted workload can finish, got {event!r}")
    return event


def kueue_simulate(nominal: dict[str, int], events: Sequence[tuple]) -> dict:
    """Admission of workloads to ClusterQueues that share one cohort (BestEffortFIFO, reclaim within cohort).

    ``nominal`` maps each ClusterQueue to its nominal GPU quota; the cohort's capacity is their sum.
    ``events`` are ``("submit", name, queue, gpus)`` and ``("finish", name)``. A submitted workload joins
    the back of the pending list; after every event the pending list is tried in order, again and
    again until nothing more is admitted. A workload is admitted:

    * if the cohort has room (usage of all queues + gpus <= Σ nominal): borrowing is allowed;
    * else, if it fits within its own queue's nominal quota (usage of its queue + gpus <= nominal),
      by preempting workloads of *other* queues that are above their nominal quota, the most recently
      admitted first, each taken only while its queue is still above nominal — but only if that makes
      it fit; otherwise nothing is preempted and it stays pending.

    Preempted workloads go to the back of the pending list, in the order they were preempted.
    Returns ``{"usage": {queue: GPUs}, "admitted": [names, in admission order], "pending": [names],
    "preempted": [every preemption so far, in order]}``.
    Worked example: {cq-a: 8, cq-b: 8}; b0…b6 of 2 GPUs in cq-b reach 14 (6 borrowed); a0 of 8 in cq-a
    preempts b6, b5, b4 → usage A 8, B 8, pending [b6, b5, b4]; when a0 finishes they return (B 14).

    Errors: ``nominal`` empty or a quota not an int >= 0; ``events[i]`` malformed, a duplicate name, an
    unknown queue, gpus not an int >= 1, or a finish of a workload that is not admitted.
    """
    if not isinstance(nominal, dict) or not nominal:
        raise ValueError(f"nominal must be a non-empty dict of queue → GPUs, got {nominal!r}")
    for queue, quota in nominal.items():
        check_int(f"nominal[{queue!r}]", quota)
    if isinstance(events, str) or not isinstance(events, Sequence):
        raise ValueError(f"events must be a sequence of tuples, got {events!r}")
    # TODO: keep the admitted workloads (with their admission order) and the pending list; after each event
    # retry the pending list, borrowing when the cohort has room and reclaiming when the queue is owed quota.
    ### BEGIN SOLUTION
    spec: dict[str, tuple[str, int]] = {}  # name → (queue, gpus)
    admitted: dict[str, int] = {}  # name → admission stamp (insertion order = admission order)
    pending: list[str] = []
    preempted: list[str] = []
    usage = dict.fromkeys(nominal, 0)
    capacity = sum(nominal.values())
    stamp = 0

    def try_admit(name: str) -> bool:
        nonlocal stamp
        queue, gpus = spec[name]
        victims: list[str] = []
        if sum(usage.values()) + gpus > capacity:
            if usage[queue] + gpus > nominal[queue]:
                return False
            left = dict(usage)
            for other in sorted(admitted, key=admitted.get, reverse=True):
                if sum(left.values()) + gpus <= capacity:
                    break
                q, g = spec[other]
                if q != queue and left[q] > nominal[q]:
                    victims.append(other)
                    left[q] -= g
            if sum(left.values()) + gpus > capacity:
                return False
        for other in victims:
            del admitted[other]
            usage[spec[other][0]] -= spec[other][1]
            pending.append(other)
            preempted.append(other)
        stamp += 1
        admitted[name] = stamp
        usage[queue] += gpus
        pending.remove(name)
        return True

    for i, event in enumerate(events):
        event = _check_event(i, event, nominal, set(spec), admitted)
        if event[0] == "submit":
            spec[event[1]] = (event[2], event[3])
            pending.append(event[1])
        else:
            usage[spec[event[1]][0]] -= spec[event[1]][1]
            del admitted[event[1]]
        while any(try_admit(name) for name in list(pending)):
            pass
    return {"usage": usage, "admitted": list(admitted), "pending": pending, "preempted": preempted}
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 3. HAMi: a per-container memory limit enforced at cuMemAlloc
# ---------------------------------------------------------------------------------------------


def _check_op(i: int, op: object, live: dict[int, int]) -> tuple:
    where = f"ops[{i}]"
    if not isinstance(op, tuple) or len(op) != 2 or op[0] not in ("alloc", "free"):
        raise ValueError(f"{where} must be ('alloc', nbytes) or ('free', k), got {op!r}")
    kind, value = op
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}: {kind} takes an int, got {value!r}")
    if kind == "alloc" and value < 1:
        raise ValueError(f"{where}: cuMemAlloc of {value} bytes is invalid (nbytes >= 1)")
    if kind == "free" and value not in live:
        raise ValueError(f"{where}: ops[{value}] is not a live allocation (never allocated, refused or freed)")
    return op


def hami_memory(limit_bytes: int, ops: Sequence[tuple]) -> list[tuple[str, int]]:
    """What HAMi's ``cuMemAlloc`` hook answers a container limited to ``limit_bytes`` of GPU memory.

    ``ops`` are ``("alloc", nbytes)`` and ``("free", k)``, the latter freeing the allocation made by
    ``ops[k]``. An allocation is charged ⌈nbytes / 2 MiB⌉ · 2 MiB; if the charge would take the bytes in
    use past the limit the call fails (``"oom"``) and nothing changes. Returns one ``(status, used)``
    per op, ``used`` being the bytes charged after it. Worked example, limit 1 GiB: 511 allocations of
    1 B → used 1 071 644 672 (511 × 2 MiB); then 3 MiB → ("oom", 1 071 644 672) (it would be charged
    4 MiB); 2 MiB → ("ok", 1 073 741 824), exactly the limit; free one → 1 071 644 672; 3 MiB → "oom".

    Errors: ``limit_bytes`` not an int >= 0; ``ops[i]`` malformed, an alloc of fewer than 1 byte, or a
    free of something that is not a live allocation.
    """
    check_int("limit_bytes", limit_bytes)
    if isinstance(ops, str) or not isinstance(ops, Sequence):
        raise ValueError(f"ops must be a sequence of tuples, got {ops!r}")
    # TODO: charge each allocation rounded up to HAMI_ALIGN; refuse what would pass the limit; free by op index.
    ### BEGIN SOLUTION
    live: dict[int, int] = {}  # op index → bytes charged
    used = 0
    out = []
    for i, op in enumerate(ops):
        kind, value = _check_op(i, op, live)
        if kind == "free":
            used -= live.pop(value)
            out.append(("ok", used))
            continue
        charge = -(-value // HAMI_ALIGN) * HAMI_ALIGN
        if used + charge > limit_bytes:
            out.append(("oom", used))
            continue
        live[i] = charge
        used += charge
        out.append(("ok", used))
    return out
    ### END SOLUTION
