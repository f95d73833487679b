"""A handshake charged half an RTT per message (one way), not the full round trip the ACK needs."""

MODULE = "inter_node"
REJECTED_BY = {"signalled_puts_us": ["correctness"]}

_right_puts = signalled_puts_us


def signalled_puts_us(n_msgs, msg_bytes, alpha_us, beta_bytes_per_us, rtt_us, handshake):
    out = _right_puts(n_msgs, msg_bytes, alpha_us, beta_bytes_per_us, rtt_us, handshake)
    return out - n_msgs * rtt_us / 2 if handshake else out
