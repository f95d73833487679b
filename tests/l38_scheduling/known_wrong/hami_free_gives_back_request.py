"""Free gives back the bytes that were asked for, not the 2 MiB granules that were charged."""

MODULE = "scheduling"
REJECTED_BY = {"hami_memory": ["correctness"]}


def hami_memory(limit_bytes, ops):
    check_int("limit_bytes", limit_bytes)
    live, asked, used, out = {}, {}, 0, []
    for i, op in enumerate(ops):
        kind, value = _check_op(i, op, live)
        if kind == "free":
            live.pop(value)
            used -= asked.pop(value)
            out.append(("ok", used))
            continue
        charge = -(-value // HAMI_ALIGN) * HAMI_ALIGN
        if used + charge > limit_bytes:
            out.append(("oom", used))
            continue
        live[i], asked[i], used = charge, value, used + charge
        out.append(("ok", used))
    return out
