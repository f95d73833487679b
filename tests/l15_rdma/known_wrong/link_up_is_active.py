"""phys_state LINK_UP taken for an active port: a port in PORT_INIT (no subnet manager) passes."""

MODULE = "rdma"
REJECTED_BY = {"gdr_readiness": ["correctness"]}

_right_gdr = gdr_readiness


def gdr_readiness(lsmod, ibv_devinfo, nccl_log):
    out = _right_gdr(lsmod, ibv_devinfo, nccl_log)
    if "LINK_UP" in ibv_devinfo and "no_active_port" in out["reasons"]:
        out["reasons"].remove("no_active_port")
        out["ready"] = not out["reasons"]
    return out
