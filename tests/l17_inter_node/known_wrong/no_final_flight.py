"""Stops the clock when the last put leaves the sender: the half RTT until it lands is missing."""

MODULE = "inter_node"
REJECTED_BY = {"signalled_puts_us": ["correctness"]}

_right_puts = signalled_puts_us


def signalled_puts_us(n_msgs, msg_bytes, alpha_us, beta_bytes_per_us, rtt_us, handshake):
    return _right_puts(n_msgs, msg_bytes, alpha_us, beta_bytes_per_us, rtt_us, handshake) - rtt_us / 2
