"""Stops at the first failed check: the node after the upgrade reports only the missing module."""

MODULE = "rdma"
REJECTED_BY = {"gdr_readiness": ["correctness"]}

_right_gdr = gdr_readiness


def gdr_readiness(lsmod, ibv_devinfo, nccl_log):
    out = _right_gdr(lsmod, ibv_devinfo, nccl_log)
    out["reasons"] = out["reasons"][:1]
    return out
