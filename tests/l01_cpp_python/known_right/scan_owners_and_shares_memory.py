"""Correct alternatives: owners counted by scanning the variables (no counters), sharing tested with
np.shares_memory on byte views, and the list's bytes as header + 32 B per element + 8 B per spare slot."""

MODULE = "boundary"
ACCEPTED = ["list_vs_tensor_bytes", "simulate_ownership", "zero_copy_report"]

import numpy as np


def list_vs_tensor_bytes(n, elem_bytes=4, capacity=None):
    check_int("n", n)
    check_int("elem_bytes", elem_bytes, 1)
    spare = 0
    if capacity is not None:
        spare = check_int("capacity", capacity) - n
        if spare < 0:
            raise ValueError(f"capacity ({capacity}) is below n ({n})")
    total = 56 + 32 * n + 8 * spare
    return {"list_total": total, "tensor_bytes": elem_bytes * n, "list_header": 56,
            "pointer_slots": 8 * (n + spare), "float_objects": total - 56 - 8 * (n + spare)}


def simulate_ownership(ops):
    if isinstance(ops, str | bytes) or not isinstance(ops, Sequence):
        raise ValueError("ops must be a list of tuples")
    parsed = [_parse_op(i, op) for i, op in enumerate(ops)]
    env, alive, freed = {}, [], []

    def count(res):
        return sum(1 for h in env.values() if h and h[0] != "weak" and h[1] == res)

    def get(i, name):
        if name not in env:
            raise ValueError(f"ops[{i}]: {name!r} was never assigned")
        return env[name]

    def put(name, h):
        old = env.get(name)
        env[name] = h
        if old and old[0] != "weak" and old[1] in alive and count(old[1]) == 0:
            alive.remove(old[1])
            freed.append(old[1])

    for i, (kind, *a) in enumerate(parsed):
        if kind in ("unique", "shared"):
            if a[1] in alive or a[1] in freed:
                raise ValueError(f"ops[{i}]: {a[1]!r} exists already")
            put(a[0], None)
            alive.append(a[1])
            env[a[0]] = (kind, a[1])
        elif kind == "reset":
            get(i, a[0])
            put(a[0], None)
        elif kind == "end":
            for name in list(env)[::-1]:
                put(name, None)
                del env[name]
        else:
            h = get(i, a[1])
            if kind == "copy":
                if h and h[0] == "unique":
                    raise ValueError(f"ops[{i}]: a unique_ptr cannot be copied")
                put(a[0], h)
            elif kind == "move":
                if a[0] != a[1]:
                    env[a[1]] = None
                    put(a[0], h)
            elif kind == "weak":
                if h and h[0] == "unique":
                    raise ValueError(f"ops[{i}]: weak_ptr needs a shared_ptr")
                put(a[0], h and ("weak", h[1]))
            else:
                if not h or h[0] != "weak":
                    raise ValueError(f"ops[{i}]: only a weak_ptr can be locked")
                put(a[0], ("shared", h[1]) if h[1] in alive else None)
    return {"freed": freed, "live": {r: count(r) for r in sorted(alive)}}


def zero_copy_report(x):
    x = _check_report_input(x)
    own = np.frombuffer(memoryview(x.numpy()).cast("B"), dtype=np.uint8)

    def s(t):
        return bool(np.shares_memory(own, t if isinstance(t, np.ndarray) else t.numpy()))

    other = torch.float32 if x.dtype == torch.float64 else torch.float64
    pairs = [("numpy", x.numpy()), ("from_numpy", torch.from_numpy(x.numpy())), ("view", x.view(-1)),
             ("slice", x[1:]), ("transpose", x.transpose(0, 1)),
             ("transpose_contiguous", x.transpose(0, 1).contiguous()), ("contiguous_of_contiguous", x.contiguous()),
             ("clone", x.clone()), ("to_same_dtype", x.to(x.dtype)), ("to_other_dtype", x.to(other)),
             ("tensor_of_numpy", torch.tensor(x.numpy()))]
    return {k: s(t) for k, t in pairs}
