"""Matches only the lecture's spelling 'GPUDirect RDMA is disabled': NCCL's 'GPU Direct RDMA Disabled' is missed."""

MODULE = "rdma"
REJECTED_BY = {"gdr_readiness": ["correctness"]}

NCCL_GDR_DISABLED = re.compile(r"GPUDirect RDMA is disabled")
