"""QP states ignored: every side may post, send and receive whatever its state (modify_qp always succeeds)."""

MODULE = "rdma"
REJECTED_BY = {"simulate_verbs": ["correctness"]}

QP_TRANSITIONS = {s: QP_STATES for s in QP_STATES}
_right_verbs = simulate_verbs


def simulate_verbs(ops):
    ops = list(ops)
    kept = [op for op in ops if not (isinstance(op, tuple) and op and op[0] == "modify_qp")]
    it = iter(_right_verbs(kept))
    return [{"op": "modify_qp", "status": "SUCCESS", "cqe": []}
            if isinstance(op, tuple) and op and op[0] == "modify_qp" else next(it) for op in ops]
