"""WRITE with immediate treated as a plain WRITE: no RECV consumed, no RNR."""

MODULE = "rdma"
REJECTED_BY = {"simulate_verbs": ["correctness"]}

_right_verbs = simulate_verbs


def simulate_verbs(ops):
    ops = list(ops)
    as_write = [("write", *op[1:]) if isinstance(op, tuple) and op and op[0] == "write_imm" else op for op in ops]
    out = _right_verbs(as_write)
    for op, o in zip(ops, out, strict=True):
        if isinstance(op, tuple) and op and op[0] == "write_imm":
            o["op"] = "write_imm"
    return out
