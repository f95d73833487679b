"""Host-staged RDMA as '1 copy' of DRAM traffic: the NIC's read of the staging buffer is forgotten."""

MODULE = "rdma"
REJECTED_BY = {"memory_bus_bytes": ["correctness"]}

_right_bus = memory_bus_bytes


def memory_bus_bytes(payload_bytes, path):
    out = _right_bus(payload_bytes, path)
    if path == "rdma_host":
        out["host_dram_bytes"] = payload_bytes
    return out
