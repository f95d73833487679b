"""Checks the limit with the unaligned request but charges the aligned size: used can pass the limit."""

MODULE = "scheduling"
REJECTED_BY = {"hami_memory": ["correctness"]}


def hami_memory(limit_bytes, ops):
    check_int("limit_bytes", limit_bytes)
    live, used, out = {}, 0, []
    for i, op in enumerate(ops):
        kind, value = _check_op(i, op, live)
        if kind == "free":
            used -= live.pop(value)
        elif used + value <= limit_bytes:
            live[i] = -(-value // HAMI_ALIGN) * HAMI_ALIGN
            used += live[i]
        else:
            out.append(("oom", used))
            continue
        out.append(("ok", used))
    return out
