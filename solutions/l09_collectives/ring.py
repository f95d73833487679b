"""L09 · Ring all-reduce from point-to-point sends: chunks, the schedule, the bytes, then the real thing on gloo.

Lecture 09 (01_性能工程与系统前置/09_网络通信基础与集合通信Collective原语直觉.md) §3.9 and §4.3-4.4:
AllReduce = ReduceScatter + AllGather. P ranks form a ring (rank r sends to r + 1 and receives from
r - 1); the tensor is cut into P chunks; each phase takes P - 1 steps in which every rank sends one
chunk and receives one. Per rank that is 2(P - 1) chunks of N/P elements: 2(P - 1)/P · N · elem
bytes, about 2N whatever P (a "gather to rank 0, add, send back" makes rank 0 send (P - 1)·N).

The schedule (fixed, so that rank r ends the reduce-scatter holding the full sum of chunk r, as
``torch.distributed.reduce_scatter`` does):

    reduce-scatter step s = 0..P-2: send chunk (r - s - 1) mod P, receive chunk (r - s - 2) mod P,
                                    acc[received chunk] = received + local
    all-gather     step s = 0..P-2: send chunk (r - s) mod P,     receive chunk (r - s - 1) mod P, overwrite

Chunks are ``torch.tensor_split`` bounds: the first numel % P chunks hold one element more; numel may
be smaller than P (trailing chunks are empty). The sum of chunk c is therefore the left fold
((x_{c+1} + x_{c+2}) + ...) + x_c, indices mod P.

gloo's blocking ``send`` does not return until the matching ``recv`` is posted, whatever the size:
if every rank sends before it receives, the ring deadlocks. Post the send with ``isend`` (or the
receive with ``irecv``, or use ``batch_isend_irecv``) and wait for it after the receive.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

PHASES = ("reduce_scatter", "all_gather")


def ring_chunks(numel: int, world_size: int) -> list[tuple[int, int]]:
    """Half-open [start, stop) bounds of the P chunks, as ``torch.tensor_split`` cuts them.

    The first numel % P chunks hold numel // P + 1 elements, the others numel // P:
    (10, 4) -> [(0, 3), (3, 6), (6, 8), (8, 10)]; (3, 4) -> [(0, 1), (1, 2), (2, 3), (3, 3)].
    ValueError naming the argument unless numel is an int >= 0 and world_size an int >= 1.
    """
    # TODO: validate, then give each of the first numel % P chunks one element more than the others.
    ### BEGIN SOLUTION
    n = check_int("numel", numel)
    p = check_int("world_size", world_size, minimum=1)
    base, extra = divmod(n, p)
    bounds, start = [], 0
    for c in range(p):
        stop = start + base + (1 if c < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds
    ### END SOLUTION


def ring_schedule(world_size: int, rank: int) -> list[tuple[str, int, int, int]]:
    """(phase, step, send_chunk, recv_chunk) of ``rank``'s 2(P - 1) steps: the reduce-scatter, then the all-gather.

    [] when P = 1. P = 4, rank 0: ("reduce_scatter", 0, 3, 2), (.., 1, 2, 1), (.., 2, 1, 0),
    ("all_gather", 0, 0, 3), (.., 1, 3, 2), (.., 2, 2, 1). ValueError naming ``rank`` unless 0 <= rank < P.
    """
    # TODO: one tuple per step of each phase, chunk indices from the schedule in the module docstring.
    ### BEGIN SOLUTION
    p = check_int("world_size", world_size, minimum=1)
    r = check_int("rank", rank)
    if r >= p:
        raise ValueError(f"rank must be < world_size = {p}, got {r}")
    rs = [("reduce_scatter", s, (r - s - 1) % p, (r - s - 2) % p) for s in range(p - 1)]
    ag = [("all_gather", s, (r - s) % p, (r - s - 1) % p) for s in range(p - 1)]
    return rs + ag
    ### END SOLUTION


def ring_bytes_sent(numel: int, world_size: int, rank: int, elem_bytes: int) -> dict[str, int]:
    """Bytes ``rank`` sends in each phase of the ring: {"reduce_scatter", "all_gather", "total"}.

    The reduce-scatter sends every chunk but the rank's own, the all-gather every chunk but its right
    neighbour's: (2**20, 4, r, 4) -> 3 MiB + 3 MiB for every r; (10, 4, r, 8) -> totals 112, 120, 128, 120.
    All 0 when P = 1. ValueError naming the argument for a bad count, rank or elem_bytes (>= 1).
    """
    # TODO: N minus the chunk the rank never sends, times the element size, per phase.
    ### BEGIN SOLUTION
    n = check_int("numel", numel)
    p = check_int("world_size", world_size, minimum=1)
    r = check_int("rank", rank)
    if r >= p:
        raise ValueError(f"rank must be < world_size = {p}, got {r}")
    e = check_int("elem_bytes", elem_bytes, minimum=1)
    if p == 1:
        return {"reduce_scatter": 0, "all_gather": 0, "total": 0}
    chunks = ring_chunks(n, p)
    size = [stop - start for start, stop in chunks]
    rs = (n - size[r]) * e
    ag = (n - size[(r + 1) % p]) * e
    return {"reduce_scatter": rs, "all_gather": ag, "total": rs + ag}
    ### END SOLUTION


def _check_vector(name: str, tensor: object) -> torch.Tensor:
    if not isinstance(tensor, torch.Tensor) or tensor.dim() != 1 or not tensor.is_floating_point():
        what = f"a {tensor.dim()}-D {tensor.dtype} tensor" if isinstance(tensor, torch.Tensor) else repr(type(tensor))
        raise ValueError(f"{name} must be a 1-D floating-point tensor, got {what}")
    return tensor


def _exchange(send: torch.Tensor, recv: torch.Tensor, right: int, left: int) -> None:
    """Send ``send`` to the right neighbour while receiving ``recv`` from the left one (empty chunks skipped)."""
    # TODO: post the send without blocking, receive, then wait for the send (never send-then-recv on every rank).
    ### BEGIN SOLUTION
    request = dist.isend(send.contiguous(), right) if send.numel() else None
    if recv.numel():
        dist.recv(recv, left)
    if request is not None:
        request.wait()
    ### END SOLUTION


def ring_reduce_scatter(tensor: torch.Tensor) -> torch.Tensor:
    """Chunk ``rank`` of the element-wise sum over the ranks (a NEW tensor), by the ring's reduce-scatter.

    Default process group; ``tensor`` 1-D floating, the same numel on every rank, left unmodified
    (ValueError naming ``tensor`` otherwise). Chunk bounds from ring_chunks, steps from ring_schedule,
    acc = received + local. P = 1: a copy of the whole tensor. Point-to-point calls only.
    """
    # TODO: work on a copy; at each reduce-scatter step send one chunk right, receive one from the left and add.
    ### BEGIN SOLUTION
    x = _check_vector("tensor", tensor)
    p, r = dist.get_world_size(), dist.get_rank()
    chunks = ring_chunks(x.numel(), p)
    acc = x.detach().clone()
    right, left = (r + 1) % p, (r - 1) % p
    for phase, _, send_c, recv_c in ring_schedule(p, r):
        if phase != "reduce_scatter":
            break
        (s0, s1), (r0, r1) = chunks[send_c], chunks[recv_c]
        got = torch.empty(r1 - r0, dtype=acc.dtype)
        _exchange(acc[s0:s1], got, right, left)
        acc[r0:r1] = got + acc[r0:r1]
    start, stop = chunks[r]
    return acc[start:stop].clone()
    ### END SOLUTION


def ring_all_gather(shard: torch.Tensor, numel: int) -> torch.Tensor:
    """The full numel-element tensor whose chunk r is rank r's ``shard``, by the ring's all-gather (a NEW tensor).

    ``shard`` is this rank's chunk: 1-D floating, of the length of ring_chunks(numel, P)[rank]
    (ValueError naming ``shard`` otherwise). Point-to-point calls only.
    """
    # TODO: place your own shard, then at each all-gather step pass one finished chunk to the right.
    ### BEGIN SOLUTION
    x = _check_vector("shard", shard)
    n = check_int("numel", numel)
    p, r = dist.get_world_size(), dist.get_rank()
    chunks = ring_chunks(n, p)
    start, stop = chunks[r]
    if x.numel() != stop - start:
        raise ValueError(f"shard must hold chunk {r} of {n} elements on {p} ranks ({stop - start} elements), "
                         f"got {x.numel()}")
    out = torch.empty(n, dtype=x.dtype)
    out[start:stop] = x
    right, left = (r + 1) % p, (r - 1) % p
    for phase, _, send_c, recv_c in ring_schedule(p, r):
        if phase != "all_gather":
            continue
        (s0, s1), (r0, r1) = chunks[send_c], chunks[recv_c]
        _exchange(out[s0:s1], out[r0:r1], right, left)
    return out
    ### END SOLUTION


def ring_all_reduce(tensor: torch.Tensor) -> torch.Tensor:
    """The element-wise sum over the ranks (a NEW tensor, same dtype): ring reduce-scatter, then ring all-gather.

    ``tensor`` is left unmodified. Each rank sends ring_bytes_sent(...)["total"] bytes, no message
    larger than one chunk. Point-to-point calls only.
    """
    # TODO: AllReduce = ReduceScatter + AllGather.
    ### BEGIN SOLUTION
    own = ring_reduce_scatter(tensor)
    return ring_all_gather(own, tensor.numel())
    ### END SOLUTION
