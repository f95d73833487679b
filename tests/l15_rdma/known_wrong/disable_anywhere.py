"""Any NCCL line with 'disable' in it read as GDR off: NCCL_IB_DISABLE's echo trips it."""

MODULE = "rdma"
REJECTED_BY = {"gdr_readiness": ["correctness"]}

NCCL_GDR_DISABLED = re.compile(r"disable", re.IGNORECASE)
