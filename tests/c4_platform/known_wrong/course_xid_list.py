"""The RFC's P0 list [31, 43, 45, 48, 62, 79, 92]: app faults and the ECC-rate warning swap nodes, 74 is ignored."""

MODULE = "platform"
REJECTED_BY = {"self_heal": ["correctness"]}

REPLACE_XIDS = frozenset({31, 43, 45, 48, 62, 79, 92})
RESTART_XIDS = frozenset()
WATCH_XIDS = frozenset()
