"""What batch grading's sandbox and ``make doctor`` must agree on about this host.

The uids jobs and probes run as, and the NVIDIA device files a GPU job is given. Standard library only
and Python 3.8 syntax: :mod:`grader.tools.doctor` imports it, and must run, and say what is wrong, where
the grader itself cannot (tests/grader/test_doctor.py parses both as Python 3.8).
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import NamedTuple

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


# Per-student cgroups (grader/instructor/sandbox.py): cgroup v2 where its cpu, memory and pids controllers can
# be delegated to a subtree, else the v1 hierarchies of a hybrid layout (cgroup v2's cgroup.kill is used where
# a v2 hierarchy is mounted beside them). Each job gets CGROUP_PARENT/<job> in every hierarchy used.
CGROUP_ROOT = Path("/sys/fs/cgroup")
CGROUP_PARENT = "dripstone"
CGROUP_CONTROLLERS = ("cpu", "memory", "pids")


class Cgroups(NamedTuple):
    """Where a job's cgroup is made: one parent folder per hierarchy, and what that gives."""

    version: str  # "v2", "v1" or "" (none: per-process and per-uid limits only)
    parents: tuple[Path, ...]  # v2: (root/dripstone,); v1: one per controller, then root/unified/dripstone if any
    controllers: tuple[str, ...]  # of CGROUP_CONTROLLERS, those in force
    why: str  # what is in force, or why nothing is, as a sentence

    def describe(self) -> str:
        if not self.version:
            return f"no per-student cgroup ({self.why})"
        kill = "cgroup.kill" if self.has_kill() else "a kill loop over cgroup.procs"
        return "cgroup {} per student ({}; ended by {})".format(self.version, ", ".join(self.controllers), kill)

    def has_kill(self) -> bool:
        return any((p / "cgroup.kill").exists() for p in self.parents)


def _write(path: Path, text: str) -> None:
    with open(str(path), "w") as f:
        f.write(text)


def _controllers(folder: Path) -> list[str]:
    try:
        return (folder / "cgroup.controllers").read_text().split()
    except OSError:
        return []


def _v2_parent(root: Path) -> tuple[Path | None, str]:
    """root/dripstone with cpu, memory and pids enabled for its children, or why it cannot be."""
    have = _controllers(root)
    if not (root / "cgroup.controllers").exists():
        return None, f"no cgroup v2 mounted at {root}"
    lacking = [c for c in CGROUP_CONTROLLERS if c not in have]
    if lacking:
        return None, "cgroup v2 at {} lacks the {} controller(s)".format(root, ", ".join(lacking))
    parent = root / CGROUP_PARENT
    wanted = " ".join("+" + c for c in CGROUP_CONTROLLERS)
    try:
        _write(root / "cgroup.subtree_control", wanted)
        parent.mkdir(exist_ok=True)
        _write(parent / "cgroup.subtree_control", wanted)
    except OSError as exc:
        why = exc.strerror or exc
        return None, f"cannot delegate {wanted} under {root} ({why}): run as root, or delegate that subtree"
    return parent, ""


def _v1_parents(root: Path) -> tuple[list[Path], list[str], str]:
    parents, controllers, problems = [], [], []
    for name in CGROUP_CONTROLLERS:
        hierarchy = root / name
        if not (hierarchy / "cgroup.procs").exists():
            problems.append(f"no v1 {name} hierarchy")
            continue
        try:
            (hierarchy / CGROUP_PARENT).mkdir(exist_ok=True)
        except OSError as exc:
            problems.append(f"cannot create {hierarchy / CGROUP_PARENT} ({exc.strerror or exc})")
            continue
        parents.append(hierarchy / CGROUP_PARENT)
        controllers.append(name)
    unified = root / "unified"
    if controllers and (unified / "cgroup.controllers").exists():  # a hybrid layout: v2 beside, for cgroup.kill
        with contextlib.suppress(OSError):
            (unified / CGROUP_PARENT).mkdir(exist_ok=True)
        if (unified / CGROUP_PARENT / "cgroup.kill").exists():
            parents.append(unified / CGROUP_PARENT)
    return parents, controllers, "; ".join(problems)


def cgroup_setup(root: Path = CGROUP_ROOT) -> Cgroups:
    """Prepare the parent cgroups batch grading puts each student's group under, and say what is in force."""
    parent, why_v2 = _v2_parent(root)
    if parent is not None:
        return Cgroups("v2", (parent,), CGROUP_CONTROLLERS, "")
    parents, controllers, why_v1 = _v1_parents(root)
    if controllers:
        return Cgroups("v1", tuple(parents), tuple(controllers), why_v1)
    why = "; ".join(w for w in (why_v2, why_v1) if w) or f"no cgroup file system at {root}"
    return Cgroups("", (), (), why)
