"""Reclaim preempts the oldest admitted workloads first instead of the newest."""

MODULE = "scheduling"
REJECTED_BY = {"kueue_simulate": ["correctness"]}


def kueue_simulate(nominal: dict[str, int], events: Sequence[tuple]) -> dict:
    if not isinstance(nominal, dict) or not nominal:
        raise ValueError(f"nominal must be a non-empty dict of queue → GPUs, got {nominal!r}")
    for queue, quota in nominal.items():
        check_int(f"nominal[{queue!r}]", quota)
    if isinstance(events, str) or not isinstance(events, Sequence):
        raise ValueError(f"events must be a sequence of tuples, got {events!r}")
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
            for other in sorted(admitted, key=admitted.get):
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
        for _ in range(50):  # bounded: a wrong reclaim rule can make two queues evict each other forever
            if not any(try_admit(name) for name in list(pending)):
                break
    return {"usage": usage, "admitted": list(admitted), "pending": pending, "preempted": preempted}
