"""Classic bug: every rank calls the blocking send before its recv; gloo's send waits for the recv, so the ring
deadlocks (at any message size)."""

MODULE = "ring"
REJECTED_BY = {"ring_reduce_scatter": ["correctness", "efficiency"], "ring_all_gather": ["correctness", "efficiency"],
               "ring_all_reduce": ["correctness", "efficiency"]}


def _exchange(send, recv, right, left):
    if send.numel():
        dist.send(send.contiguous(), right)
    if recv.numel():
        dist.recv(recv, left)
