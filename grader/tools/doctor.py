"""``make doctor``: what this machine can grade, and why; every problem comes with the command that fixes it.

Two halves. :func:`probe` takes a :class:`Machine` snapshot (Python, the pinned distributions, torch, the
GPU and its driver, Triton's modes, the isolation tools of batch grading); the checks are pure functions of
that snapshot, so the GPU and the no-GPU paths are both tested on any machine. ``make grade`` first runs
:func:`blocking_checks` (wrong Python, a pinned package missing) and stops with their message instead of a
traceback.

Pins are read from requirements.txt and requirements-gpu.txt, never re-typed here. This module imports
only the standard library at module level and avoids syntax newer than Python 3.8: it must run, and say
what is wrong, in an environment too broken to import torch or rich, or on a Python too old for the grader.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path

from grader.tools.host import PROBE_UID, cgroup_setup, gpu_indices

REPO_ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = REPO_ROOT / "requirements.txt"
GPU_REQUIREMENTS = REPO_ROOT / "requirements-gpu.txt"
PYPROJECT = REPO_ROOT / "pyproject.toml"

# The install stamp keeps `make env` from running pip again: drop it, and pip installs exactly the pins.
FIX_ENV = "rm -f .venv/.installed-* && make env"
FIX_GPU_EXTRAS = "rm -f .venv/.installed-* && make env GPU=1"
FIX_ENV_CLEAN = "make clean-env && make env"  # a broken install: pip would keep the same broken files
FIX_ENV_GPU = "make clean-env && make env GPU=1"  # a CPU torch satisfies the pin: only a new venv swaps it
FIX_GPU_PERF = (
    'on a machine with an NVIDIA GPU: docker run --gpus all --user "$(id -u):$(id -g)" '
    '-v "$PWD/exercises:/course/exercises" dripstone'
)
FIX_BWRAP = "sudo apt-get install --no-install-recommends bubblewrap"
FIX_UTIL_LINUX = "sudo apt-get install util-linux"
FIX_BWRAP_VERSION = "install bubblewrap 0.8 or newer: the sandbox caps each submission's /tmp with --size"
FIX_CGROUPS = (
    "grade batches as root where cgroup v2 has the cpu, memory and pids controllers (a systemd service: "
    "Delegate=yes; a container: --cgroupns=private and a writable /sys/fs/cgroup), or cgroup v1 hierarchies"
)
FIX_ROOT = "grade batches as root (sudo), or with docker/compose.yaml, whose batch service runs as root"
FIX_BWRAP_IN_CONTAINER = (
    "start the container with --cap-add SYS_ADMIN --cap-add NET_ADMIN --security-opt seccomp=unconfined "
    "--security-opt apparmor=unconfined (this widens the container's own boundary: see docker/README.md)"
)
FIX_BWRAP_NET_ADMIN = (
    "the sandbox's private loopback needs CAP_NET_ADMIN: start the container with --cap-add NET_ADMIN "
    "(beside SYS_ADMIN; docker/compose.yaml's cap_add)"
)
FIX_PRERELEASE = (
    "install a final release of Python {need}+ (Ubuntu 22.04's python3.11 is 3.11.0rc1: use docker/Dockerfile's "
    "Ubuntu 24.04 python3.12, or another final build), then: make clean-env && make env PYTHON=/path/to/it"
)
# What bwrap answers BWRAP_PROBE with, as the bubblewrap versions of Debian 12 (0.8.0) and Ubuntu 22.04 (0.6.1)
# and 24.04 (0.9.0) word it (tests/grader/test_doctor.py holds the recorded messages).
BWRAP_NO_SIZE_MESSAGES = (
    "Unknown option --size",  # a bwrap older than --size
    "--perms must be followed by an option that creates a file",  # 0.6.1: --perms then the unknown --size
)
BWRAP_LOOPBACK_MESSAGE = "loopback: Failed RTM_NEWADDR"  # --unshare-net without CAP_NET_ADMIN
ISOLATION_LEVELS = {  # grader/instructor/sandbox.py's layers, strongest first
    "bwrap": "bwrap: each submission gets its own network, pid and ipc namespaces, uid and resource limits; "
             "the judge counts each gloo run's bytes on the student's own loopback",
    "setpriv": "setpriv: each submission gets its own uid and resource limits; no private network or pids "
               "(gloo runs' bytes are not counted outside the ranks)",
    "rlimits": "rlimits only: submissions run as the grader's uid; a fork bomb is not contained",
}
# Oldest Linux driver each CUDA major version runs on (CUDA toolkit release notes, minimum driver).
MIN_DRIVER = {12: 525, 13: 580}
TOOLS = ("bwrap", "setpriv", "prlimit", "unshare")
USERNS_SYSCTLS = (
    "user/max_user_namespaces",
    "kernel/unprivileged_userns_clone",
    "kernel/apparmor_restrict_unprivileged_userns",
)
HEADER = "Dripstone doctor: what this machine can grade"
BLOCKING_HELP = "only what stops `make grade` (wrong Python, a pinned package missing); silent when all is well"
PIN_RE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*==\s*([^\s;#]+)")


class Severity(str, Enum):  # noqa: UP042 - StrEnum is 3.11+; this module runs on older Pythons
    """How a machine check stands (not a graded test's outcome: that is grader.core.results.Status)."""

    OK = "ok"
    WARN = "warn"  # grading runs, with a limit worth knowing (a tier pending, a drifted pin)
    FAIL = "fail"  # this environment cannot grade at all


@dataclass(frozen=True)
class Check:
    """One finding: what was checked, how it stands, what was seen, the command that fixes it."""

    name: str
    status: Severity
    detail: str
    fix: str = ""
    section: str = ""  # the heading it is printed under


@dataclass(frozen=True)
class Pin:
    """``name==version`` from a requirements file."""

    name: str
    version: str
    source: str

    @property
    def gpu_only(self) -> bool:
        return self.source == GPU_REQUIREMENTS.name


@dataclass(frozen=True)
class Gpu:
    name: str
    capability: tuple[int, int]


@dataclass(frozen=True)
class Machine:
    """What :func:`probe` saw; :func:`probe_basics` fills only the first three fields, all the blocking checks read."""

    python: tuple[int, int, int]
    executable: str
    installed: Mapping[str, str]  # pinned distribution -> installed version (absent: not installed)
    torch_version: str | None = None
    torch_cuda: str | None = None  # torch.version.cuda; None for a CPU build
    torch_error: str = ""  # why `import torch` failed
    gpu: Gpu | None = None  # the device torch uses
    smi_gpus: tuple[str, ...] = ()  # what the driver (nvidia-smi) sees, usable by torch or not
    driver: str | None = None
    triton_hooks_error: str = ""  # why the efficiency tier cannot wrap the interpreter
    c_compiler: bool = False  # Triton builds its GPU launcher with a C compiler...
    cuda_cpu: bool = False  # g++ on x86-64 Linux: .cu kernels run on the CPU executor without a GPU
    python_headers: bool = False  # ...and Python.h
    tools: frozenset[str] = frozenset()
    euid: int = 0
    bwrap_error: str | None = None  # None: a sandbox started; else why it did not
    bwrap_no_size: bool = False  # a sandbox starts, but only without --size (bubblewrap < 0.8)
    userns_error: str | None = None  # None: an unprivileged user created a user namespace
    sysctls: Mapping[str, str] = field(default_factory=dict)
    in_container: bool = False
    gpu_devices: tuple[str, ...] = ()  # /dev/nvidia<N>: what `batch --gpus` leases, one job each
    cgroup_budget: str | None = None  # grader.tools.host.Cgroups.describe(); None: not probed
    cgroup_gap: str = ""  # what is missing from the per-student cgroups ("" where they are complete)
    python_release: str = "final"  # sys.version_info.releaselevel and serial: "candidate1" for 3.11.0rc1


@dataclass(frozen=True)
class DoctorReport:
    checks: tuple[Check, ...]

    @property
    def failed(self) -> bool:
        return any(c.status is Severity.FAIL for c in self.checks)

    def get(self, name: str) -> Check:
        return next(c for c in self.checks if c.name == name)


# ---- pins -------------------------------------------------------------------------------------------


def normalize(name: str) -> str:
    """PEP 503 name: ``Cuda_Python`` -> ``cuda-python``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pins(path: Path) -> list[Pin]:
    """Every ``name==version`` line of a requirements file (comments and blank lines skipped)."""
    if not path.is_file():
        return []
    pins = []
    for line in path.read_text().splitlines():
        m = PIN_RE.match(line.strip())
        if m:
            pins.append(Pin(normalize(m.group(1)), m.group(3), path.name))
    return pins


def all_pins() -> list[Pin]:
    """requirements.txt, then the GPU extras; a name pinned in both counts once (test_docker keeps them equal)."""
    pins = read_pins(REQUIREMENTS)
    seen = {p.name for p in pins}
    return pins + [p for p in read_pins(GPU_REQUIREMENTS) if p.name not in seen]


def required_python() -> tuple[int, int]:
    """``requires-python = ">=3.11"`` of pyproject.toml, as (3, 11)."""
    m = re.search(r'requires-python\s*=\s*">=\s*(\d+)\.(\d+)', PYPROJECT.read_text())
    return (int(m.group(1)), int(m.group(2))) if m else (3, 11)


# ---- checks: pure functions of a Machine -----------------------------------------------------------


def check_python(m: Machine, required: tuple[int, int]) -> Check:
    shown = ".".join(map(str, m.python))
    need = "{}.{}".format(*required)
    if m.python[:2] >= required and m.python_release != "final":
        shown += {"alpha": "a", "beta": "b", "candidate": "rc"}.get(m.python_release.rstrip("0123456789"), "?")
        shown += m.python_release.lstrip("abcdefghijklmnopqrstuvwxyz")
        return Check(
            "python",
            Severity.FAIL,
            f"{shown} ({m.executable}) is a pre-release: the pinned wheels need a final Python (torch 2.13 calls "
            "APIs that 3.11's release candidates lack, and its failures would be blamed on your code)",
            FIX_PRERELEASE.format(need=need),
        )
    if m.python[:2] >= required:
        return Check("python", Severity.OK, f"{shown} ({m.executable}), needs >= {need}")
    return Check(
        "python",
        Severity.FAIL,
        f"{shown} ({m.executable}) is too old: the grader needs Python {need} or newer",
        f"make clean-env && make env PYTHON=python{need}  (any Python {need}+ on your PATH)",
    )


def _public(version: str) -> str:
    return version.split("+", 1)[0]  # 2.13.0+cpu is the CPU build of 2.13.0


def check_pin(m: Machine, pin: Pin, *, has_gpu: bool) -> Check:
    have = m.installed.get(pin.name)
    if have is not None and _public(have) == pin.version:
        return Check(pin.name, Severity.OK, f"{have} (pinned {pin.version})")
    if have is not None:
        return Check(
            pin.name,
            Severity.WARN,
            f"{have} installed, {pin.source} pins {pin.version}: grades can differ from the reference toolchain",
            FIX_GPU_EXTRAS if pin.gpu_only else FIX_ENV,
        )
    if not pin.gpu_only:
        return Check(
            pin.name,
            Severity.FAIL,
            f"not installed ({pin.source} pins {pin.version}): the grader cannot run without it",
            FIX_ENV,
        )
    if has_gpu:
        return Check(
            pin.name,
            Severity.WARN,
            f"not installed ({pin.source} pins {pin.version}): GPU exercises that need it cannot run",
            FIX_GPU_EXTRAS,
        )
    return Check(pin.name, Severity.OK, f"not installed: only needed with a GPU ({pin.source})")


def blocking_checks(m: Machine, pins: Sequence[Pin], required: tuple[int, int]) -> list[Check]:
    """What ``make grade`` checks first: fast (no torch import) and enough to say why grading cannot run."""
    return [check_python(m, required)] + [check_pin(m, p, has_gpu=False) for p in pins if not p.gpu_only]


def check_torch(m: Machine) -> Check:
    if m.torch_error:
        return Check("torch build", Severity.FAIL, f"`import torch` failed: {m.torch_error}", FIX_ENV_CLEAN)
    if m.torch_version is None:
        return Check("torch build", Severity.FAIL, "torch is not installed", FIX_ENV)
    build = f"CUDA {m.torch_cuda} build" if m.torch_cuda else "CPU build"
    return Check("torch build", Severity.OK, f"{m.torch_version}, {build}")


def _driver_floor(m: Machine) -> int | None:
    """The oldest driver torch's CUDA build runs on, when the installed driver is older; else None."""
    if not (m.torch_cuda and m.driver):
        return None
    floor = MIN_DRIVER.get(int(m.torch_cuda.split(".")[0]))
    return floor if floor and int(m.driver.split(".")[0]) < floor else None


def check_gpu(m: Machine) -> Check:
    if m.gpu is not None:
        detail = (
            f"{m.gpu.name} (sm_{m.gpu.capability[0]}{m.gpu.capability[1]}), driver {m.driver or 'unknown'}, "
            f"CUDA runtime {m.torch_cuda}"
        )
        return Check("gpu", Severity.OK, detail)
    if not m.smi_gpus:
        return Check("gpu", Severity.OK, "none: no NVIDIA driver or device found (nvidia-smi)")
    seen = f"nvidia-smi sees {', '.join(m.smi_gpus)} (driver {m.driver or 'unknown'})"
    if m.torch_version and not m.torch_cuda:
        return Check("gpu", Severity.WARN, f"{seen}, but torch is a CPU build", FIX_ENV_GPU)
    floor = _driver_floor(m)
    if floor:
        return Check(
            "gpu",
            Severity.WARN,
            f"{seen}: too old for torch's CUDA {m.torch_cuda} build, which needs driver {floor} or newer",
            f"upgrade the NVIDIA driver to {floor} or newer",
        )
    return Check(
        "gpu",
        Severity.WARN,
        f"{seen}, but torch.cuda.is_available() is False",
        "check CUDA_VISIBLE_DEVICES; in Docker, start the container with --gpus all",
    )


def check_triton(m: Machine) -> Check:
    if "triton" not in m.installed:
        return Check("triton mode", Severity.FAIL, "triton is not installed: no kernel can run", FIX_ENV)
    interpreted = "correctness and efficiency run Triton interpreted on CPU (TRITON_INTERPRET=1)"
    if m.gpu is None:
        return Check("triton mode", Severity.OK, f"interpreted: {interpreted}; nothing is compiled without a GPU")
    if not (m.c_compiler and m.python_headers):
        missing = " and ".join(
            x for x, ok in (("a C compiler", m.c_compiler), ("Python.h", m.python_headers)) if not ok
        )
        dev = "python{}.{}-dev".format(*m.python[:2])
        return Check(
            "triton mode",
            Severity.WARN,
            f"{interpreted}; compiled for {m.gpu.name} in gpu_perf, but "
            f"Triton builds its launcher with {missing}, missing here",
            f"sudo apt-get install gcc {dev}",
        )
    return Check("triton mode", Severity.OK, f"{interpreted}; compiled for {m.gpu.name} in gpu_perf")


def _cuda_cpu_available() -> bool:
    from grader.instrument import cuda_cpu

    return cuda_cpu.available()


def check_tiers(m: Machine) -> list[Check]:
    """One check per tier: graded here, or why not (gpu_perf: pending GPU, neither 0 nor a pass)."""
    cannot = m.torch_error or m.torch_version is None or "triton" not in m.installed
    correctness = (
        Check("tier correctness", Severity.FAIL, "not graded: torch or triton is missing", FIX_ENV)
        if cannot
        else Check("tier correctness", Severity.OK, "graded" if m.gpu is not None else
                   "graded; CUDA C++ (.cu) kernels run on the CPU executor (g++; no timing, occupancy nor "
                   "bank conflicts)" if m.cuda_cpu else
                   "graded, except the values of CUDA C++ (.cu) kernels: compiled and checked by NVRTC here, "
                   "launched only on a CUDA GPU (those tests are pending GPU; g++ would run them on the CPU)")
    )
    if m.triton_hooks_error:
        efficiency = Check("tier efficiency", Severity.WARN, f"not graded: {m.triton_hooks_error}", FIX_ENV)
    else:
        efficiency = Check("tier efficiency", Severity.OK, "graded: traffic counted by the instrumented interpreter")
    if m.gpu is not None:
        gpu_perf = Check("tier gpu_perf", Severity.OK, f"graded on {m.gpu.name}: timed against the vendor op")
    else:
        gpu_perf = Check(
            "tier gpu_perf",
            Severity.WARN,
            "pending GPU: these tests are neither 0 nor a pass until they run on a CUDA GPU",
            FIX_GPU_PERF,
        )
    return [correctness, efficiency, gpu_perf]


def userns_fix(m: Machine) -> str:
    """The command that lets an unprivileged user create user namespaces here."""
    if m.sysctls.get("user/max_user_namespaces") == "0":
        return "sudo sysctl -w user.max_user_namespaces=15000"
    if m.sysctls.get("kernel/unprivileged_userns_clone") == "0":
        return "sudo sysctl -w kernel.unprivileged_userns_clone=1"
    if m.sysctls.get("kernel/apparmor_restrict_unprivileged_userns") == "1":
        return "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
    if m.in_container:
        return "start the container with --security-opt seccomp=unconfined --security-opt apparmor=unconfined"
    return "enable unprivileged user namespaces in the kernel (sysctl user.max_user_namespaces)"


def bwrap_fix(m: Machine) -> str:
    """What lets bwrap start where it is installed but fails."""
    if bwrap_lacks_size(m.bwrap_error):
        return FIX_BWRAP_VERSION
    if m.bwrap_error and BWRAP_LOOPBACK_MESSAGE in m.bwrap_error:
        return FIX_BWRAP_NET_ADMIN
    if m.euid != 0:
        return userns_fix(m)
    if m.in_container:
        return FIX_BWRAP_IN_CONTAINER
    return "check that the kernel allows new namespaces (sysctl user.max_user_namespaces, dmesg)"


def bwrap_lacks_size(error: str | None) -> bool:
    """Whether bwrap's answer to BWRAP_PROBE means only that it predates ``--size`` (bubblewrap < 0.8)."""
    return bool(error) and any(msg in error for msg in BWRAP_NO_SIZE_MESSAGES)


def isolation_level(m: Machine) -> str:
    """The strongest layer batch grading reaches here, in the sandbox's order: bwrap, setpriv, rlimits."""
    if m.euid != 0 or "setpriv" not in m.tools:
        return "rlimits"
    return "bwrap" if "bwrap" in m.tools and (m.bwrap_error is None or m.bwrap_no_size) else "setpriv"


def check_isolation(m: Machine) -> list[Check]:
    """Batch grading's layers: each missing one costs isolation between submissions, never the grading."""
    checks = [_check_user(m), _check_setpriv(m), _check_prlimit(m), _check_bwrap(m), _check_userns(m)]
    if m.cgroup_budget is not None:
        checks.append(_check_cgroups(m))
    return [_with_budget(c, m) if c.name == "isolation" else c for c in _isolation_checks(m, checks)]


def _with_budget(check: Check, m: Machine) -> Check:
    """The isolation line also says which per-student budget is in force (make doctor's one-line answer)."""
    if m.cgroup_budget is None:
        return check
    return replace(check, detail=f"{check.detail}; per-student budget: {m.cgroup_budget}")


def _check_cgroups(m: Machine) -> Check:
    if not m.cgroup_gap:
        return Check("cgroups", Severity.OK, f"{m.cgroup_budget}: a student's processes together get one budget")
    gap = "" if m.cgroup_gap in m.cgroup_budget else f": {m.cgroup_gap}"
    detail = f"{m.cgroup_budget}{gap}; one student's processes can take CPU and memory from the others"
    return Check("cgroups", Severity.WARN, detail, FIX_CGROUPS)


def _isolation_checks(m: Machine, checks: list[Check]) -> list[Check]:
    level = isolation_level(m)
    if level == "bwrap" and "prlimit" in m.tools and not m.bwrap_no_size:
        return checks + [Check("isolation", Severity.OK, f"available: {ISOLATION_LEVELS[level]}")]
    if level == "bwrap" and "prlimit" in m.tools:
        detail = f"available: {ISOLATION_LEVELS[level]}; /tmp capped by the judge, not the kernel"
        return checks + [Check("isolation", Severity.WARN, detail, FIX_BWRAP_VERSION)]
    state = "not available" if level == "rlimits" and "prlimit" not in m.tools else "partial"
    fix = next((c.fix for c in checks if c.status is not Severity.OK), "")
    return checks + [Check("isolation", Severity.WARN, f"{state}: {ISOLATION_LEVELS[level]}", fix)]


def _who(m: Machine) -> str:
    return "root" if m.euid == 0 else f"uid {m.euid}"


def _check_user(m: Machine) -> Check:
    if m.euid == 0:
        return Check("root", Severity.OK, "yes: each submission can run under a uid of its own")
    return Check("root", Severity.WARN, f"no (uid {m.euid}): submissions would share this uid", FIX_ROOT)


def _check_setpriv(m: Machine) -> Check:
    if "setpriv" not in m.tools:
        return Check("setpriv", Severity.WARN, "not installed: submissions cannot get a uid of their own",
                     FIX_UTIL_LINUX)
    return Check("setpriv", Severity.OK, "installed: drops root to a uid per submission")


def _check_prlimit(m: Machine) -> Check:
    if "prlimit" not in m.tools:
        return Check("prlimit", Severity.WARN, "not installed: no per-submission resource limits", FIX_UTIL_LINUX)
    return Check("prlimit", Severity.OK, "installed: limits CPU time, memory, file size and processes")


def _check_bwrap(m: Machine) -> Check:
    if "bwrap" not in m.tools:
        return Check("bwrap", Severity.WARN, "not installed: submissions cannot get their own namespaces", FIX_BWRAP)
    if m.bwrap_no_size:
        detail = (f"starts a sandbox as {_who(m)}, but without --size ({m.bwrap_error}): each submission's /tmp is "
                  "capped by the judge watching it, not by the kernel")
        return Check("bwrap", Severity.WARN, detail, FIX_BWRAP_VERSION)
    if m.bwrap_error is not None:
        detail = f"installed, but no sandbox starts as {_who(m)}: {m.bwrap_error}"
        return Check("bwrap", Severity.WARN, detail, bwrap_fix(m))
    return Check("bwrap", Severity.OK, f"starts a sandbox as {_who(m)} (private network, pids and ipc)")


def _check_userns(m: Machine) -> Check:
    if m.userns_error is None:
        return Check("user namespaces", Severity.OK, "available to unprivileged users")
    detail = f"unavailable to unprivileged users: {m.userns_error}"
    if m.euid == 0 and "bwrap" in m.tools and m.bwrap_error is None:
        return Check("user namespaces", Severity.OK, f"{detail}; not needed: bwrap runs as root")
    return Check("user namespaces", Severity.WARN, detail, userns_fix(m))


def check_batch_gpus(m: Machine) -> Check:
    """``batch --gpus``: how many jobs can time kernels at once (one per GPU), or why it is refused."""
    if not m.gpu_devices:
        return Check("batch --gpus", Severity.OK, "no /dev/nvidia<N> here: `batch --gpus` is refused and the GPU "
                     "tiers of a batch are pending GPU; run it on a GPU machine")
    return Check("batch --gpus", Severity.OK, f"{len(m.gpu_devices)} GPU(s) ({', '.join(m.gpu_devices)}): one job "
                 "at a time on each, its device files bound into the sandbox")


def doctor_checks(m: Machine, pins: Sequence[Pin], required: tuple[int, int]) -> list[Check]:
    """Everything ``make doctor`` reports, in the order a reader fixes things."""
    has_gpu = m.gpu is not None or bool(m.smi_gpus)
    toolchain = [check_python(m, required)] + [check_pin(m, p, has_gpu=has_gpu) for p in pins] + [check_torch(m)]
    return (
        _under("toolchain (requirements*.txt)", toolchain)
        + _under("device", [check_gpu(m), check_triton(m)])
        + _under("tiers", check_tiers(m))
        + _under("batch grading isolation (instructors)", [*check_isolation(m), check_batch_gpus(m)])
    )


def _under(section: str, checks: list[Check]) -> list[Check]:
    return [replace(c, section=section) for c in checks]


# ---- probes: what this machine has ------------------------------------------------------------------


def probe_installed(pins: Iterable[Pin]) -> dict[str, str]:
    found = {}
    for pin in pins:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            found[pin.name] = importlib.metadata.version(pin.name)
    return found


def probe_basics(pins: Sequence[Pin]) -> Machine:
    """Python and the installed pins: what :func:`blocking_checks` needs (milliseconds, no torch import)."""
    v = sys.version_info
    return Machine(
        python=tuple(v[:3]),
        executable=_shown(Path(sys.executable)),
        installed=probe_installed(pins),
        python_release="final" if v.releaselevel == "final" else f"{v.releaselevel}{v.serial}",
    )


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def _run(cmd: Sequence[str], timeout: float = 20) -> tuple[int, str]:
    """Exit status and output of a command; 127 when it cannot start."""
    try:
        proc = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as exc:
        return 127, str(exc)
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def probe_torch() -> dict[str, object]:
    """torch's version, CUDA build and the device it uses."""
    try:
        import torch
    except ModuleNotFoundError as exc:
        return {} if exc.name == "torch" else {"torch_error": f"ModuleNotFoundError: {exc}"}
    except Exception as exc:  # any import failure is a finding, reported with its message
        return {"torch_error": f"{type(exc).__name__}: {exc}"}
    facts: dict[str, object] = {"torch_version": torch.__version__, "torch_cuda": torch.version.cuda}
    if torch.cuda.is_available():
        facts["gpu"] = Gpu(torch.cuda.get_device_name(0), tuple(torch.cuda.get_device_capability(0)))
    return facts


def probe_nvidia_smi() -> dict[str, object]:
    if shutil.which("nvidia-smi") is None:
        return {}
    code, out = _run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    rows = [[x.strip() for x in line.split(",")] for line in out.splitlines() if "," in line] if code == 0 else []
    return {"smi_gpus": tuple(r[0] for r in rows), "driver": rows[0][1]} if rows else {}


def probe_triton_hooks() -> str:
    """Empty when the efficiency tier can wrap this triton's interpreter, else why not."""
    try:
        from grader.instrument import traffic

        traffic.install()
    except Exception as exc:  # reported as the reason the tier cannot run
        return f"{type(exc).__name__}: {exc}"
    return ""


# The sandbox's own namespaces and size-capped /tmp (grader/instructor/sandbox.py); --size needs bubblewrap 0.8+.
BWRAP_PROBE = [
    "bwrap",
    "--die-with-parent",
    "--unshare-net",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--ro-bind",
    "/",
    "/",
    "--perms",
    "1777",
    "--size",
    str(1 << 20),
    "--tmpfs",
    "/tmp",
    "true",
]


def read_bwrap_probe(run) -> dict[str, object]:
    """bwrap_error and bwrap_no_size from BWRAP_PROBE, run by ``run(cmd, timeout=...) -> (status, output)``.

    A bwrap that predates --size (Ubuntu 22.04's 0.6.1 says so in words of its own) is asked again without it, as
    grader/instructor/sandbox.py then starts it: where that also fails, the second answer is the reason, not --size.
    """
    error = _first_error(*run(BWRAP_PROBE, timeout=10))
    if not bwrap_lacks_size(error):
        return {"bwrap_error": error}
    i = BWRAP_PROBE.index("--size")
    without = _first_error(*run(BWRAP_PROBE[:i] + BWRAP_PROBE[i + 2 :], timeout=10))  # as the sandbox does
    if without is None:
        return {"bwrap_error": error, "bwrap_no_size": True}
    return {"bwrap_error": without}


def _unprivileged(cmd: list[str], tools: frozenset[str]) -> list[str]:
    if os.geteuid() == 0 and "setpriv" in tools:
        return ["setpriv", f"--reuid={PROBE_UID}", f"--regid={PROBE_UID}", "--clear-groups", *cmd]
    return cmd


def _first_error(code: int, out: str) -> str | None:
    return None if code == 0 else (out.splitlines() or [f"exit status {code}"])[-1]


def probe_isolation(tools: frozenset[str]) -> dict[str, object]:
    """Start a sandbox as batch grading would (bwrap as this user), and a user namespace as an unprivileged one."""
    facts: dict[str, object] = {"sysctls": _read_sysctls(), "in_container": _in_container(),
                                "gpu_devices": tuple(f"nvidia{n}" for n in gpu_indices())}
    cgroups = cgroup_setup()  # as batch grading does: prepares /sys/fs/cgroup/dripstone where it may
    facts["cgroup_budget"], facts["cgroup_gap"] = cgroups.describe(), cgroups.why
    if "bwrap" in tools:
        facts.update(read_bwrap_probe(_run))

    if "unshare" in tools:
        facts["userns_error"] = _first_error(*_run(_unprivileged(["unshare", "--user", "true"], tools), timeout=10))
    else:
        facts["userns_error"] = "cannot test: `unshare` (util-linux) is not installed"
    return facts


def _read_sysctls() -> dict[str, str]:
    found = {}
    for key in USERNS_SYSCTLS:
        path = Path("/proc/sys") / key
        if path.is_file():
            found[key] = path.read_text().strip()
    return found


def _in_container() -> bool:
    return Path("/.dockerenv").exists() or Path("/run/.containerenv").exists()


def probe(pins: Sequence[Pin]) -> Machine:
    """The whole snapshot: imports torch and triton, runs nvidia-smi and starts a sandbox (a few seconds)."""
    tools = frozenset(t for t in TOOLS if shutil.which(t))
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    facts: dict[str, object] = {**probe_torch(), **probe_nvidia_smi(), **probe_isolation(tools)}
    if "triton" in probe_installed([p for p in pins if p.name == "triton"]):
        facts["triton_hooks_error"] = probe_triton_hooks()
    basics = probe_basics(pins)
    return Machine(
        python=basics.python,
        executable=basics.executable,
        installed=basics.installed,
        c_compiler=any(shutil.which(c) for c in ("cc", "gcc", "clang")),
        cuda_cpu=_cuda_cpu_available(),
        python_headers=headers.is_file(),
        tools=tools,
        euid=os.geteuid(),
        **facts,
    )


# ---- entry points -----------------------------------------------------------------------------------


def doctor(*, blocking_only: bool = False) -> DoctorReport:
    """Probe this machine and check it: all of ``make doctor``, or the blocking subset ``make grade`` runs."""
    pins, required = all_pins(), required_python()
    if blocking_only:
        return DoctorReport(tuple(blocking_checks(probe_basics(pins), pins, required)))
    return DoctorReport(tuple(doctor_checks(probe(pins), pins, required)))


def render(report: DoctorReport, *, problems_only: bool = False) -> str:
    """One line per check, the fix under each problem, then what this machine grades."""
    shown = [c for c in report.checks if c.status is not Severity.OK] if problems_only else list(report.checks)
    width = max((len(c.name) for c in shown), default=0) + 2
    lines: list[str] = []
    for i, c in enumerate(shown):
        if c.section and (i == 0 or shown[i - 1].section != c.section):
            lines += ["", c.section] if lines else [c.section]
        lines.append(f"  {c.status.value:<5} {c.name:<{width}}{c.detail}")
        if c.fix and c.status is not Severity.OK:
            lines.append(f"  {'':<5} {'':<{width}}fix: {c.fix}")
    if not problems_only:
        lines += ["", summary(report)]
    return "\n".join(lines)


def summary(report: DoctorReport) -> str:
    tiers = [c for c in report.checks if c.name.startswith("tier ")]
    graded = [c.name[5:] for c in tiers if c.status is Severity.OK]
    pending = [c.name[5:] for c in tiers if c.detail.startswith("pending GPU")]
    counts = {s: sum(c.status is s for c in report.checks) for s in (Severity.WARN, Severity.FAIL)}
    iso = next((c.detail.split(":")[0] for c in report.checks if c.name == "isolation"), "not checked")
    return (
        f"grades here: {', '.join(graded) or 'nothing'}; pending GPU: {', '.join(pending) or 'none'}; "
        f"isolation for batch grading: {iso}; {counts[Severity.WARN]} warning(s), {counts[Severity.FAIL]} failure(s)"
    )


def emit(report: DoctorReport, *, blocking: bool = False) -> int:
    """Print a report (blocking: only its problems, on stderr); the exit status: 1 when grading cannot run."""
    if not blocking:
        print(f"{HEADER}\n\n{render(report)}")
    elif any(c.status is not Severity.OK for c in report.checks):
        print(f"{HEADER}: problems\n{render(report, problems_only=True)}", file=sys.stderr)
        if report.failed:
            print(
                "grading cannot run here: run the fix under each `fail` line, then `make grade` again", file=sys.stderr
            )
    return 1 if report.failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m grader.tools.doctor [--blocking]``: runs where ``python -m grader`` cannot (no rich, no torch)."""
    p = argparse.ArgumentParser(prog="python -m grader.tools.doctor", description=HEADER)
    p.add_argument("--blocking", action="store_true", help=BLOCKING_HELP)
    args = p.parse_args(argv)
    return emit(doctor(blocking_only=args.blocking), blocking=args.blocking)


if __name__ == "__main__":
    sys.exit(main())
