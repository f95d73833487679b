"""A one-sided WRITE completes on the target too, as if its CPU were told."""

MODULE = "rdma"
REJECTED_BY = {"simulate_verbs": ["correctness"]}

_right_verbs = simulate_verbs


def simulate_verbs(ops):
    out = _right_verbs(ops)
    for o in out:
        if o["op"] == "write" and o["status"] == "SUCCESS":
            o["cqe"] = ["A", "B"]
    return out
