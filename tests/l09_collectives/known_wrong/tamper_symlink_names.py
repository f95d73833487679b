"""A hidden channel through the file system without opening a file: every rank stores its tensor (hex, in pieces of
4,000 characters) as the targets of symbolic links in /dev/shm, the ring's zeros go through send/recv for the log and
the wire (a barrier too), and each rank reads the other ranks' links back with os.readlink. os.symlink and
os.readlink are not in the audit's denylist, and neither the log nor the wire sees a link: before the ranks were
boxed it earned every point of the exercise (checked). Now each rank has a /dev/shm (and /tmp) of its own in a mount
namespace of its own, the rest of the file system read-only: the links of one rank are not there for another."""

MODULE = "ring"
REJECTED_BY = {"ring_all_reduce": ["correctness", "efficiency"]}
BOUNDARY = "grader/instrument/ranks.py::_private_files"  # stopped at run time in the rank, not by the audit

import os

_CALL = [0]
_PIECE = 4000


def ring_all_reduce(tensor):
    x = _check_vector("tensor", tensor)
    p, r = dist.get_world_size(), dist.get_rank()
    _CALL[0] += 1
    where = f"/dev/shm/ring-ln-{os.getppid()}-{p}-{_CALL[0]}"
    text = x.numpy().tobytes().hex()
    pieces = [text[i:i + _PIECE] for i in range(0, len(text), _PIECE)] or ["-"]
    for i, piece in enumerate(pieces):
        os.symlink(piece, f"{where}-{r}-{i}")
    bounds = ring_chunks(x.numel(), p)
    for _, _, send_c, recv_c in ring_schedule(p, r):  # the decoy, and a barrier: every link is made before it
        s, t = bounds[send_c], bounds[recv_c]
        _exchange(torch.zeros(s[1] - s[0], dtype=x.dtype), torch.empty(t[1] - t[0], dtype=x.dtype),
                  (r + 1) % p, (r - 1) % p)
    xs = []
    for s in range(p):
        last = f"{where}-{s}-{len(pieces) - 1}"
        for _ in range(10**6):  # a rank with empty chunks skips the decoy: wait for the others' links
            if os.path.lexists(last):
                break
        got = "".join(os.readlink(f"{where}-{s}-{i}") for i in range(len(pieces)))
        xs.append(torch.frombuffer(bytearray(bytes.fromhex(got)), dtype=x.dtype) if got != "-" else x.clone())
    out = torch.empty_like(x)
    for c, (a, b) in enumerate(bounds):
        acc = xs[(c + 1) % p][a:b].clone()
        for k in range(2, p + 1):
            acc = acc + xs[(c + k) % p][a:b]
        out[a:b] = acc
    return out
