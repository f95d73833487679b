"""One student's grading, isolated: bubblewrap namespaces, an unprivileged uid, rlimits, a wall clock.

What runs is the ordinary grading pytest (``-p grader.judge.plugin``) on a fresh, read-only copy of the
grader and the unit's tests (:func:`stage_repo`: no solutions/, no kernels_ref/, no known-wrong or
known-right corpus) and a read-only copy of the submission. Layers, outermost first:

* ``bwrap``: private network (unreachable), pid, ipc and uts namespaces; only /usr, /etc, the
  sandbox venv and the two copies are visible, all read-only; /tmp is a size-capped tmpfs that
  is also HOME, the Triton cache and hypothesis' storage; ``--die-with-parent``, ``--new-session``;
* ``setpriv``: a uid of its own per job slot (RLIMIT_NPROC counts processes per uid, so one
  student's fork bomb cannot starve another's), no groups, no capabilities, no new privileges;
* ``prlimit``: CPU seconds, address space, file size, processes, no core files;
* a wall-clock timeout on the whole process group, then ``kill -9 -1`` as the job's uid;
* inside, :mod:`grader.instrument.worker` runs the learner's calls in a worker process and the results come
  back over an inherited file descriptor the learner never holds.

Where a layer is missing (no bwrap or no user namespaces, not root), :func:`probe` says which and
why; the batch report prints it and records it per student. Nothing is skipped silently.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

from grader.core import command as grading_command
from grader.core.target import REPO_ROOT
from grader.tools import host
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
    # The student's cgroup (where the machine allows one): CPUs (cpu.max), memory summed over all of the
    # student's processes (tmpfs /tmp included), and processes plus threads.
    cpus: float = 1.0
    memory: int = 8 * 2**30
    tasks: int = 2048
    # ``batch --gpus``: one GPU per job (CUDA_VISIBLE_DEVICES), its device files bound into the
    # sandbox, and the memory cap on data (RLIMIT_DATA) rather than address space: CUDA reserves
    # far more address space than it uses, and fails to start under RLIMIT_AS.
    gpu: bool = False
    # ``batch --max-examples N``: no property test draws more than N examples (0: as the tests say); quicker and
    # weaker, the same for every student (grader/judge/plugin.py, $DRIPSTONE_MAX_EXAMPLES)
    max_examples: int = 0


@dataclass(frozen=True)
class Runtime:
    """How students can be isolated on this machine, and what is missing."""

    python: Path
    isolation: Isolation
    missing: tuple[str, ...] = ()
    tmp_size: bool = True  # bwrap caps the /tmp tmpfs (--size, bubblewrap >= 0.8); else only the judge does
    cgroups: host.Cgroups = host.Cgroups("", (), (), "not probed")

    def describe(self) -> str:
        gaps = f" (missing: {'; '.join(self.missing)})" if self.missing else ""
        return f"isolation={self.isolation}+{self.budget()}{gaps}"

    def budget(self) -> str:
        """The per-student budget in force: ``cgroup-v2``, ``cgroup-v1`` or ``rlimits-only``."""
        return f"cgroup-{self.cgroups.version}" if self.cgroups.version else "rlimits-only"


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


def probe(python: Path | None = None, *, imports: bool = True) -> Runtime:
    """The strongest isolation that works here, checked by running it, and what is missing. ``imports=False``: the
    caller proves that the sandbox's uid can import the grader's requirements itself (batch grading collects its
    tests that way, :func:`as_probe_uid`), so the probe does not import torch as that uid first (~1.6 s)."""
    python = python or sandbox_python()
    if not python.exists():
        raise SandboxUnavailable(
            f"no sandbox Python at {python}: run `make sandbox-env` (a world-readable venv with the pinned "
            f"requirements; the grader's own may live under a home the sandbox uid cannot read), or set "
            f"{SANDBOX_VENV_ENV}"
        )
    runtime = _probe_layers(python, imports)
    cgroups = host.cgroup_setup()
    if not cgroups.version or cgroups.why:
        gap = (f"{cgroups.why}: one student's processes can still take CPU and memory from the others"
               if not cgroups.version else f"cgroup {cgroups.version} is partial: {cgroups.why}")
        return replace(runtime, cgroups=cgroups, missing=(*runtime.missing, gap))
    return replace(runtime, cgroups=cgroups)


def _probe_layers(python: Path, imports: bool = True) -> Runtime:
    missing = []
    if not _switches_uid():
        missing.append("not root or no setpriv: the learner runs as the grader's uid; fork bombs are not contained")
        return Runtime(python, Isolation.RLIMITS, tuple(missing))
    if _runs([*_setpriv(PROBE_UID), str(python), "-c", "import torch" if imports else "pass"]) is False:
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
            "a call that fills it past the cap and deletes its files (grader/instrument/worker.py)"
        )
        return Runtime(python, Isolation.BWRAP, tuple(missing), tmp_size=False)
    missing.append(
        "bwrap cannot create namespaces here (user namespaces disabled?): no private network or pid namespace"
    )
    return Runtime(python, Isolation.SETPRIV, tuple(missing))


def _switches_uid() -> bool:
    return os.geteuid() == 0 and shutil.which("setpriv") is not None


def as_probe_uid(cmd: Sequence[str]) -> list[str]:
    """``cmd`` run as the uid the probe checks with (no group, no capability), where the sandbox switches uid;
    as it is otherwise (the learner then runs as the grader's uid too)."""
    return [*_setpriv(PROBE_UID), *cmd] if _switches_uid() else list(cmd)


def _runs(cmd: Sequence[str]) -> bool:
    return subprocess.run(cmd, capture_output=True, timeout=120).returncode == 0


PREBUILT = "prebuilt"  # in a staged repo: what every student's judge would otherwise build again (read-only)


def stage_repo(dest: Path, units: Sequence[str], root: Path = REPO_ROOT, *, prebuilt: Path | None = None) -> Path:
    """A copy of what grading needs: grader/, the units' tests without known corpora, pyproject.toml, and
    :data:`PREBUILT`: copied from ``prebuilt`` where given (nothing if that folder does not exist), else from
    ``root``'s own where it has one (a staged repo), else built here (:func:`prebuild`)."""
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "known_wrong", "known_right", ".hypothesis")
    shutil.copytree(root / "grader", dest / "grader", ignore=skip)
    for unit in tests_needed(units, root / "tests"):
        shutil.copytree(root / "tests" / unit, dest / "tests" / unit, ignore=skip)
    shutil.copy2(root / "pyproject.toml", dest / "pyproject.toml")
    source = prebuilt if prebuilt is not None else root / PREBUILT
    if source.is_dir():
        shutil.copytree(source, dest / PREBUILT)
    elif prebuilt is None:
        prebuild(dest / PREBUILT, units)
    _read_only(dest)
    return dest


def tests_needed(units: Sequence[str], tests: Path) -> list[str]:
    """``units`` and every other unit whose tests folder theirs name (C2's tests load L33's reference model from
    ``tests/l33_paged_kv``), transitively. Only ``units`` are collected; the others are support files."""
    folders = {p.name for p in tests.iterdir() if p.is_dir() and p.name != "grader"}
    needed, todo = list(dict.fromkeys(units)), list(units)
    while todo:
        unit = todo.pop()
        text = "\n".join(p.read_text(errors="replace") for p in (tests / unit).glob("*.py"))
        for other in sorted(folders - set(needed)):
            if re.search(rf"\b{re.escape(other)}\b", text):
                needed.append(other)
                todo.append(other)
    return needed


def prebuild(dest: Path, units: Sequence[str]) -> None:
    """What every student's judge would otherwise build again, into ``dest``: the CUDA-on-CPU executor's runtime
    object, where a unit has .cu exercises and g++ is here. Built by the instructor's process from the grader's own
    source, or taken from the instructor's cache of it (``make grade`` builds the same object there, once per
    executor version; whatever can write that cache runs as the instructor and could rewrite the grader as well). A
    judge that finds none builds it itself, as before."""
    from grader.instrument import cuda_cpu

    if not cuda_cpu.available() or not any(any((REPO_ROOT / "exercises" / u).glob("*.cu")) for u in units):
        return
    try:
        try:
            cached = cuda_cpu.prebuild(cuda_cpu.cache_root())
        except OSError:  # no cache here (a read-only home): built for this batch only
            cuda_cpu.prebuild(dest / "cuda_cpu")
            return
        (dest / "cuda_cpu" / cached.parent.name).mkdir(parents=True)
        shutil.copy2(cached, dest / "cuda_cpu" / cached.parent.name / cached.name)
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:  # each judge then compiles and reports it
        print(f"grader: could not prebuild the CUDA-on-CPU runtime ({exc}); each student's grading builds it",
              file=sys.stderr)


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
    """The grading run, as ``grader.api.grade`` runs it, with results to ``report`` (fd:N or a path).

    Through :func:`judge_main` (``-m grader.instructor.sandbox``), with ``-P`` (no working folder on the
    import path) and ``-s`` (no user site under the learner-writable HOME).
    """
    paths = grading_command.unit_paths(repo, job.units)
    args = grading_command.pytest_args(repo, paths, target=target, report=report, exercises=job.exercises)
    return [str(python), "-P", "-s", "-m", JUDGE_MODULE, *args]


JUDGE_MODULE = "grader.instructor.sandbox"
# What the judge may import after the first learner call must be imported by judge_main before pytest starts, so
# that no import happens in the judge once a learner's code could have written a file. The grader's own modules
# are derived from the import graph (grader/core/layers.py): every core, instrument, judge and kit module that the
# plugin, the kit and the names the kit imports on first use reach, inside functions included. The third-party
# names below are what those modules, torch, Triton and hypothesis import lazily, measured as the difference of
# sys.modules between the first worker fork and the end of grading over the units (tests/grader/test_batch_cheats.py
# checks it still covers one unit: no late import in any judge's log).
JUDGE_ENTRIES = ("grader.judge.plugin", "grader.kit")
THIRD_PARTY_PRELOAD = (
    "cuda.bindings.nvrtc",  # the NVRTC include lookup (issue 13's instance), where cuda-python is installed
    "nvidia",  # a namespace package: its __path__ is every sys.path folder holding an nvidia/ folder
    "torch._subclasses.schema_check_mode",
    "torch.utils.serialization",  # torch.load of a worker's reply
    "hypothesis",
    "hypothesis.extra",
    "libcst",  # hypothesis' explain phase tries it; where it is not installed it is blocked (below)
    "numpy",
    "numpy.random",  # a test's seeded inputs (and the secrets/hmac it imports), made after a worker forked
    "torch",
    "pytest",
)


def judge_preload() -> tuple[str, ...]:
    """The modules judge_main imports before grading: the grader's, derived from the imports (the judge's entries,
    and every module the kit names for import on first use), after :data:`THIRD_PARTY_PRELOAD`."""
    from grader import kit
    from grader.core import layers

    lazy = {*kit._LAZY.values(), *kit._LAZY_MODULES.values()}
    ours = layers.reachable([*JUDGE_ENTRIES, *sorted(lazy)], up_to=layers.layer_of("grader.kit")[0])
    return (*THIRD_PARTY_PRELOAD, *ours)


LEARNER_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/run/shm")
_ENV_FOLDERS = ("TMPDIR", "HOME", "DRIPSTONE_TARGET")


def safe_import_path(path: Sequence[str], cwd: str, env: dict[str, str] | os._Environ[str]) -> list[str]:
    """``path`` without an entry the learner could write a module into: '', relative entries, the working
    folder, TMPDIR, HOME, the target, the world-writable temporary folders, and (not as root) any entry this
    uid can write or create. The judge's own repo copy (``REPO_ROOT``, read-only to the learner) is kept even
    when it lives under a temporary folder (a CI checkout in /tmp): the write check below still applies to it."""
    banned = [Path(p) for p in (cwd, *LEARNER_WRITABLE, *(env.get(k) for k in _ENV_FOLDERS)) if p]
    keep = []
    for entry in path:
        where = Path(entry)
        if not entry or not where.is_absolute():
            continue
        own_copy = where == REPO_ROOT or REPO_ROOT in where.parents
        if any(where == b or b in where.parents for b in banned) and not own_copy:
            continue
        if os.geteuid() != 0 and _writable(where):
            continue
        keep.append(entry)
    return keep


def _writable(path: Path) -> bool:
    """This uid could write ``path`` or create it (its nearest existing folder is writable)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return os.access(path, os.W_OK)


KILL_STRAYS_ENV = "DRIPSTONE_KILL_STRAYS"  # set where the judge runs as a uid of its own (not Isolation.RLIMITS)
LATE_IMPORT = "grader: the judge imported {} after learner code ran"


def judge_main(argv: Sequence[str]) -> int:
    """The batch judge: a safe import path, every module it may need imported, then the grading pytest.

    A preloaded module that is not installed is blocked (None in sys.modules: importing it fails at once).
    Imports the judge still makes once a worker was forked are said in the log (:data:`LATE_IMPORT`: add
    them to :data:`THIRD_PARTY_PRELOAD`, or import them where the graph sees it); they resolve on the safe path
    only. Where the judge has a uid of its
    own, every other process of that uid is killed when a test's worker ends (``setsid`` and
    double-forked children included), so nothing a learner started outlives the tests of an exercise.
    """
    sys.path[:] = safe_import_path(sys.path, os.getcwd(), os.environ)
    sys.path_importer_cache.clear()
    import importlib

    for name in judge_preload():
        try:
            importlib.import_module(name)
        except ImportError:  # not installed: blocked, so a later attempt never searches the path for it
            sys.modules.setdefault(name, None)  # type: ignore[assignment]
    _gloo_model_first()
    _watch_late_imports()
    if os.environ.get(KILL_STRAYS_ENV) == "1":
        _kill_strays_after_each_test()
    import pytest

    sys.argv = ["pytest", *argv]
    return pytest.main()


def _gloo_model_first() -> None:
    """Where the judge counts the wire (bwrap's own network), the model of this torch's gloo is had before any
    learner code runs: the stored one, or on a release with none, measured now by the judge's own calls in a network
    of the measurement's own (grader/judge/gloo_model.py), so that no worker of the learner's shares its time."""
    from grader.judge import gloo_model, wire

    if os.environ.get(wire.PRIVATE_NET_ENV) == "1":
        gloo_model.model_for_this_torch()


def _watch_late_imports() -> None:
    """Say (at exit, in the log) each module the judge loaded after a worker was forked. An import that finds
    nothing (an optional package that is not installed, which torch and hypothesis try) loaded no code and
    is not said: it was a false alarm in every honest student's log."""
    forked: list[bool] = []
    late: list[str] = []
    os.register_at_fork(before=lambda: forked.append(True))
    judge = os.getpid()

    def hook(event: str, args: tuple[object, ...]) -> None:
        if event == "import" and forked and os.getpid() == judge and args[0] not in sys.modules:
            late.append(str(args[0]))

    def say() -> None:
        if os.getpid() == judge:
            for name in dict.fromkeys(n for n in late if sys.modules.get(n) is not None):
                print(LATE_IMPORT.format(name), file=sys.stderr)

    sys.addaudithook(hook)
    atexit.register(say)


def _kill_strays_after_each_test() -> None:
    from grader.instrument import worker

    end_test = worker.end_test

    def end_test_and_strays(*, keep_worker: bool = False) -> None:
        end_test(keep_worker=keep_worker)
        if not keep_worker:  # the worker ended: so does everything it started
            with contextlib.suppress(OSError):
                os.kill(-1, signal.SIGKILL)  # every process this uid may signal but the judge itself

    worker.end_test = end_test_and_strays


def _environment(
    repo: Path, target: Path, tmp: Path, limits: Limits, gpu: str | None = None, own_uid: bool = True,
    private_net: bool = False,
) -> dict[str, str]:
    from grader.instrument import cuda_cpu
    from grader.judge.wire import PRIVATE_NET_ENV

    return {
        **({"CUDA_VISIBLE_DEVICES": gpu, "PYTORCH_NVML_BASED_CUDA_CHECK": "1"} if gpu is not None else {}),
        "PATH": f"{sandbox_python().parent}:/usr/bin:/bin",
        "HOME": str(tmp),
        "TMPDIR": str(tmp),
        "PYTHONPATH": str(repo),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONSAFEPATH": "1",  # any Python started in the sandbox: no script or working folder on sys.path
        "PYTHONNOUSERSITE": "1",  # nor ~/.local (HOME is the learner-writable /tmp)
        "PYTHONHASHSEED": "0",
        "TRITON_INTERPRET": "1",
        "TRITON_CACHE_DIR": str(tmp / "triton"),
        cuda_cpu.PREBUILT_ENV: str(repo / PREBUILT / "cuda_cpu"),
        "HYPOTHESIS_STORAGE_DIRECTORY": str(tmp / "hypothesis"),
        "OMP_NUM_THREADS": "1",
        "DRIPSTONE_ISOLATE": "1",
        **({KILL_STRAYS_ENV: "1"} if own_uid else {}),
        # the student's own network (bwrap --unshare-net): the judge counts the loopback's bytes
        # (grader/judge/wire.py)
        **({PRIVATE_NET_ENV: "1"} if private_net else {}),
        "DRIPSTONE_TARGET": str(target),
        "DRIPSTONE_CALL_TIMEOUT": str(limits.call_timeout_s),
        "DRIPSTONE_TMP_BYTES": str(limits.tmp_bytes),  # the judge's own cap (grader/instrument/worker.py)
        **({"DRIPSTONE_MAX_EXAMPLES": str(limits.max_examples)} if limits.max_examples else {}),
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
        env = _environment(REPO_IN, TARGET_IN, Path("/tmp"), limits, job.gpu, private_net=True)
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
            "--chdir",  # read-only: never the learner-writable /tmp, which is TMPDIR and HOME
            str(REPO_IN),
            "--clearenv",
        ]
        cmd += [a for k, v in env.items() for a in ("--setenv", k, v)]
        return [*cmd, "--", *_setpriv(uid), *_prlimit(limits), *inner], {}, job.scratch
    env = _environment(job.repo, job.target, job.scratch, limits, job.gpu, runtime.isolation is Isolation.SETPRIV)
    inner = pytest_command(runtime.python, job.repo, job.target, job, f"fd:{report_fd}")
    drop = _setpriv(uid) if runtime.isolation is Isolation.SETPRIV else []
    return [*drop, *_prlimit(limits), *inner], env, job.repo


def run(job: Job, runtime: Runtime, limits: Limits) -> Outcome:
    """Grade one student in the sandbox; results land in ``job.report``, the output in ``job.log``."""
    job.scratch.mkdir(parents=True, exist_ok=True)
    if runtime.isolation is not Isolation.RLIMITS:
        os.chown(job.scratch, UID_BASE + job.slot, UID_BASE + job.slot)
    job.scratch.chmod(0o700)
    report_fd = os.open(job.report, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o600)
    argv, env, cwd = command(job, runtime, limits, report_fd)
    group = StudentCgroup.create(runtime.cgroups, f"slot{job.slot}", limits)
    argv = [*group.enter(), *argv] if group else argv
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
        if group:
            group.kill()
        _kill_leftovers(job.slot, runtime)
        if group:
            group.remove()
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


@dataclass(frozen=True)
class StudentCgroup:
    """One job's cgroup (one folder per hierarchy): its CPU, memory and task budget, and its end.

    The job's first process joins it before it execs anything (:meth:`enter`), so every process the
    student starts, ``setsid`` and double-forked daemons included, is in it, counted and killed with it.
    """

    folders: tuple[Path, ...]
    version: str

    @classmethod
    def create(cls, cgroups: host.Cgroups, name: str, limits: Limits) -> StudentCgroup | None:
        """``name``'s group under each parent of ``cgroups`` (emptied first if a crashed run left it), limits set."""
        if not cgroups.version:
            return None
        group = cls(tuple(parent / name for parent in cgroups.parents), cgroups.version)
        if any(f.exists() for f in group.folders):
            group.kill()
            group.remove()
        for folder in group.folders:
            folder.mkdir()
        group._limit(limits)
        return group

    def _limit(self, limits: Limits) -> None:
        period = 100_000
        quota = str(max(1000, int(limits.cpus * period)))
        files = {  # v2 names, then v1's; a file a hierarchy lacks is skipped
            "cpu.max": f"{quota} {period}",
            "memory.max": str(limits.memory),
            "memory.swap.max": "0",
            "pids.max": str(limits.tasks),
            "cpu.cfs_period_us": str(period),
            "cpu.cfs_quota_us": quota,
            "memory.limit_in_bytes": str(limits.memory),
            "memory.memsw.limit_in_bytes": str(limits.memory),
        }
        for folder in self.folders:
            for name, value in files.items():
                if (folder / name).exists():
                    (folder / name).write_text(value)

    def enter(self) -> list[str]:
        """A prefix for the job's command line: the shell joins the group, then execs the command."""
        joins = " && ".join(f"echo $$ > {shlex.quote(str(f / 'cgroup.procs'))}" for f in self.folders)
        return ["/bin/sh", "-c", f'{joins} && exec "$@"', "dripstone-job"]

    def pids(self) -> set[int]:
        found: set[int] = set()
        for folder in self.folders:
            with contextlib.suppress(OSError):
                found.update(int(p) for p in (folder / "cgroup.procs").read_text().split())
        return found

    def kill(self, wait_s: float = 10.0) -> None:
        """Every process of the group killed, waiting until none is left (cgroup.kill where the kernel has it)."""
        deadline = time.monotonic() + wait_s
        while (pids := self.pids()) and time.monotonic() < deadline:
            for folder in self.folders:
                if (folder / "cgroup.kill").exists():
                    with contextlib.suppress(OSError):
                        (folder / "cgroup.kill").write_text("1")
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.02)

    def remove(self, wait_s: float = 60.0) -> None:
        """The group's folders removed; a process still in it (a killed one leaves once the kernel has freed its
        memory, which takes a while for gigabytes on a loaded machine) is killed again until the folder goes."""
        deadline = time.monotonic() + wait_s
        for folder in self.folders:
            while True:
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() >= deadline:
                        break
                    self.kill(wait_s=0.05)
                    time.sleep(0.05)

    def memory_peak(self) -> int | None:
        for name in ("memory.peak", "memory.max_usage_in_bytes"):
            for folder in self.folders:
                with contextlib.suppress(OSError, ValueError):
                    return int((folder / name).read_text())
        return None


if __name__ == "__main__":
    raise SystemExit(judge_main(sys.argv[1:]))
