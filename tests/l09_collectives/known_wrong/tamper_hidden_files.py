"""A hidden channel through the file system the ranks share: every rank writes its tensor to a file, the ring's
zeros go through send/recv for the log (and for the wire: the judge's count of the loopback matches them), and each
rank reads the others' files and adds the chunks up in the ring's order. Neither the log nor the wire sees files:
only the audit (open, os, torch.save/load of a file, pathlib... refused in rank modules) stops it."""

MODULE = "ring"
REJECTED_BY = {"ring_all_reduce": ["correctness", "efficiency"]}

import os

_CALL = [0]


def ring_all_reduce(tensor):
    x = _check_vector("tensor", tensor)
    p, r = dist.get_world_size(), dist.get_rank()
    _CALL[0] += 1
    where = os.environ.get("TMPDIR", "/tmp")
    with open(f"{where}/ring-{os.getppid()}-{_CALL[0]}-{r}", "wb") as f:
        f.write(x.numpy().tobytes())
    bounds = ring_chunks(x.numel(), p)
    for _, _, send_c, recv_c in ring_schedule(p, r):  # the decoy, and a barrier: every file is written after it
        s, t = bounds[send_c], bounds[recv_c]
        _exchange(torch.zeros(s[1] - s[0], dtype=x.dtype), torch.empty(t[1] - t[0], dtype=x.dtype),
                  (r + 1) % p, (r - 1) % p)
    xs = []
    for s in range(p):
        with open(f"{where}/ring-{os.getppid()}-{_CALL[0]}-{s}", "rb") as f:
            data = f.read()
        xs.append(torch.frombuffer(bytearray(data), dtype=x.dtype) if data else x.clone())
    out = torch.empty_like(x)
    for c, (a, b) in enumerate(bounds):
        acc = xs[(c + 1) % p][a:b].clone()
        for k in range(2, p + 1):
            acc = acc + xs[(c + k) % p][a:b]
        out[a:b] = acc
    return out
