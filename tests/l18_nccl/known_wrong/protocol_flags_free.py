"""Classic bug: LL and LL128 priced at the full bandwidth (their flags cost nothing), so LL always wins."""

MODULE = "nccl"
REJECTED_BY = {"best_protocol": ["correctness"]}


def best_protocol(message_bytes):
    s = _check_bytes("message_bytes", message_bytes)
    times = {name: lat + s / SIMPLE_BYTES_PER_S for name, (lat, _) in PROTOCOLS.items()}
    return min(("ll", "ll128", "simple"), key=times.__getitem__)
