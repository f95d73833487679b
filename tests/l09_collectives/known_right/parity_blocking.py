"""Correct alternative: blocking send and recv only, ordered by rank parity (even ranks send first, odd ranks
receive first), so every send meets a posted recv; with an odd ring the chain still unwinds from rank 1."""

MODULE = "ring"
ACCEPTED = ["ring_reduce_scatter", "ring_all_gather", "ring_all_reduce"]


def _exchange(send, recv, right, left):
    def do_send():
        if send.numel():
            dist.send(send.contiguous(), right)

    def do_recv():
        if recv.numel():
            dist.recv(recv, left)

    if dist.get_rank() % 2 == 0:
        do_send()
        do_recv()
    else:
        do_recv()
        do_send()
