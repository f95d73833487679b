"""Off by one at the region's end: offset + n == size refused (>= instead of >)."""

MODULE = "rdma"
REJECTED_BY = {"simulate_verbs": ["correctness"]}

_right_verbs = simulate_verbs


def simulate_verbs(ops):
    ops = list(ops)
    out = _right_verbs(ops)
    sizes = {}
    for op, o in zip(ops, out, strict=True):
        if op[0] == "reg_mr":
            sizes[(op[1], op[2])] = op[3]
        if op[0] == "write" and o["status"] == "SUCCESS":
            size = sizes.get(("B" if op[1] == "A" else "A", op[2]))
            if size is not None and op[3] + op[4] == size:
                o["status"] = "REM_ACCESS_ERR"
    return out
