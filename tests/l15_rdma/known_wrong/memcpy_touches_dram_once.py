"""A memcpy counted as one DRAM access, not a read plus a write: TCP moves 3P through host memory."""

MODULE = "rdma"
REJECTED_BY = {"memory_bus_bytes": ["correctness"]}

_right_bus = memory_bus_bytes


def memory_bus_bytes(payload_bytes, path):
    out = _right_bus(payload_bytes, path)
    if path == "tcp":
        out["host_dram_bytes"] = 3 * payload_bytes
    return out
