"""The judge's import path and the per-student budgets (grader/instructor/sandbox.py, issue 13 classes 4 and 6).

Fast checks of the pieces (the judge's command line and environment, the import-path filter, cgroup
detection on a fake file system, a real cgroup where this machine has one), then one slow batch: the
cheats of tests/grader/cheats/ that attack these two classes, graded two at a time beside an honest
student, who must score exactly as when graded alone, with no learner file ever run by a judge.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.core.target import REPO_ROOT
from grader.instructor import sandbox
from grader.tools import host

UNIT = "l23_online_softmax"


def _job(tmp_path: Path) -> sandbox.Job:
    return sandbox.Job("s", tmp_path / "repo", tmp_path / "target", tmp_path / "scratch", (UNIT,),
                       tmp_path / "r", tmp_path / "l")


@pytest.mark.parametrize("isolation", list(sandbox.Isolation))
def test_the_judge_starts_with_a_safe_path_from_a_read_only_folder(tmp_path, isolation):
    runtime = sandbox.Runtime(Path(sys.executable), isolation)
    argv, env, cwd = sandbox.command(_job(tmp_path), runtime, sandbox.Limits(), 3)
    judge = argv.index(str(Path(sys.executable)))
    assert argv[judge + 1 : judge + 5] == ["-P", "-s", "-m", sandbox.JUDGE_MODULE], argv[judge:]
    if isolation is sandbox.Isolation.BWRAP:
        assert argv[argv.index("--chdir") + 1] == str(sandbox.REPO_IN), "the judge's cwd must be read-only"
        pairs = {argv[i + 1]: argv[i + 2] for i, a in enumerate(argv) if a == "--setenv"}
        assert pairs["PYTHONSAFEPATH"] == "1" and pairs["PYTHONNOUSERSITE"] == "1"
        assert pairs.get(sandbox.KILL_STRAYS_ENV) == "1"
    else:
        assert cwd == tmp_path / "repo" and cwd != Path(env["TMPDIR"]), "the judge never works in TMPDIR"
        assert env["PYTHONSAFEPATH"] == "1" and env["PYTHONNOUSERSITE"] == "1"
        assert (env.get(sandbox.KILL_STRAYS_ENV) == "1") == (isolation is sandbox.Isolation.SETPRIV), (
            "kill -1 from the judge only where it has a uid of its own")


def test_the_import_path_keeps_no_folder_a_learner_can_write(tmp_path, monkeypatch):
    trusted, writable = REPO_ROOT / "grader", REPO_ROOT / "tests"  # (os.access is faked below)
    target, home = tmp_path / "target", tmp_path / "home"
    env = {"TMPDIR": "/tmp/x", "HOME": str(home), "DRIPSTONE_TARGET": str(target)}
    path = ["", ".", "rel", str(trusted), "/tmp", "/tmp/x/lib", "/dev/shm", str(home / ".local"), str(target),
            "/work/cwd", "/work/cwd/sub", str(writable), str(writable / "not-yet")]
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(os, "access", lambda p, mode: Path(p) != trusted)  # a learner's uid: only repo read-only
    assert sandbox.safe_import_path(path, "/work/cwd", env) == [str(trusted)]
    monkeypatch.setattr(os, "geteuid", lambda: 0)  # root writes everything: only the named places go
    assert sandbox.safe_import_path(path, "/work/cwd", env) == [str(trusted), str(writable), str(writable / "not-yet")]


def _fake_v2(root: Path, controllers: str) -> Path:
    root.mkdir()
    (root / "cgroup.controllers").write_text(controllers)
    (root / "cgroup.subtree_control").write_text("")
    return root


def test_cgroup_v2_is_delegated_when_it_has_the_controllers(tmp_path):
    got = host.cgroup_setup(_fake_v2(tmp_path / "cg", "cpuset cpu io memory pids"))
    assert got.version == "v2" and got.parents == (tmp_path / "cg" / host.CGROUP_PARENT,)
    assert (tmp_path / "cg" / "cgroup.subtree_control").read_text() == "+cpu +memory +pids"
    assert (tmp_path / "cg" / host.CGROUP_PARENT / "cgroup.subtree_control").read_text() == "+cpu +memory +pids"
    assert "cgroup v2 per student (cpu, memory, pids" in got.describe()


def test_without_usable_cgroups_the_runtime_says_so(tmp_path):
    got = host.cgroup_setup(_fake_v2(tmp_path / "cg", "cpuset io"))
    assert got.version == "" and "lacks the cpu, memory, pids controller(s)" in got.why, got
    assert "no per-student cgroup" in got.describe()
    runtime = sandbox.Runtime(Path(sys.executable), sandbox.Isolation.BWRAP, cgroups=got)
    assert runtime.budget() == "rlimits-only" and "rlimits-only" in runtime.describe()
    assert host.cgroup_setup(tmp_path / "nothing").why.startswith("no cgroup v2 mounted")


def test_v1_hierarchies_are_used_where_v2_has_no_controllers(tmp_path):
    root = tmp_path / "cg"
    for name in ("cpu", "memory", "pids"):
        (root / name).mkdir(parents=True)
        (root / name / "cgroup.procs").write_text("")
    got = host.cgroup_setup(root)
    assert got.version == "v1" and got.controllers == ("cpu", "memory", "pids") and not got.why
    assert all(p.name == host.CGROUP_PARENT and p.is_dir() for p in got.parents)


def test_doctor_says_which_budget_is_in_force():
    from grader.tools import doctor

    base = doctor.Machine(python=(3, 11, 7), executable="python", installed={}, tools=frozenset(doctor.TOOLS), euid=0)
    assert "budget" not in {c.name: c for c in doctor.check_isolation(base)}["isolation"].detail, "not probed: silent"
    none = doctor.replace(base, cgroup_budget="no per-student cgroup (no cgroup v2 mounted at /x)",
                          cgroup_gap="no cgroup v2 mounted at /x")
    checks = {c.name: c for c in doctor.check_isolation(none)}
    assert checks["cgroups"].status is doctor.Severity.WARN and checks["cgroups"].fix == doctor.FIX_CGROUPS
    assert "per-student budget: no per-student cgroup" in checks["isolation"].detail
    full = doctor.replace(base, cgroup_budget="cgroup v2 per student (cpu, memory, pids; ended by cgroup.kill)")
    checks = {c.name: c for c in doctor.check_isolation(full)}
    assert checks["cgroups"].status is doctor.Severity.OK
    assert checks["isolation"].detail.endswith("per-student budget: cgroup v2 per student (cpu, memory, pids; "
                                               "ended by cgroup.kill)")


@pytest.fixture
def real_cgroups() -> host.Cgroups:
    if os.geteuid() != 0:
        pytest.skip("cgroups are set up as root")
    cgroups = host.cgroup_setup()
    if not cgroups.version:
        pytest.skip(f"no cgroup here: {cgroups.why}")
    return cgroups


def test_a_student_cgroup_holds_escaped_processes_and_kills_them_all(real_cgroups):
    """setsid'd, double-forked processes stay in the group, within its budget, and die with it."""
    limits = sandbox.Limits(cpus=0.5, memory=256 * 2**20, tasks=64)
    group = sandbox.StudentCgroup.create(real_cgroups, "test-isolation", limits)
    assert group is not None
    try:
        script = "for i in 1 2 3; do setsid sh -c '(while :; do :; done) &' ; done; sleep 0.5"
        subprocess.run([*group.enter(), "/bin/sh", "-c", script], check=True, timeout=60)
        assert len(group.pids()) >= 3, "the daemons left the group"
        time.sleep(1.0)
        usage = _cpu_seconds(group)
        if usage is not None:
            time.sleep(2.0)
            assert _cpu_seconds(group) - usage < 2.0 * 0.5 + 0.4, "cpu.max does not hold three spinners to 0.5 CPU"
        for folder in group.folders:
            for name, value in (("memory.max", limits.memory), ("memory.limit_in_bytes", limits.memory),
                                ("pids.max", limits.tasks)):
                if (folder / name).exists():
                    assert int((folder / name).read_text()) == value
    finally:
        group.kill()
        group.remove()
    assert not group.pids() and not any(f.exists() for f in group.folders)


def _cpu_seconds(group: sandbox.StudentCgroup) -> float | None:
    for folder in group.folders:
        if (folder / "cpuacct.usage").exists():
            return int((folder / "cpuacct.usage").read_text()) / 1e9
        stat = folder / "cpu.stat"
        if stat.exists():
            fields = dict(line.split() for line in stat.read_text().splitlines() if len(line.split()) == 2)
            if "usage_usec" in fields:
                return int(fields["usage_usec"]) / 1e6
    return None
