"""``--backend ray`` against a real local Ray cluster: the same grades as the local backend, the same
files, the same ledger; and a batch without ``--address`` joins the cluster running here."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from grader.core.target import REPO_ROOT
from grader.instructor import batch, batch_ray, sandbox

UNIT = "l23_online_softmax"
EXERCISES = ("softmax_hbm_bytes", "online_softmax_state")  # quick tests: the cluster is what is tested

pytestmark = pytest.mark.slow


def test_ray_backend_grades_like_the_local_one(tmp_path, monkeypatch, sandbox_runtime):
    ray = pytest.importorskip("ray", reason="ray is pinned in requirements-instructor.txt (make test installs it)")
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    subs = tmp_path / "subs"
    shutil.copytree(REPO_ROOT / "solutions", subs / "full", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO_ROOT / "exercises", subs / "stub", ignore=shutil.ignore_patterns("__pycache__"))
    (subs / "evil.zip").write_bytes(b"PK\x03\x04 not really a zip")
    options = dict(units=(UNIT,), exercises=EXERCISES, jobs=2)
    # --gpus on a cluster declaring one (logical) GPU: each task must ask Ray for it, Ray names it in the
    # task's CUDA_VISIBLE_DEVICES and the job leases it (without num_gpus=1 a task sees none and fails)
    real_init = ray.init
    monkeypatch.setattr(ray, "init", lambda *a, **k: real_init(*a, num_gpus=1, **k))
    # --address local: a private cluster, even where one runs on this machine
    report = batch_ray.run_batch(batch.BatchOptions(subs, tmp_path / "ray", backend=batch.Backend.RAY, address="local",
                                                limits=sandbox.Limits(gpu=True), **options))
    assert not ray.is_initialized(), "the batch stops the cluster it started"
    assert {g.student: g.gpu for g in report.graded} == {"full": "0", "stub": "0", "evil": None}
    local = batch.run_batch(batch.BatchOptions(subs, tmp_path / "local", **options))
    assert all(g.gpu is None for g in local.graded)
    by_ray = {g.student: (g.score, g.max_score) for g in report.graded}
    assert by_ray == {g.student: (g.score, g.max_score) for g in local.graded}
    assert by_ray["full"][0] == by_ray["full"][1] > 0 and by_ray["stub"][0] == 0 and by_ray["evil"][0] == 0
    for name in ("full", "stub"):
        ray_tests = json.loads((tmp_path / "ray" / name / "results.json").read_text())["tests"]
        local_tests = json.loads((tmp_path / "local" / name / "results.json").read_text())["tests"]
        assert [(t["name"], t["score"]) for t in ray_tests] == [(t["name"], t["score"]) for t in local_tests]
    assert len((tmp_path / "ray" / "done.jsonl").read_text().splitlines()) == 3


def test_a_batch_without_address_joins_the_cluster_running_here(tmp_path, monkeypatch, capfd, sandbox_runtime):
    ray = pytest.importorskip("ray", reason="ray is pinned in requirements-instructor.txt (make test installs it)")
    from grader.instructor import batch_ray

    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    root = Path(tempfile.mkdtemp(prefix="dr-", dir="/tmp"))  # short: Ray's socket paths are limited
    monkeypatch.setenv("RAY_TMPDIR", str(root))  # Ray's discovery reads ROOT/ray/ray_current_cluster
    subs = tmp_path / "subs"
    shutil.copytree(REPO_ROOT / "solutions", subs / "full", ignore=shutil.ignore_patterns("__pycache__"))
    inits: list[dict] = []
    real_init = ray.init
    monkeypatch.setattr(ray, "init", lambda *a, **k: inits.append(k) or real_init(*a, **k))
    try:
        assert batch_ray.running_cluster() is None  # nothing runs under ROOT yet
        cluster = batch_ray.local_cluster(nodes=1, cpus=2, root=root, attempts=5)  # as `ray start --head` would
        try:
            cluster.__enter__()
        except batch.BatchError as exc:  # Ray's fixed 15-30 s startup deadlines, missed 5 times: not what is tested
            pytest.skip(f"Ray could not start a node on this loaded machine: {str(exc)[-300:]}")
        try:
            address = batch_ray.running_cluster()
            assert address
            report = batch_ray.run_batch(batch.BatchOptions(subs, tmp_path / "out", backend=batch.Backend.RAY, jobs=2,
                                                        units=(UNIT,), exercises=EXERCISES))
            assert not ray.is_initialized(), "the batch disconnects from the cluster it joined"
            assert [(k["address"], k["num_cpus"]) for k in inits] == [(address, None)], "it started no cluster"
            assert f"ray: joined the running cluster at {address} (1 node(s), 2 CPUs)" in capfd.readouterr().err
            real_init(address=address, logging_level="ERROR")
            try:  # the batch's driver was a job of this cluster, whose one node ran its tasks
                drivers = [j for j in ray._private.state.jobs() if j["DriverPid"] == os.getpid()]
                nodes = ray.nodes()
            finally:
                ray.shutdown()
            assert sorted(j["IsDead"] for j in drivers) == [False, True] and len(nodes) == 1
        finally:
            cluster.__exit__(None, None, None)
        assert batch_ray._ours(root) == [], "the test's cluster is stopped"
        assert batch_ray.running_cluster() is None
    finally:
        shutil.rmtree(root, ignore_errors=True)
    (full,) = report.graded
    assert full.score == full.max_score > 0
