"""``--backend ray``: the same per-student job (:func:`grader.instructor.batch.grade_student`) as Ray tasks.

Each task takes one CPU (and one GPU with ``--gpus``: Ray names it in the task's
CUDA_VISIBLE_DEVICES, the job leases it and the sandbox binds it) and carries everything it needs
as data, so it runs on any node of the cluster: the submission (a tar of the folder, or the
archive as it was handed in), the batch's snapshot of the grader and tests (one object in Ray's
store, shared by all tasks), the manifest and the limits. The task probes the sandbox on its own node and returns a
:class:`~grader.instructor.batch.StudentOutput`; the driver alone writes into OUT/ and the ledger, in the order
results arrive, so resuming works exactly as with the local backend.

Without ``--address`` the batch joins the cluster already running on this machine, found as Ray finds
it (``RAY_ADDRESS``, else the address file ``ray start`` writes, ``$RAY_TMPDIR``/``/tmp`` + ``ray/ray_current_cluster``,
when a raylet here still serves it); where none runs, and with ``--address local``, it starts a private
cluster with ``--jobs`` CPUs (stopped at the end). With an address, the cluster's nodes need this
repository's requirements and ``make sandbox-env``. The batch says which it did on stderr.
RAY_AUTH_MODE defaults to ``disabled`` (Ray 2.60 otherwise writes a token under the home folder).
:func:`local_cluster` starts a head and worker raylets on this machine (the tests and ``make bench-batch``).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from grader.core.target import REPO_ROOT
from grader.instructor import batch, sandbox, unpack

MAX_SUBMISSION_BYTES = unpack.Caps().total_bytes


def _tar(folder: Path) -> bytes:
    """The folder's regular files (links are left out, as when staging locally), gzipped."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink() and "__pycache__" not in path.parts:
                tf.add(path, arcname=str(path.relative_to(folder)), recursive=False)
    if buf.tell() > MAX_SUBMISSION_BYTES:
        raise unpack.UnsafeArchive(f"{folder.name}: more than {MAX_SUBMISSION_BYTES >> 20} MiB")
    return buf.getvalue()


def _payload(student: batch.Student) -> tuple[str, bytes]:
    """(archive name, bytes) of a submission; a folder travels as a .tar.gz we made."""
    if unpack.is_archive(student.source):
        return student.source.name, student.source.read_bytes()
    return f"{batch.out_folder(student.name)}.tar.gz", _tar(student.source)


def grade_remote(
    name: str, archive: str, data: bytes, snapshot: bytes, plan_fields: dict[str, object], limits: sandbox.Limits
) -> batch.StudentOutput:
    """Runs in a Ray worker: rebuild the submission and the snapshot locally, then grade as locally."""
    with tempfile.TemporaryDirectory(prefix="dripstone-ray-") as tmp:
        root = Path(tmp)
        root.chmod(0o711)
        (root / archive).write_bytes(data)
        with tarfile.open(fileobj=io.BytesIO(snapshot), mode="r:gz") as tf:
            tf.extractall(root / "snapshot", filter="data")
        runtime = sandbox.probe()
        plan = batch.Plan(pending=(), snapshot=root / "snapshot", runtime=runtime, **plan_fields)  # type: ignore[arg-type]
        return batch.grade_student(batch.Student(name, root / archive), plan, limits)


def run_batch(options: batch.BatchOptions,
              progress: Callable[[int, int, str], None] = lambda *_: None) -> batch.BatchReport:
    """:func:`grader.instructor.batch.run_batch` with the students graded as Ray tasks (:func:`run_ray`)."""
    return batch.run_batch(options, progress, runner=run_ray)


def run_ray(plan: batch.Plan, options: batch.BatchOptions, done: Callable[[batch.StudentOutput], None]) -> None:
    """Submit every pending student as a one-CPU task; record each result as it arrives."""
    import ray

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    owns = not ray.is_initialized()
    if owns:
        print(f"ray: {_init(ray, options)}", file=sys.stderr, flush=True)
    try:
        _submit_and_collect(ray, plan, options, done)
    finally:
        if owns:
            ray.shutdown()


def running_cluster() -> str | None:
    """The address of the Ray cluster running on this machine, as Ray's own discovery finds it: ``RAY_ADDRESS``,
    else the address file the last ``ray start --head`` wrote, if a raylet on this machine still serves that
    cluster (a stale file names none). None where no cluster runs."""
    from ray._common.utils import get_ray_address_file
    from ray._private import services

    env = os.environ.get("RAY_ADDRESS", "").strip()
    if env and env not in ("auto", "local"):
        return env
    try:
        address = Path(get_ray_address_file(None)).read_text().strip()
    except OSError:
        return None
    services.find_gcs_addresses.cache_clear()
    return address if address and address in services.find_gcs_addresses() else None


def _init(ray, options: batch.BatchOptions, attempts: int = 3) -> str:  # the ray module
    """Join the cluster (``--address``, else the one running here) or start a private one; say which.
    Ray 2.60 gives a new raylet a fixed 30 s to register, which a loaded machine can miss ("timed out
    during startup"): try again before giving up."""
    address = options.address if options.address not in (None, "auto") else running_cluster()
    private = address in (None, "local")
    for attempt in range(1, attempts + 1):
        try:
            ray.init(
                address="local" if private else address,
                num_cpus=options.jobs if private else None,
                include_dashboard=False,
                logging_level="ERROR",
                log_to_driver=False,
                runtime_env={"py_modules": [str(REPO_ROOT / "grader")]},
            )
            break
        except Exception as exc:  # Ray raises a bare Exception for this
            ray.shutdown()
            if attempt == attempts or "timed out during startup" not in str(exc):
                raise batch.BatchError(f"could not start or join the Ray cluster: {exc}") from exc
    nodes = sum(1 for node in ray.nodes() if node["Alive"])
    cpus = int(ray.cluster_resources().get("CPU", 0))
    if private:
        return f"started a private local cluster ({cpus} CPUs; stopped at the end)"
    how = "joined the cluster at" if options.address not in (None, "auto") else "joined the running cluster at"
    return f"{how} {address} ({nodes} node(s), {cpus} CPUs)"


def _submit_and_collect(
    ray,  # the ray module
    plan: batch.Plan,
    options: batch.BatchOptions,
    done: Callable[[batch.StudentOutput], None],
) -> None:
    snapshot = ray.put(_tar(plan.snapshot))
    fields = {"units": plan.units, "exercises": plan.exercises, "manifest": plan.manifest}
    gpus = 1 if options.limits.gpu else 0
    if gpus and ray.cluster_resources().get("GPU", 0) < 1:
        raise batch.BatchError("--gpus: the Ray cluster has no GPU; add GPU nodes or drop --gpus")
    # one GPU per task when asked: Ray sets the task's CUDA_VISIBLE_DEVICES, which the sandbox passes on
    task = ray.remote(num_cpus=1, num_gpus=gpus, max_retries=0)(grade_remote)
    refused: list[batch.StudentOutput] = []
    pending = []
    for student in plan.pending:
        if student.refusal:  # a link out of SUBMISSIONS: never read
            refused.append(batch.refused(student, plan, student.refusal))
            continue
        try:
            archive, data = _payload(student)
        except (unpack.UnsafeArchive, OSError) as exc:
            refused.append(batch.refused(student, plan, str(exc)))
            continue
        pending.append(task.remote(student.name, archive, data, snapshot, fields, options.limits))
    for output in refused:
        done(output)
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        done(ray.get(ready[0]))


# ---- a cluster on this machine (tests, make bench-batch) ----------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _node_ports() -> list[str]:
    """Each raylet's own ports (several on one machine must not share the defaults)."""
    flags = ("--node-manager-port", "--object-manager-port", "--dashboard-agent-listen-port",
             "--dashboard-agent-grpc-port", "--metrics-export-port", "--runtime-env-agent-port")
    return [arg for flag in flags for arg in (flag, str(_free_port()))]


def _ours(root: Path) -> list[int]:
    """Processes of the cluster under ROOT (its temp dir is in their command lines)."""
    import psutil

    pids = []
    for proc in psutil.process_iter(["cmdline"]):
        with contextlib.suppress(psutil.Error):
            if any(str(root) in arg for arg in proc.info["cmdline"] or ()):
                pids.append(proc.pid)
    return pids


@contextlib.contextmanager
def local_cluster(nodes: int = 1, cpus: int = 1, root: Path | None = None,
                  timeout_s: float = 180.0, attempts: int = 3) -> Iterator[str]:
    """A Ray cluster of NODES raylets on this machine (a head plus NODES-1 workers joined with ``ray start
    --address``), CPUS each, each on its own ports; yields the head's address and stops every process
    of it afterwards (never ``ray stop``, which would stop every cluster of the user on the machine).
    ``ROOT/ray`` (ROOT short: Ray's socket paths are limited) is its temp dir and holds the address file
    (``ROOT/ray/ray_current_cluster``): with ``RAY_TMPDIR=ROOT`` a batch finds it as the running cluster."""
    made, root = root is None, Path(root or tempfile.mkdtemp(prefix="dr-", dir="/tmp"))
    env = {**os.environ, "RAY_TMPDIR": str(root), "RAY_AUTH_MODE": os.environ.get("RAY_AUTH_MODE", "disabled"),
           "RAY_USAGE_STATS_ENABLED": "0"}
    ray_cli = str(Path(sys.executable).parent / "ray")
    procs: list[subprocess.Popen] = []
    address = f"127.0.0.1:{_free_port()}"

    def start(args: list[str], name: str) -> None:
        for attempt in range(1, attempts + 1):  # a loaded machine can miss Ray's fixed startup deadlines
            log = root / f"{name}.{attempt}.log"
            with log.open("w") as out:
                proc = subprocess.Popen([ray_cli, "start", "--block", "--temp-dir", str(root / "ray"),
                                         "--num-cpus", str(cpus), "--disable-usage-stats", *_node_ports(), *args],
                                        env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
            deadline = time.monotonic() + timeout_s
            while proc.poll() is None and time.monotonic() < deadline:
                if "will now block forever" in log.read_text(errors="replace"):
                    procs.append(proc)
                    return
                time.sleep(0.25)
            _stop([proc])
            if attempt == attempts:
                raise batch.BatchError(f"ray start ({name}) failed: {log.read_text(errors='replace')[-1500:]}")

    try:
        start(["--head", "--port", address.rsplit(":", 1)[1], "--node-ip-address", "127.0.0.1",
               "--include-dashboard", "false"], "head")
        for i in range(1, nodes):
            start(["--address", address, "--node-ip-address", "127.0.0.1"], f"worker{i}")
        yield address
    finally:
        _stop(procs[::-1])
        for pid in _ours(root):  # anything of this cluster that outlived its ray start
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if made:
            shutil.rmtree(root, ignore_errors=True)


def _stop(procs: list[subprocess.Popen]) -> None:
    """SIGTERM each ``ray start --block`` (it stops its node's processes), then its process group."""
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(60)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
