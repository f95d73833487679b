"""One student's grading, isolated: bubblewrap namespaces, an unprivileged uid, rlimits, a wall clock.

What runs is the ordinary grading pytest (``-p grader.grading.plugin``) on a fresh, read-only copy of the
grader and the unit's tests (:func:`stage_repo`: no solutions/, no kernels_ref/, no known-wrong or
known-right corpus) and a read-only copy of the submission. Layers, outermost first:

* ``bwrap``: private network (unreachable), pid, ipc and uts namespaces; only /usr, /etc, the
  sandbox venv and the two copies are visible, all read-only; /tmp is a size-capped tmpfs that
  is also HOME, the Triton cache and hypothesis' storage; ``--die-with-parent``, ``--new-session``;
* ``setpriv``: a uid of its own per job slot (RLIMIT_NPROC counts processes per uid, so one
  student's fork bomb cannot starve another's), no groups, no capabilities, no new privileges;
* ``prlimit``: CPU seconds, address space, file size, processes, no core files;
* a wall-clock timeout on the whole process group, then ``kill -9 -1`` as the job's uid;
* inside, :mod:`grader.grading.boundary` runs the learner's calls in a worker process and the results come
  back over an inherited file descriptor the learner never holds.

Where a layer is missing (no bwrap or no user namespaces, not root), :func:`probe` says which and
why; the batch report prints it and records it per student. Nothing is skipped silently.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from grader.grading import command as grading_command
from grader.grading.target import REPO_ROOT
from grader.tools.host import PROBE_UID, UID_BASE, gpu_device_files

SANDBOX_VENV_ENV = "DRIPSTONE_SANDBOX_VENV"
DEFAULT_SANDBOX_VENV = Path("/opt/dripstone/venv")
REPO_IN = Path("/grade/repo")
TARGET_IN = Path("/grade/target")


class Isolation(StrEnum):
    BWRAP = "bwrap"  # namespaces + own uid + rlimits
    SETPRIV = "setpriv"  # own uid + rlimits; network and other processes visible
    RLIMITS = "rlimits"  # limits only: same uid as the grader


@dataclass(frozen=True)
class Limits:
    """Per student.

    RLIMIT_NPROC counts threads too, and numba's CUDA simulator runs every thread of a block as a
    Python thread (up to 1024): processes leave room for that, and the thread stacks are cut to
    2 MiB so that 1024 of them (2 GiB) plus ``import torch`` and an interpreted kernel (~0.8 GiB)
    fit the address space.
    """

    wall_s: float = 900.0
    cpu_s: int = 900
    address_space: int = 6 * 2**30
    stack: int = 2 * 2**20
    file_size: int = 64 * 2**20
    processes: int = 1536
    tmp_bytes: int = 512 * 2**20
    call_timeout_s: float = 60.0
    # ``batch --gpus``: one GPU per job (CUDA_VISIBLE_DEVICES), its device files bound into the
    # sandbox, and the memory cap on data (RLIMIT_DATA) rather than address space: CUDA reserves
    # far more address space than it uses, and fails to start under RLIMIT_AS.
    gpu: bool = False


@dataclass(frozen=True)
class Runtime:
    """How students can be isolated on this machine, and what is missing."""

    python: Path
    isolation: Isolation
    missing: tuple[str, ...] = ()
    tmp_size: bool = True  # bwrap caps the /tmp tmpfs (--size, bubblewrap >= 0.8); else only the judge does

    def describe(self) -> str:
        gaps = f" (missing: {'; '.join(self.missing)})" if self.missing else ""
        return f"isolation={self.isolation}{gaps}"


@dataclass(frozen=True)
class Job:
    """One student's run: the staged trusted repo, the student's copy, a private scratch folder."""

    student: str
    repo: Path
    target: Path
    scratch: Path
    units: tuple[str, ...]
    report: Path
    log: Path
    slot: int = 0
    exercises: tuple[str, ...] = ()
    gpu: str | None = None  # the CUDA_VISIBLE_DEVICES of this job (batch --gpus); None: no GPU in the sandbox


@dataclass(frozen=True)
class Outcome:
    returncode: int
    timed_out: bool
    wall_s: float


class SandboxUnavailable(RuntimeError):
    """No Python the sandboxed uid can run: the batch cannot start."""


def sandbox_python() -> Path:
    venv = Path(os.environ.get(SANDBOX_VENV_ENV) or DEFAULT_SANDBOX_VENV)
    return venv / "bin" / "python"


def probe(python: Path | None = None) -> Runtime:
    """The strongest isolation that works here, checked by running it, and what is missing."""
    python = python or sandbox_python()
    if not python.exists():
        raise SandboxUnavailable(
            f"no sandbox Python at {python}: run `make sandbox-env` (a world-readable venv with the pinned "
            f"requirements; the grader's own may live under a home the sandbox uid cannot read), or set "
            f"{SANDBOX_VENV_ENV}"
        )
    missing = []
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        missing.append("not root or no setpriv: the learner runs as the grader's uid; fork bombs are not contained")
        return Runtime(python, Isolation.RLIMITS, tuple(missing))
    if _runs([*_setpriv(PROBE_UID), str(python), "-c", "import torch"]) is False:
        raise SandboxUnavailable(f"uid {PROBE_UID} cannot run {python} (is the venv world-readable?)")
    if not shutil.which("bwrap"):
        missing.append(
            "bwrap not installed (apt-get install --no-install-recommends bubblewrap): "
            "no private network or pid namespace"
        )
        return Runtime(python, Isolation.SETPRIV, tuple(missing))
    if _runs([*_bwrap_base(python, 64 * 2**20), "--", "true"]):
        return Runtime(python, Isolation.BWRAP)
    if _runs([*_bwrap_base(python, None), "--", "true"]):
        missing.append(
            "this bwrap has no --size (bubblewrap < 0.8): /tmp is not capped by the kernel; the judge stops "
            "a call that fills it past the cap and deletes its files (grader/grading/boundary.py)"
        )
        return Runtime(python, Isolation.BWRAP, tuple(missing), tmp_size=False)
    missing.append(
        "bwrap cannot create namespaces here (user namespaces disabled?): no private network or pid namespace"
    )
    return Runtime(python, Isolation.SETPRIV, tuple(missing))


def _runs(cmd: Sequence[str]) -> bool:
    return subprocess.run(cmd, capture_output=True, timeout=120).returncode == 0


def stage_repo(dest: Path, units: Sequence[str], root: Path = REPO_ROOT) -> Path:
    """A copy of what grading needs: grader/, the units' tests without known corpora, pyproject.toml."""
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "known_wrong", "known_right", ".hypothesis")
    shutil.copytree(root / "grader", dest / "grader", ignore=skip)
    for unit in units:
        shutil.copytree(root / "tests" / unit, dest / "tests" / unit, ignore=skip)
    shutil.copy2(root / "pyproject.toml", dest / "pyproject.toml")
    _read_only(dest)
    return dest


def _read_only(tree: Path) -> None:
    for path in [tree, *tree.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)


def stage_target(submission: Path, dest: Path) -> Path:
    """The student's own copy (links are not followed: a link out of the folder becomes nothing)."""
    shutil.copytree(submission, dest, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for link in [p for p in dest.rglob("*") if p.is_symlink()]:
        link.unlink()
    _read_only(dest)
    return dest


def pytest_command(python: Path, repo: Path, target: Path, job: Job, report: str) -> list[str]:
    """The grading run, as ``grader.api.grade`` runs it, with results to ``report`` (fd:N or a path)."""
    paths = grading_command.unit_paths(repo, job.units)
    return grading_command.pytest_command(python, repo, paths, target=target, report=report, exercises=job.exercises)


def _environment(repo: Path, target: Path, tmp: Path, limits: Limits, gpu: str | None = None) -> dict[str, str]:
    return {
        **({"CUDA_VISIBLE_DEVICES": gpu, "PYTORCH_NVML_BASED_CUDA_CHECK": "1"} if gpu is not None else {}),
        "PATH": f"{sandbox_python().parent}:/usr/bin:/bin",
        "HOME": str(tmp),
        "TMPDIR": str(tmp),
        "PYTHONPATH": str(repo),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "TRITON_INTERPRET": "1",
        "TRITON_CACHE_DIR": str(tmp / "triton"),
        "HYPOTHESIS_STORAGE_DIRECTORY": str(tmp / "hypothesis"),
        "OMP_NUM_THREADS": "1",
        "DRIPSTONE_ISOLATE": "1",
        "DRIPSTONE_TARGET": str(target),
        "DRIPSTONE_CALL_TIMEOUT": str(limits.call_timeout_s),
        "DRIPSTONE_TMP_BYTES": str(limits.tmp_bytes),  # the judge's own cap (grader/grading/boundary.py)
        "LANG": "C.UTF-8",
    }


def _setpriv(uid: int) -> list[str]:
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all", "--no-new-privs", "--"]


def _prlimit(limits: Limits) -> list[str]:
    memory = [f"--as={limits.address_space}"]
    if limits.gpu:  # CUDA reserves huge address ranges it never touches; RLIMIT_DATA counts what is used
        memory = ["--as=unlimited", f"--data={limits.address_space}"]
    return [
        "prlimit",
        f"--cpu={limits.cpu_s}",
        *memory,
        f"--stack={limits.stack}",
        f"--fsize={limits.file_size}",
        f"--nproc={limits.processes}",
        "--core=0",
        "--",
    ]


def _bwrap_base(python: Path, tmp_bytes: int | None) -> list[str]:
    """bwrap's view of the machine; ``tmp_bytes=None`` where this bwrap has no --size."""
    cmd = [
        "bwrap",
        "--die-with-parent",
        "--new-session",
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--ro-bind",
        "/usr",
        "/usr",
        "--ro-bind",
        "/etc",
        "/etc",
    ]
    for top in ("bin", "sbin", "lib", "lib64", "lib32"):
        path = Path("/") / top
        if path.is_symlink():
            cmd += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            cmd += ["--ro-bind", str(path), str(path)]
    venv = python.parent.parent
    cmd += [
        *_parents(venv),
        *_parents(REPO_IN),
        "--ro-bind",
        str(venv),
        str(venv),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "1777",
        *(("--size", str(tmp_bytes)) if tmp_bytes is not None else ()),
        "--tmpfs",
        "/tmp",
        "--chdir",
        "/tmp",
    ]
    return cmd


def _gpu_binds(devices: Sequence[Path]) -> list[str]:
    """Device files bound in (a GPU job); /sys read-only, where CUDA and NVML read the PCI topology."""
    binds = [a for d in devices for a in ("--dev-bind", str(d), str(d))]
    return [*binds, "--ro-bind", "/sys", "/sys"] if devices else binds


def _parents(path: Path) -> list[str]:
    """Mount-point folders bwrap would create with the caller's umask (0700 here): world-listable."""
    return [a for parent in reversed(path.parents[:-1]) for a in ("--perms", "0755", "--dir", str(parent))]


def command(job: Job, runtime: Runtime, limits: Limits, report_fd: int) -> tuple[list[str], dict[str, str], Path]:
    """(argv, environment, working folder) of one student's sandboxed grading run."""
    uid = UID_BASE + job.slot
    if runtime.isolation is Isolation.BWRAP:
        env = _environment(REPO_IN, TARGET_IN, Path("/tmp"), limits, job.gpu)
        inner = pytest_command(runtime.python, REPO_IN, TARGET_IN, job, f"fd:{report_fd}")
        cmd = [
            *_bwrap_base(runtime.python, limits.tmp_bytes if runtime.tmp_size else None),
            *(_gpu_binds(gpu_device_files()) if job.gpu is not None else ()),
            "--ro-bind",
            str(job.repo),
            str(REPO_IN),
            "--ro-bind",
            str(job.target),
            str(TARGET_IN),
            "--clearenv",
        ]
        cmd += [a for k, v in env.items() for a in ("--setenv", k, v)]
        return [*cmd, "--", *_setpriv(uid), *_prlimit(limits), *inner], {}, job.scratch
    env = _environment(job.repo, job.target, job.scratch, limits, job.gpu)
    inner = pytest_command(runtime.python, job.repo, job.target, job, f"fd:{report_fd}")
    drop = _setpriv(uid) if runtime.isolation is Isolation.SETPRIV else []
    return [*drop, *_prlimit(limits), *inner], env, job.scratch


def run(job: Job, runtime: Runtime, limits: Limits) -> Outcome:
    """Grade one student in the sandbox; results land in ``job.report``, the output in ``job.log``."""
    job.scratch.mkdir(parents=True, exist_ok=True)
    if runtime.isolation is not Isolation.RLIMITS:
        os.chown(job.scratch, UID_BASE + job.slot, UID_BASE + job.slot)
    job.scratch.chmod(0o700)
    report_fd = os.open(job.report, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o600)
    argv, env, cwd = command(job, runtime, limits, report_fd)
    start = time.monotonic()
    try:
        with job.log.open("wb") as log:
            proc = subprocess.Popen(
                argv,
                env=env or None,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                pass_fds=[report_fd],
                start_new_session=True,
            )
            timed_out = _wait(proc, limits.wall_s)
    finally:
        os.close(report_fd)
        _kill_leftovers(job.slot, runtime)
    return Outcome(proc.returncode, timed_out, round(time.monotonic() - start, 2))


def _wait(proc: subprocess.Popen[bytes], wall_s: float) -> bool:
    try:
        proc.wait(timeout=wall_s)
        return False
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return True


def _kill_leftovers(slot: int, runtime: Runtime) -> None:
    """Whatever the job's uid still runs (a daemonized child, a fork bomb) dies with it."""
    if runtime.isolation is not Isolation.RLIMITS:
        subprocess.run([*_setpriv(UID_BASE + slot), "kill", "-9", "-1"], capture_output=True)
