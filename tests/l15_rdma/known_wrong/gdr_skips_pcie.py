"""GPUDirect RDMA as free of the bus: the NIC's peer-to-peer read still crosses PCIe."""

MODULE = "rdma"
REJECTED_BY = {"memory_bus_bytes": ["correctness"]}

_right_bus = memory_bus_bytes


def memory_bus_bytes(payload_bytes, path):
    out = _right_bus(payload_bytes, path)
    if path == "gdr":
        out["pcie_bytes"] = 0
    return out
