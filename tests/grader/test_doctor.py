"""`make doctor`: checks as pure functions of a machine snapshot (GPU and no-GPU), probes, and the CLI end to end."""

from __future__ import annotations

import ast
import dataclasses
import subprocess
import sys

import pytest

from grader.core.results import Tier
from grader.core.target import REPO_ROOT
from grader.instructor import batch, sandbox
from grader.tools import doctor
from grader.tools.doctor import Gpu, Machine, Pin, Severity

PINS = [
    Pin("torch", "2.13.0", "requirements.txt"),
    Pin("triton", "3.7.1", "requirements.txt"),
    Pin("cupy-cuda13x", "14.2.0", "requirements-gpu.txt"),
]
REQUIRED = (3, 11)
H200 = Gpu("NVIDIA H200", (9, 0))
ALL_TOOLS = frozenset(doctor.TOOLS)


def laptop(**changes: object) -> Machine:
    """A learner's laptop: the pinned CPU stack, no GPU, every isolation tool working, not root."""
    base = Machine(
        python=(3, 11, 7),
        executable=".venv/bin/python",
        installed={"torch": "2.13.0+cpu", "triton": "3.7.1"},
        torch_version="2.13.0+cpu",
        c_compiler=True,
        python_headers=True,
        tools=ALL_TOOLS,
        euid=1000,
    )
    return dataclasses.replace(base, **changes)


def gpu_box(**changes: object) -> Machine:
    """A GPU machine (or the docker image): CUDA torch, an H200, driver 580."""
    base = laptop(
        installed={"torch": "2.13.0", "triton": "3.7.1", "cupy-cuda13x": "14.2.0"},
        torch_version="2.13.0",
        torch_cuda="13.0",
        gpu=H200,
        smi_gpus=("NVIDIA H200",),
        driver="580.82.07",
    )
    return dataclasses.replace(base, **changes)


def by_name(checks: list[doctor.Check]) -> dict[str, doctor.Check]:
    return {c.name: c for c in checks}


# ---- pins and Python ---------------------------------------------------------------------------------


def test_read_pins_takes_name_and_version_of_pinned_lines(tmp_path):
    req = tmp_path / "requirements-gpu.txt"
    req.write_text("# comment\n\nnumba-cuda[cu13]==0.30.4\nCuPy_Cuda13x == 14.2.0  # why\nloose>=1\n")
    assert doctor.read_pins(req) == [
        Pin("numba-cuda", "0.30.4", "requirements-gpu.txt"),
        Pin("cupy-cuda13x", "14.2.0", "requirements-gpu.txt"),
    ]
    assert all(p.gpu_only for p in doctor.read_pins(req))


def test_pins_come_from_the_requirements_files():
    names = {p.name: p for p in doctor.all_pins()}
    assert names["torch"].version in (REPO_ROOT / "requirements.txt").read_text()
    assert not names["torch"].gpu_only and not names["triton"].gpu_only
    assert doctor.required_python() >= (3, 11)


def test_old_python_fails_with_the_command_that_fixes_it():
    check = doctor.check_python(laptop(python=(3, 9, 18)), REQUIRED)
    assert check.status is Severity.FAIL
    assert "3.9.18" in check.detail and "3.11" in check.detail
    assert "make env PYTHON=python3.11" in check.fix
    assert doctor.check_python(laptop(), REQUIRED).status is Severity.OK


def test_release_candidate_python_fails_before_grading():
    """Ubuntu 22.04's python3.11 is 3.11.0rc1: torch 2.13 fails on it, blamed on the learner's line (issue 30)."""
    rc1 = laptop(python=(3, 11, 0), python_release="candidate1")
    check = doctor.check_python(rc1, REQUIRED)
    assert check.status is Severity.FAIL and "3.11.0rc1" in check.detail and "pre-release" in check.detail
    assert "final" in check.fix and "make env PYTHON=" in check.fix
    assert doctor.blocking_checks(rc1, PINS, REQUIRED)[0] == check  # `make grade` stops on it
    beta = laptop(python=(3, 13, 0), python_release="beta2")
    assert doctor.check_python(beta, REQUIRED).detail.startswith("3.13.0b2")
    basics = doctor.probe_basics(PINS)
    assert basics.python_release == ("final" if sys.version_info.releaselevel == "final" else basics.python_release)
    assert doctor.Machine(python=(3, 11, 7), executable="python", installed={}).python_release == "final"


def test_pinned_version_with_local_label_is_ok_and_drift_warns():
    assert doctor.check_pin(laptop(), PINS[0], has_gpu=False).status is Severity.OK  # 2.13.0+cpu
    drift = doctor.check_pin(laptop(installed={"triton": "3.8.0"}), PINS[1], has_gpu=False)
    assert drift.status is Severity.WARN
    assert "3.8.0" in drift.detail and "3.7.1" in drift.detail and drift.fix == doctor.FIX_ENV


def test_missing_required_pin_fails_missing_gpu_extra_only_matters_with_a_gpu():
    missing_torch = doctor.check_pin(laptop(installed={}), PINS[0], has_gpu=False)
    assert missing_torch.status is Severity.FAIL and missing_torch.fix == doctor.FIX_ENV
    assert doctor.check_pin(laptop(), PINS[2], has_gpu=False).status is Severity.OK
    needed = doctor.check_pin(laptop(), PINS[2], has_gpu=True)
    assert needed.status is Severity.WARN and needed.fix == doctor.FIX_GPU_EXTRAS


def test_blocking_checks_stop_on_missing_torch_and_ignore_gpu_extras():
    checks = by_name(doctor.blocking_checks(laptop(installed={"triton": "3.7.1"}), PINS, REQUIRED))
    assert checks["torch"].status is Severity.FAIL
    assert "cupy-cuda13x" not in checks
    assert doctor.DoctorReport(tuple(checks.values())).failed
    ok = doctor.blocking_checks(laptop(), PINS, REQUIRED)
    assert not doctor.DoctorReport(tuple(ok)).failed


# ---- no GPU and GPU paths ----------------------------------------------------------------------------


def test_cpu_machine_interprets_triton_and_leaves_gpu_perf_pending():
    checks = by_name(doctor.doctor_checks(laptop(), PINS, REQUIRED))
    assert checks["triton mode"].status is Severity.OK and checks["triton mode"].detail.startswith("interpreted")
    assert checks["gpu"].status is Severity.OK and checks["gpu"].detail.startswith("none")
    assert checks["tier correctness"].status is checks["tier efficiency"].status is Severity.OK
    pending = checks["tier gpu_perf"]
    assert pending.status is Severity.WARN and pending.detail.startswith("pending GPU") and "--gpus all" in pending.fix
    assert "pending GPU: gpu_perf" in doctor.summary(doctor.DoctorReport(tuple(checks.values())))


def test_gpu_machine_grades_every_tier_and_compiles_for_the_device():
    checks = by_name(doctor.doctor_checks(gpu_box(), PINS, REQUIRED))
    assert checks["gpu"].status is Severity.OK
    assert all(s in checks["gpu"].detail for s in ("NVIDIA H200", "sm_90", "580.82.07", "CUDA runtime 13.0"))
    assert "compiled for NVIDIA H200" in checks["triton mode"].detail
    assert checks["tier gpu_perf"].status is Severity.OK
    assert checks["cupy-cuda13x"].status is Severity.OK
    assert "pending GPU: none" in doctor.summary(doctor.DoctorReport(tuple(checks.values())))


def test_gpu_without_a_c_compiler_says_triton_cannot_build_its_launcher():
    check = doctor.check_triton(gpu_box(c_compiler=False))
    assert check.status is Severity.WARN and "a C compiler" in check.detail
    assert check.fix == "sudo apt-get install gcc python3.11-dev"


def test_gpu_seen_by_driver_but_cpu_torch_says_reinstall_with_gpu_extras():
    check = doctor.check_gpu(gpu_box(gpu=None, torch_cuda=None, torch_version="2.13.0+cpu"))
    assert check.status is Severity.WARN and "CPU build" in check.detail and check.fix == doctor.FIX_ENV_GPU


def test_old_driver_names_the_driver_the_cuda_build_needs():
    check = doctor.check_gpu(gpu_box(gpu=None, driver="550.54.15"))
    assert check.status is Severity.WARN and "550.54.15" in check.detail
    assert check.fix == f"upgrade the NVIDIA driver to {doctor.MIN_DRIVER[13]} or newer"


def test_gpu_invisible_to_torch_for_another_reason_points_at_docker_gpus_flag():
    check = doctor.check_gpu(gpu_box(gpu=None))
    assert check.status is Severity.WARN and "--gpus all" in check.fix


def test_broken_torch_import_fails_correctness():
    checks = by_name(doctor.doctor_checks(laptop(torch_error="OSError: libtorch_cpu.so: cannot open"), PINS, REQUIRED))
    assert checks["torch build"].status is Severity.FAIL and "libtorch_cpu.so" in checks["torch build"].detail
    assert checks["torch build"].fix == doctor.FIX_ENV_CLEAN  # reinstalling the same version keeps broken files
    assert checks["tier correctness"].status is Severity.FAIL


def test_efficiency_tier_warns_when_the_interpreter_hooks_are_missing():
    check = by_name(doctor.check_tiers(laptop(triton_hooks_error="RuntimeError: lacks create_masked_load")))
    assert check["tier efficiency"].status is Severity.WARN and "create_masked_load" in check["tier efficiency"].detail


def test_tier_checks_cover_every_tier_of_the_engine():
    assert [c.name for c in doctor.check_tiers(laptop())] == [f"tier {t.value}" for t in Tier]


# ---- isolation ---------------------------------------------------------------------------------------


def test_batch_gpus_says_how_many_jobs_can_time_at_once():
    assert "refused" in doctor.check_batch_gpus(laptop()).detail
    check = doctor.check_batch_gpus(laptop(gpu_devices=("nvidia0", "nvidia1")))
    assert check.status is Severity.OK and check.detail.startswith("2 GPU(s) (nvidia0, nvidia1): one job at a time")


def test_isolation_available_as_root_with_every_tool():
    checks = by_name(doctor.check_isolation(laptop(euid=0)))
    assert checks["isolation"].status is Severity.OK and checks["isolation"].detail.startswith("available: bwrap")
    assert "as root" in checks["bwrap"].detail and checks["root"].status is Severity.OK


def test_isolation_without_bwrap_falls_back_to_setpriv_and_says_how_to_install_it():
    checks = by_name(doctor.check_isolation(laptop(euid=0, tools=ALL_TOOLS - {"bwrap"})))
    assert checks["bwrap"].fix == doctor.FIX_BWRAP
    assert checks["isolation"].detail.startswith("partial: setpriv") and checks["isolation"].fix == doctor.FIX_BWRAP


def test_isolation_as_a_plain_user_is_rlimits_only_and_asks_for_root():
    checks = by_name(doctor.check_isolation(laptop()))
    assert checks["root"].status is Severity.WARN and "uid 1000" in checks["root"].detail
    assert checks["isolation"].detail.startswith("partial: rlimits only")
    assert checks["isolation"].fix == doctor.FIX_ROOT


def test_isolation_not_available_without_root_or_any_tool():
    checks = by_name(doctor.check_isolation(laptop(tools=frozenset(), userns_error="cannot test")))
    assert checks["isolation"].detail.startswith("not available")


def test_bwrap_failing_as_root_in_a_container_names_the_capability_it_needs():
    m = laptop(
        euid=0,
        in_container=True,
        bwrap_error="bwrap: Creating new namespace failed: Operation not permitted",
        userns_error="unshare: Operation not permitted",
    )
    checks = by_name(doctor.check_isolation(m))
    assert checks["bwrap"].status is Severity.WARN and checks["bwrap"].fix == doctor.FIX_BWRAP_IN_CONTAINER
    assert "--cap-add SYS_ADMIN" in checks["bwrap"].fix
    assert checks["isolation"].detail.startswith("partial: setpriv")


def test_bubblewrap_too_old_for_the_sandbox_says_which_version_it_needs():
    check = doctor.check_isolation(laptop(euid=0, bwrap_error="bwrap: Unknown option --size"))[3]
    assert check.name == "bwrap" and check.fix == doctor.FIX_BWRAP_VERSION and "0.8" in check.fix


def test_bubblewrap_without_size_still_isolates_and_says_who_caps_tmp():
    checks = by_name(doctor.check_isolation(laptop(euid=0, bwrap_error="bwrap: Unknown option --size",
                                                    bwrap_no_size=True)))
    assert checks["bwrap"].status is Severity.WARN and "capped by the judge" in checks["bwrap"].detail
    assert checks["isolation"].detail.startswith("available: bwrap")
    assert checks["isolation"].fix == doctor.FIX_BWRAP_VERSION
    assert doctor.isolation_level(laptop(euid=0, bwrap_error="bwrap: Unknown option --size")) == "setpriv"


# What bwrap answers doctor.BWRAP_PROBE with, recorded by running each distribution's own bwrap as root:
# Ubuntu 22.04's 0.6.1-1ubuntu0.3, Debian 12's 0.8.0, Ubuntu 24.04's 0.9.0-1ubuntu0.3 (its root, chroot),
# with the capability named dropped from the bounding set (setpriv --bounding-set -net_admin / -sys_admin).
BWRAP_061_SIZE = "bwrap: --perms must be followed by an option that creates a file"  # 0.6.1 has no --size
BWRAP_NO_NET_ADMIN = "bwrap: loopback: Failed RTM_NEWADDR: No child processes"  # 0.6.1, 0.8.0, 0.9.0
BWRAP_NO_SYS_ADMIN = "bwrap: Creating new namespace failed: Operation not permitted"  # 0.6.1, 0.8.0, 0.9.0
BWRAP_090_NO_USERNS = ("bwrap: No permissions to create new namespace, likely because the kernel does not allow "
                       "non-privileged user namespaces. See <https://deb.li/bubblewrap> or "
                       "<file:///usr/share/doc/bubblewrap/README.Debian.gz>.")  # 0.9.0 as uid 65534


def bwrap_answers(with_size: str | None, without_size: str | None):
    """A fake ``_run`` for BWRAP_PROBE: the first answer with --size, the second without (None: it starts)."""
    seen = []

    def run(cmd, timeout=0):
        seen.append(cmd)
        answer = with_size if "--size" in cmd else without_size
        return (0, "") if answer is None else (1, answer)

    return run, seen


@pytest.mark.parametrize(
    ("version", "with_size", "without_size", "facts", "fix"),
    [
        ("0.6.1 all caps", BWRAP_061_SIZE, None, {"bwrap_error": BWRAP_061_SIZE, "bwrap_no_size": True},
         doctor.FIX_BWRAP_VERSION),
        # compose's old SYS_ADMIN alone: 0.6.1 fails on --perms/--size first, then on the loopback; the loopback is
        # the reason, and a newer bwrap fixes nothing (issue 30)
        ("0.6.1 SYS_ADMIN only", BWRAP_061_SIZE, BWRAP_NO_NET_ADMIN, {"bwrap_error": BWRAP_NO_NET_ADMIN},
         doctor.FIX_BWRAP_NET_ADMIN),
        ("0.8.0/0.9.0 SYS_ADMIN only", BWRAP_NO_NET_ADMIN, BWRAP_NO_NET_ADMIN, {"bwrap_error": BWRAP_NO_NET_ADMIN},
         doctor.FIX_BWRAP_NET_ADMIN),
        ("0.9.0 no caps", BWRAP_NO_SYS_ADMIN, BWRAP_NO_SYS_ADMIN, {"bwrap_error": BWRAP_NO_SYS_ADMIN},
         doctor.FIX_BWRAP_IN_CONTAINER),
        ("0.8.0 all caps", None, None, {"bwrap_error": None}, ""),
    ],
)
def test_bwrap_probe_reads_the_real_messages_of_each_bubblewrap(version, with_size, without_size, facts, fix):
    run, seen = bwrap_answers(with_size, without_size)
    assert doctor.read_bwrap_probe(run) == facts, version
    assert "--size" in seen[0] and all("--size" not in c and "--perms" in c for c in seen[1:])
    m = laptop(euid=0, in_container=True, userns_error="unshare: Operation not permitted", **facts)
    checks = by_name(doctor.check_isolation(m))
    if fix:
        assert checks["bwrap"].fix == fix, version
    else:
        assert checks["bwrap"].status is Severity.OK and checks["isolation"].detail.startswith("available: bwrap")
    if fix == doctor.FIX_BWRAP_NET_ADMIN:
        assert checks["isolation"].detail.startswith("partial: setpriv") and "NET_ADMIN" in checks["isolation"].fix
    if version == "0.6.1 all caps":
        assert checks["isolation"].detail.startswith("available: bwrap")


def test_bwrap_fix_in_a_container_names_every_capability_compose_grants():
    for cap in ("SYS_ADMIN", "NET_ADMIN", "seccomp=unconfined", "apparmor=unconfined"):
        assert cap in doctor.FIX_BWRAP_IN_CONTAINER
    unpriv = laptop(euid=65534, bwrap_error=BWRAP_090_NO_USERNS, userns_error=BWRAP_090_NO_USERNS,
                    sysctls={"kernel/apparmor_restrict_unprivileged_userns": "1"})
    assert "apparmor_restrict_unprivileged_userns=0" in by_name(doctor.check_isolation(unpriv))["bwrap"].fix


def test_user_namespaces_are_not_needed_when_bwrap_runs_as_root():
    check = by_name(doctor.check_isolation(laptop(euid=0, userns_error="unshare: Operation not permitted")))
    assert check["user namespaces"].status is Severity.OK and "not needed" in check["user namespaces"].detail


@pytest.mark.parametrize(
    ("sysctls", "in_container", "fix"),
    [
        ({"user/max_user_namespaces": "0"}, False, "user.max_user_namespaces=15000"),
        ({"kernel/unprivileged_userns_clone": "0"}, False, "kernel.unprivileged_userns_clone=1"),
        ({"kernel/apparmor_restrict_unprivileged_userns": "1"}, False, "apparmor_restrict_unprivileged_userns=0"),
        ({}, True, "--security-opt seccomp=unconfined"),
    ],
)
def test_user_namespace_fix_names_what_blocks_them(sysctls, in_container, fix):
    m = laptop(
        userns_error="unshare failed: Operation not permitted",
        bwrap_error="setting up uid map: denied",
        sysctls=sysctls,
        in_container=in_container,
    )
    checks = by_name(doctor.check_isolation(m))
    assert checks["user namespaces"].status is checks["bwrap"].status is Severity.WARN
    assert fix in checks["user namespaces"].fix and fix in checks["bwrap"].fix


# ---- probes, monkeypatched ---------------------------------------------------------------------------


def test_probe_reads_nvidia_smi(monkeypatch):
    monkeypatch.setattr(doctor.shutil, "which", lambda tool: f"/usr/bin/{tool}")
    monkeypatch.setattr(doctor, "_run", lambda cmd, timeout=20: (0, "NVIDIA H200, 580.82.07\nNVIDIA H200, 580.82.07"))
    assert doctor.probe_nvidia_smi() == {"smi_gpus": ("NVIDIA H200", "NVIDIA H200"), "driver": "580.82.07"}
    monkeypatch.setattr(doctor, "_run", lambda cmd, timeout=20: (9, "NVIDIA-SMI has failed"))
    assert doctor.probe_nvidia_smi() == {}


def test_probe_isolation_runs_bwrap_as_the_grader_and_userns_as_an_unprivileged_user(monkeypatch):
    seen = {}

    def fake_run(cmd, timeout=20):
        seen["bwrap" if "bwrap" in cmd else "unshare"] = cmd
        return (1, "bwrap: Creating new namespace failed: Operation not permitted") if "bwrap" in cmd else (0, "")

    monkeypatch.setattr(doctor, "_run", fake_run)
    monkeypatch.setattr(doctor.os, "geteuid", lambda: 0)
    monkeypatch.setattr(doctor, "gpu_indices", lambda: [0, 2])
    facts = doctor.probe_isolation(ALL_TOOLS)
    assert facts["bwrap_error"] == "bwrap: Creating new namespace failed: Operation not permitted"
    assert facts["userns_error"] is None
    assert seen["bwrap"][0] == "bwrap" and "--unshare-net" in seen["bwrap"]
    assert seen["unshare"][:2] == ["setpriv", f"--reuid={sandbox.PROBE_UID}"], "the sandbox's probe uid, no job's"
    assert sandbox.PROBE_UID not in range(sandbox.UID_BASE, sandbox.UID_BASE + batch.MAX_SLOTS)
    assert facts["gpu_devices"] == ("nvidia0", "nvidia2")


def _fake_probes(monkeypatch, *, gpu: bool) -> None:
    torch_facts = (
        {"torch_version": "2.13.0", "torch_cuda": "13.0", "gpu": H200}
        if gpu
        else {"torch_version": "2.13.0+cpu", "torch_cuda": None}
    )
    smi = {"smi_gpus": ("NVIDIA H200",), "driver": "580.82.07"} if gpu else {}
    monkeypatch.setattr(doctor, "probe_torch", lambda: torch_facts)
    monkeypatch.setattr(doctor, "probe_nvidia_smi", lambda: smi)
    monkeypatch.setattr(doctor, "probe_isolation", lambda tools: {"bwrap_error": None, "userns_error": None})
    monkeypatch.setattr(doctor, "probe_triton_hooks", lambda: "")


@pytest.mark.parametrize("gpu", [False, True])
def test_doctor_with_probes_monkeypatched(monkeypatch, gpu):
    _fake_probes(monkeypatch, gpu=gpu)
    report = doctor.doctor()
    gpu_perf = report.get("tier gpu_perf")
    assert (gpu_perf.status is Severity.OK) == gpu
    assert ("compiled for NVIDIA H200" in report.get("triton mode").detail) == gpu
    assert report.get("triton mode").detail.startswith("interpreted") != gpu


def test_blocking_mode_prints_problem_and_fix_and_exits_1(monkeypatch, capsys):
    monkeypatch.setattr(doctor, "probe_installed", lambda pins: {})
    assert doctor.main(["--blocking"]) == 1
    err = capsys.readouterr().err
    assert "fail  torch" in err and f"fix: {doctor.FIX_ENV}" in err and "grading cannot run here" in err


def test_blocking_mode_is_silent_when_all_is_well(monkeypatch, capsys):
    monkeypatch.setattr(doctor, "probe_installed", lambda pins: {p.name: p.version for p in pins})
    assert doctor.main(["--blocking"]) == 0
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize("module", ["tools/doctor.py", "tools/host.py"])  # host.py: doctor imports it
def test_doctor_module_parses_as_python_3_8(module):
    """A too-old Python must still run the doctor and be told so, not die on a SyntaxError."""
    ast.parse((REPO_ROOT / "grader" / module).read_text(), feature_version=(3, 8))


# ---- end to end --------------------------------------------------------------------------------------


def _line(out: str, name: str) -> str:
    return next(line for line in out.splitlines() if line[8:].startswith(name + " "))


def test_python_m_grader_doctor_on_this_machine():
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "doctor"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    import torch

    if torch.cuda.is_available():
        assert "graded on" in _line(proc.stdout, "tier gpu_perf")
    else:
        assert "interpreted" in _line(proc.stdout, "triton mode")
        assert "pending GPU" in _line(proc.stdout, "tier gpu_perf")
        assert "pending GPU: gpu_perf" in proc.stdout
    isolation = _line(proc.stdout, "isolation")
    assert any(w in isolation for w in ("available", "partial", "not available"))


def test_blocking_doctor_without_site_packages_names_missing_torch():
    """`python -S` hides the environment's packages: the situation `make grade` must explain, not trace back."""
    proc = subprocess.run(
        [sys.executable, "-S", "-m", "grader.tools.doctor", "--blocking"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "fail  torch" in proc.stderr and doctor.FIX_ENV in proc.stderr
    assert "Traceback" not in proc.stderr
