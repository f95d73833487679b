"""A too-long SEND leaves the RECV queued (it should consume it): the next SEND finds a stale short RECV."""

MODULE = "rdma"
REJECTED_BY = {"simulate_verbs": ["correctness"]}


def simulate_verbs(ops):
    ops = _check_ops(ops)
    mrs, rq, out = {"A": {}, "B": {}}, {"A": deque(), "B": deque()}, []
    for op in ops:
        name, side = op[0], op[1]
        peer = PEER[side]
        status, cqe = "SUCCESS", []
        if name == "reg_mr":
            mrs[side][op[2]] = op[3]
        elif name == "post_recv":
            rq[side].append(op[2])
        elif name in ("write", "write_imm") and (op[2] not in mrs[peer] or op[3] + op[4] > mrs[peer][op[2]]):
            status, cqe = "REM_ACCESS_ERR", [side]
        elif name == "write":
            cqe = [side]
        elif name in ("send", "write_imm"):
            if not rq[peer]:
                status = "RNR"
            elif name == "send" and op[2] > rq[peer][0]:
                status, cqe = "LOC_LEN_ERR", ["A", "B"]
            else:
                rq[peer].popleft()
                cqe = ["A", "B"]
        out.append({"op": name, "status": status, "cqe": cqe})
    return out
