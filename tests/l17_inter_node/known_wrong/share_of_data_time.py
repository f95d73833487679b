"""α over the data time alone (α / (S/β)), not over the whole message: the 'share' exceeds 1 for small messages."""

MODULE = "inter_node"
REJECTED_BY = {"control_share": ["correctness"]}

_right_share = control_share


def control_share(alpha_s, msg_bytes, beta_bytes_per_s):
    _right_share(alpha_s, msg_bytes, beta_bytes_per_s)
    return alpha_s / (msg_bytes / beta_bytes_per_s) if msg_bytes else 1.0
