"""What batch grading's sandbox and ``make doctor`` must agree on about this host.

The uids jobs and probes run as, and the NVIDIA device files a GPU job is given. Standard library only
and Python 3.8 syntax: :mod:`grader.tools.doctor` imports it, and must run, and say what is wrong, where
the grader itself cannot (tests/grader/test_doctor.py parses both as Python 3.8).
"""

from __future__ import annotations

import re
from pathlib import Path

UID_BASE = 61000  # the job in slot k runs as uid UID_BASE + k
# Probes run as a uid no job uses: a finishing job ends with `kill -9 -1` as its own uid, which would
# kill a probe running concurrently (Ray tasks probe while other tasks grade) under that uid. The
# sandbox's probe asks whether an unprivileged uid can run the grading Python; the doctor's, whether
# an unprivileged user can create a user namespace. Both mean "a learner's uid, but no learner's".
PROBE_UID = UID_BASE - 1

_GPU_DEVICE = re.compile(r"nvidia(\d+|ctl|-uvm|-uvm-tools|-modeset|-caps)$")
_PREFIX = "nvidia"


def gpu_device_files(dev: Path = Path("/dev")) -> list[Path]:
    """The NVIDIA device files CUDA opens (``/dev/nvidia0``, ``nvidiactl``, ``nvidia-uvm``, ...)."""
    return sorted(p for p in dev.glob(_PREFIX + "*") if _GPU_DEVICE.match(p.name))


def gpu_indices(dev: Path = Path("/dev")) -> list[int]:
    """``N`` of every ``/dev/nvidia<N>``, one per GPU, ascending: the GPUs ``batch --gpus`` leases."""
    numbers = (p.name[len(_PREFIX) :] for p in gpu_device_files(dev))
    return sorted(int(n) for n in numbers if n.isdigit())
