"""``--backend ray``: the same per-student job (:func:`grader.instructor.batch.grade_student`) as Ray tasks.

Each task takes one CPU (and one GPU with ``--gpus``: Ray names it in the task's
CUDA_VISIBLE_DEVICES, the job leases it and the sandbox binds it) and carries everything it needs
as data, so it runs on any node of the cluster: the submission (a tar of the folder, or the
archive as it was handed in), the batch's snapshot of the grader and tests (one object in Ray's
store, shared by all tasks), the manifest and the limits. The task probes the sandbox on its own node and returns a
:class:`~grader.instructor.batch.StudentOutput`; the driver alone writes into OUT/ and the ledger, in the order
results arrive, so resuming works exactly as with the local backend.

Without ``--address`` a local cluster with ``--jobs`` CPUs is started (and stopped at the end); with
one, the cluster's nodes need this repository's requirements and ``make sandbox-env``.
RAY_AUTH_MODE defaults to ``disabled`` (Ray 2.60 otherwise writes a token under the home folder).
"""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from grader.grading.target import REPO_ROOT
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


def run_ray(plan: batch.Plan, options: batch.BatchOptions, done: Callable[[batch.StudentOutput], None]) -> None:
    """Submit every pending student as a one-CPU task; record each result as it arrives."""
    import ray

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    owns = not ray.is_initialized()
    if owns:
        _init(ray, options)
    try:
        _submit_and_collect(ray, plan, options, done)
    finally:
        if owns:
            ray.shutdown()


def _init(ray, options: batch.BatchOptions, attempts: int = 3) -> None:  # the ray module
    """Start or join the cluster. Ray 2.60 gives a new raylet a fixed 30 s to register, which a loaded
    machine can miss ("timed out during startup"): try again before giving up."""
    for attempt in range(1, attempts + 1):
        try:
            ray.init(
                address=options.address,
                num_cpus=None if options.address else options.jobs,
                include_dashboard=False,
                logging_level="ERROR",
                log_to_driver=False,
                runtime_env={"py_modules": [str(REPO_ROOT / "grader")]},
            )
            return
        except Exception as exc:  # Ray raises a bare Exception for this
            ray.shutdown()
            if attempt == attempts or "timed out during startup" not in str(exc):
                raise batch.BatchError(f"could not start or join the Ray cluster: {exc}") from exc


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
