"""The lab's check: 'nvidia_peermem' anywhere in lsmod's text, Used-by column included."""

MODULE = "rdma"
REJECTED_BY = {"gdr_readiness": ["correctness"]}

_right_gdr = gdr_readiness


def gdr_readiness(lsmod, ibv_devinfo, nccl_log):
    out = _right_gdr(lsmod, ibv_devinfo, nccl_log)
    if any(name in lsmod for name in PEERMEM_MODULES) and "peermem_not_loaded" in out["reasons"]:
        out["reasons"].remove("peermem_not_loaded")
        out["ready"] = not out["reasons"]
    return out
