"""Correct alternative: each step's send and receive posted together with batch_isend_irecv."""

MODULE = "ring"
ACCEPTED = ["ring_reduce_scatter", "ring_all_gather", "ring_all_reduce"]


def _exchange(send, recv, right, left):
    ops = []
    if send.numel():
        ops.append(dist.P2POp(dist.isend, send.contiguous(), right))
    if recv.numel():
        ops.append(dist.P2POp(dist.irecv, recv, left))
    if ops:
        for work in dist.batch_isend_irecv(ops):
            work.wait()
