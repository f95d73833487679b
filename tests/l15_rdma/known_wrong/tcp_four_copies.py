"""The lecture's 'four copies' taken literally: TCP reported as 4 host copies, each a CPU copy of P."""

MODULE = "rdma"
REJECTED_BY = {"memory_bus_bytes": ["correctness"]}

_right_bus = memory_bus_bytes


def memory_bus_bytes(payload_bytes, path):
    out = _right_bus(payload_bytes, path)
    if path == "tcp":
        out["host_copies"] = 4
        out["cpu_copy_bytes"] = 4 * payload_bytes
    return out
