"""Borrowing without reclaim: a queue that lent its quota waits until the borrower finishes."""

MODULE = "scheduling"
REJECTED_BY = {"kueue_simulate": ["correctness"]}


def kueue_simulate(nominal, events):
    capacity, spec, admitted, pending = sum(nominal.values()), {}, {}, []
    usage = dict.fromkeys(nominal, 0)
    for i, event in enumerate(events):
        event = _check_event(i, event, nominal, set(spec), admitted)
        if event[0] == "submit":
            spec[event[1]] = (event[2], event[3])
            pending.append(event[1])
        else:
            usage[spec[event[1]][0]] -= spec[event[1]][1]
            del admitted[event[1]]
        for name in list(pending):
            q, g = spec[name]
            if sum(usage.values()) + g <= capacity:
                admitted[name] = i
                usage[q] += g
                pending.remove(name)
    return {"usage": usage, "admitted": list(admitted), "pending": pending, "preempted": []}
