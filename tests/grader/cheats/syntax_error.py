"""Not an attack, a broken submission: a syntax error in softmax.py. Every exercise of the file
scores 0 with a message naming the line; the run itself goes on."""

ZERO = ["online_softmax_state", "merge_online_states", "softmax_hbm_bytes", "softmax_fused", "softmax_online"]
MESSAGE = "syntax error"
RAW = "\n\ndef softmax_fused(x:\n    return x\n"
