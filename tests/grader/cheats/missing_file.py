"""Not an attack, a broken submission: softmax.py is missing. Every exercise of the file scores 0
with a message that says how to restore it."""

ZERO = ["online_softmax_state", "merge_online_states", "softmax_hbm_bytes", "softmax_fused", "softmax_online"]
MESSAGE = "not found"
DELETE = True
