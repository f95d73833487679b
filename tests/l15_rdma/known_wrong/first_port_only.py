"""Only the first HCA's port is read (the lab reads port 1 of one device): one active port on mlx5_2 is missed."""

MODULE = "rdma"
REJECTED_BY = {"gdr_readiness": ["correctness"]}

_right_gdr = gdr_readiness


def gdr_readiness(lsmod, ibv_devinfo, nccl_log):
    out = _right_gdr(lsmod, ibv_devinfo, nccl_log)
    first = next((line for line in ibv_devinfo.splitlines() if PORT_STATE_LINE.match(line)), "")
    if not PORT_ACTIVE.match(first) and "no_active_port" not in out["reasons"]:
        out["reasons"].insert(1 if "peermem_not_loaded" in out["reasons"] else 0, "no_active_port")
        out["ready"] = False
    return out
