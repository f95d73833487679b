"""SEND treated like a TCP socket: it succeeds with no RECV posted (the peer buffers it)."""

MODULE = "rdma"
REJECTED_BY = {"simulate_verbs": ["correctness"]}

_right_verbs = simulate_verbs


def simulate_verbs(ops):
    out = _right_verbs(ops)
    for o in out:
        if o["op"] == "send" and o["status"] == "RNR":
            o["status"], o["cqe"] = "SUCCESS", ["A", "B"]
    return out
