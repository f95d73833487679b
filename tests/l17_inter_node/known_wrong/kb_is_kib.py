"""Takes the message size for decimal kilobytes and converts it again to KiB (S·1.024): 14,000 B → 94.96 %."""

MODULE = "inter_node"
REJECTED_BY = {"control_share": ["correctness"]}

_right_share = control_share


def control_share(alpha_s, msg_bytes, beta_bytes_per_s):
    _right_share(alpha_s, msg_bytes, beta_bytes_per_s)
    return alpha_s / (alpha_s + msg_bytes * 1.024 / beta_bytes_per_s)
