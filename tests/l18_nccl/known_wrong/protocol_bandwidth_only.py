"""Classic bug: the protocol with the highest bandwidth is always chosen (latency ignored): "simple"."""

MODULE = "nccl"
REJECTED_BY = {"best_protocol": ["correctness"]}


def best_protocol(message_bytes):
    _check_bytes("message_bytes", message_bytes)
    return max(PROTOCOLS, key=lambda name: PROTOCOLS[name][1])
