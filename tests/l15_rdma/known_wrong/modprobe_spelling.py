"""Looks for the module as modprobe spells it ('nvidia-peermem'); lsmod prints 'nvidia_peermem'."""

MODULE = "rdma"
REJECTED_BY = {"gdr_readiness": ["correctness"]}

PEERMEM_MODULES = ("nvidia-peermem", "nv_peer_mem")
