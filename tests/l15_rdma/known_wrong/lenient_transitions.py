"""Any QP state change allowed (RESET → RTR, RTS → INIT): the INIT and RTR steps can be skipped."""

MODULE = "rdma"
REJECTED_BY = {"simulate_verbs": ["correctness"]}

QP_TRANSITIONS = {s: QP_STATES for s in QP_STATES}
