"""Returns the data's share S/β / (α + S/β): the complement of the control plane's share."""

MODULE = "inter_node"
REJECTED_BY = {"control_share": ["correctness"]}

_right_share = control_share


def control_share(alpha_s, msg_bytes, beta_bytes_per_s):
    return 1.0 - _right_share(alpha_s, msg_bytes, beta_bytes_per_s)
