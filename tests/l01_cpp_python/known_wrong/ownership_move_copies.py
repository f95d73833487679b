"""Classic mistake: std::move taken for a copy: the source keeps owning, so a moved unique_ptr is never freed once."""

MODULE = "boundary"
REJECTED_BY = {"simulate_ownership": ["correctness"]}

WEAK_OWNS, MOVE_COPIES, END_FORWARD = False, True, False


def simulate_ownership(ops):
    if isinstance(ops, str | bytes) or not isinstance(ops, Sequence):
        raise ValueError("ops must be a sequence")
    parsed = [_parse_op(i, op) for i, op in enumerate(ops)]
    owning = ("unique", "shared", "weak") if WEAK_OWNS else ("unique", "shared")
    vars_, owners, freed = {}, {}, []

    def src_of(i, name):
        if name not in vars_:
            raise ValueError(f"ops[{i}]: unknown variable {name!r}")
        return vars_[name]

    def release(h):
        if h is not None and h[0] in owning:
            owners[h[1]] -= 1
            if owners[h[1]] == 0:
                freed.append(h[1])

    def assign(dst, h):
        old = vars_.get(dst)
        vars_[dst] = h
        release(old)

    for i, (kind, *names) in enumerate(parsed):
        if kind in ("unique", "shared"):
            if names[1] in owners:
                raise ValueError(f"ops[{i}]: resource created twice")
            release(vars_.get(names[0]))
            owners[names[1]] = 1
            vars_[names[0]] = (kind, names[1])
        elif kind == "copy":
            h = src_of(i, names[1])
            if h is not None and h[0] == "unique":
                raise ValueError(f"ops[{i}]: copy of unique_ptr")
            if h is not None and h[0] in owning:
                owners[h[1]] += 1
            assign(names[0], h)
        elif kind == "move":
            h = src_of(i, names[1])
            if names[0] != names[1]:
                if MOVE_COPIES and h is not None and h[0] in owning:
                    owners[h[1]] += 1
                else:
                    vars_[names[1]] = None
                assign(names[0], h)
        elif kind == "weak":
            h = src_of(i, names[1])
            if h is not None and h[0] == "unique":
                raise ValueError(f"ops[{i}]: weak of unique_ptr")
            if h is not None and WEAK_OWNS:
                owners[h[1]] += 1
            assign(names[0], None if h is None else ("weak", h[1]))
        elif kind == "lock":
            h = src_of(i, names[1])
            if h is None or h[0] != "weak":
                raise ValueError(f"ops[{i}]: lock of a non-weak handle")
            alive = owners[h[1]] > 0
            if alive:
                owners[h[1]] += 1
            assign(names[0], ("shared", h[1]) if alive else None)
        elif kind == "reset":
            src_of(i, names[0])
            assign(names[0], None)
        else:
            for name in (list(vars_) if END_FORWARD else reversed(list(vars_))):
                release(vars_.pop(name))
    return {"freed": freed, "live": {r: c for r, c in sorted(owners.items()) if c > 0}}
