"""The lecture's table: Xid 31 taken for a double-bit ECC error (drain), NVLink as 61/62, 74 unknown."""

MODULE = "diagnosis"
REJECTED_BY = {"triage_xid": ["correctness"]}

XID_ACTIONS = {13: "app", 43: "app", 45: "app", 31: "drain_node", 48: "drain_node", 61: "reset_gpu",
               62: "reset_gpu", 79: "drain_node", 63: "monitor", 92: "monitor", 94: "monitor", 64: "drain_node",
               95: "drain_node", 119: "reset_gpu", 120: "reset_gpu"}
