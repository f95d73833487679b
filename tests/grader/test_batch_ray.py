"""``--backend ray`` against a real local Ray cluster (one start for the whole suite): the same
grades as the local backend, the same files, the same ledger."""

from __future__ import annotations

import json
import shutil

import pytest

from grader.grading.target import REPO_ROOT
from grader.instructor import batch, sandbox

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
    report = batch.run_batch(batch.BatchOptions(subs, tmp_path / "ray", backend=batch.Backend.RAY,
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
