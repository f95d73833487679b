"""The GPU image without a Docker engine: one install path with CI, what the image holds and runs, the
instructors' compose file, the pins the CUDA torch needs, and hadolint."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from grader.core.target import REPO_ROOT
from grader.tools import doctor

DOCKERFILE = REPO_ROOT / "docker" / "Dockerfile"
CI_RUN = REPO_ROOT / ".ci" / "run"
MAKEFILE = REPO_ROOT / "Makefile"
COMPOSE = REPO_ROOT / "docker" / "compose.yaml"
DOCKER_README = REPO_ROOT / "docker" / "README.md"
ENTRYPOINT = REPO_ROOT / "docker" / "entrypoint.sh"
IMAGE_CHECK = REPO_ROOT / "docker" / "image_check.sh"
# The Python each base's Ubuntu release installs with apt (its archive, -updates included, 2026-12-06). 22.04's
# python3.11 is the release candidate: torch 2.13 fails on it (sys.get_int_max_str_digits is 3.11-final API).
UBUNTU_PYTHONS = {
    "22.04": {"python3.11": "3.11.0~rc1-1~22.04", "python3.10": "3.10.12-1~22.04"},
    "24.04": {"python3.12": "3.12.3-1ubuntu0.18"},
}
# The capabilities bwrap needs in a container, run as root (docker/image_check.sh proves them in the image):
# SYS_ADMIN for its namespaces and mounts, NET_ADMIN for the private loopback, and the default seccomp and
# AppArmor profiles lifted.
BWRAP_CAPS = {"SYS_ADMIN", "NET_ADMIN"}
BWRAP_SECURITY_OPTS = {"seccomp=unconfined", "apparmor=unconfined"}
INSTALL_FILES = {"Makefile", "requirements.txt", "requirements-gpu.txt"}  # what `make env GPU=1` reads
JUSTIFIED_IGNORES = {"DL3008"}  # apt version pins: see the comment above the pragma in docker/Dockerfile

# What PyPI's torch CUDA wheel for Linux x86_64 requires, from its metadata (2026-11-30):
#   pip install --dry-run --no-deps --ignore-installed --report r.json --only-binary=:all: \
#     --platform manylinux_2_28_x86_64 --python-version 3.11 --target /tmp/t torch==2.13.0
# and the same for the cuda-toolkit release it names (its nvrtc and cudart extras). When the torch pin
# moves, record the new wheel's requirements here: the image cannot install pins that contradict them.
TORCH_CUDA_WHEELS = {
    "2.13.0": {
        "cuda": "13.0",
        "requires": {
            "triton": "==3.7.1",
            "cuda-bindings": ">=13.0.3,<14",
            "nvidia-cuda-nvrtc": "==13.0.88.*",
            "nvidia-cuda-runtime": "==13.0.96.*",
            "nvidia-nvjitlink": ">=13.0.88,<14",
        },
    },
}


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str
    line: int

    def command(self) -> str:
        """The shell command of a RUN or CMD (exec form joined with spaces)."""
        if self.args.startswith("["):
            return " ".join(json.loads(self.args))
        return self.args


def parse_dockerfile(text: str) -> list[Instruction]:
    """Instructions with their continuation lines joined; comments dropped, as Docker's parser does."""
    out: list[Instruction] = []
    parts: list[str] = []
    start = 0
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        start = start or n
        parts.append(line.removesuffix("\\").strip())
        if not line.endswith("\\"):
            keyword, _, args = " ".join(p for p in parts if p).partition(" ")
            out.append(Instruction(keyword.upper(), args.strip(), start))
            parts, start = [], 0
    return out


def simple_commands(script: str) -> list[str]:
    """``a && b; c || d`` -> [a, b, c, d], each with its whitespace normalized."""
    return [" ".join(c.split()) for c in re.split(r"&&|\|\||;|\n", script) if c.strip()]


INSTALL_RE = re.compile(r"\bpip3?\s+install\b|-m\s+pip\s+install\b|^make\b.*\benv\b|\buv\s+(pip|sync)\b|\bconda\b")


def installs(commands: list[str]) -> list[str]:
    return [c for c in commands if INSTALL_RE.search(c)]


def dockerfile() -> list[Instruction]:
    return parse_dockerfile(DOCKERFILE.read_text())


def ci_commands() -> list[str]:
    lines = [line.split("#", 1)[0] for line in CI_RUN.read_text().splitlines()]
    return simple_commands("\n".join(lines))


def image_installs() -> list[tuple[Instruction, str]]:
    return [(i, c) for i in dockerfile() if i.keyword == "RUN" for c in installs(simple_commands(i.command()))]


def env_before(line: int) -> dict[str, str]:
    """The ENV values set by instructions before ``line``."""
    env: dict[str, str] = {}
    for i in dockerfile():
        if i.keyword == "ENV" and i.line < line:
            env.update(kv.split("=", 1) for kv in shlex.split(i.args))
    return env


def requirement_pins() -> dict[str, list[doctor.Pin]]:
    pins: dict[str, list[doctor.Pin]] = {}
    for path in (doctor.REQUIREMENTS, doctor.GPU_REQUIREMENTS):
        for pin in doctor.read_pins(path):
            pins.setdefault(pin.name, []).append(pin)
    return pins


# ---- the parser itself -------------------------------------------------------------------------------


def test_parser_joins_continuations_and_finds_install_commands():
    text = 'FROM x\n# c\nRUN apt-get update \\\n # inner\n && pip install -r r.txt\nCMD ["make", "grade"]\n'
    run, cmd = parse_dockerfile(text)[1:]
    assert (run.keyword, run.line) == ("RUN", 3)
    assert installs(simple_commands(run.command())) == ["pip install -r r.txt"]
    assert cmd.command() == "make grade"
    assert installs(simple_commands("make  env GPU=1; make test && python -m pip install x")) == [
        "make env GPU=1",
        "python -m pip install x",
    ]


# ---- one install path --------------------------------------------------------------------------------


def test_image_installs_with_the_command_ci_runs():
    image = [c for _, c in image_installs()]
    ci = installs(ci_commands())
    assert len(image) == 1, f"docker/Dockerfile must install in one step (`make env`, GPU=1 in ENV), found {image}"
    assert image[0] in ci, (
        f"docker/Dockerfile installs with {image[0]!r}, .ci/run with {ci}: run the image's "
        "install command in CI verbatim, so CI exercises it (GPU extras come from ENV GPU=1)"
    )


def _make_env_dry_run(*args: str) -> list[str]:
    proc = subprocess.run(["make", "-n", "-B", "env", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return installs(simple_commands(proc.stdout))


def test_make_env_installs_the_pins_that_grade_and_test_run_with():
    """`make grade` and `make test` go through `make env`, which installs requirements.txt (+ the GPU extras)."""
    text = MAKEFILE.read_text()
    assert re.search(r"^grade:.*\benv\b", text, re.M)
    assert re.search(r"^test:\n(\t.*\n)*?\t.*\$\(MAKE\).*\benv-instructor\b", text, re.M), "make test installs via env"
    assert re.search(r"^\$\(INSTRUCTOR_STAMP\):.*\|\s*env\b", text, re.M)
    cpu, gpu = _make_env_dry_run(), _make_env_dry_run("GPU=1")
    assert [c.split(" -r ", 1)[1] for c in cpu] == ["requirements.txt"]
    assert [c.split(" -r ", 1)[1] for c in gpu] == ["requirements.txt -r requirements-gpu.txt"]
    for off in ("GPU=0", "GPU=", "GPU=no", "GPU=false"):  # GPU=0 was "set" for make: it installed the GPU extras
        assert [c.split(" -r ", 1)[1] for c in _make_env_dry_run(off)] == ["requirements.txt"], off


def test_image_install_selects_gpu_extras_and_has_what_make_env_reads():
    ((run, _),) = image_installs()
    assert env_before(run.line).get("GPU") == "1", "set ENV GPU=1 before `make env` in docker/Dockerfile"
    copied = {
        Path(src).name
        for i in dockerfile()
        if i.keyword == "COPY" and i.line < run.line
        for src in shlex.split(i.args)[:-1]
        if not src.startswith("--")
    }
    assert copied >= INSTALL_FILES, f"COPY {sorted(INSTALL_FILES - copied)} before `make env` in docker/Dockerfile"


def test_install_stamp_stays_newer_than_the_copied_requirements():
    """The last COPY brings requirements*.txt with the context's mtimes; on a cached install layer (another checkout)
    they were newer than the stamp and `make grade` ran pip in the image, failing for a non-1000 uid (issue 30)."""
    ins = dockerfile()
    (run, _), = image_installs()
    copies = [i for i in ins if i.keyword == "COPY" and i.line > run.line]
    assert copies, "the course is copied after `make env`"
    after = " ".join(i.command() for i in ins if i.keyword == "RUN" and i.line > copies[-1].line)
    assert "touch .venv/.installed-*" in after, "touch the install stamp after the last COPY"


def test_host_venv_stays_out_of_the_build_context():
    """A copied .venv carries an install stamp: `make env` would skip the CUDA install and keep a CPU torch."""
    ignored = {line.strip().strip("/") for line in (REPO_ROOT / ".dockerignore").read_text().splitlines()}
    assert {".venv", ".git"} <= ignored


# ---- what the image is -------------------------------------------------------------------------------


def _cuda_wheel() -> dict:
    torch_pin = next(p.version for p in doctor.read_pins(doctor.REQUIREMENTS) if p.name == "torch")
    assert torch_pin in TORCH_CUDA_WHEELS, (
        f"requirements.txt pins torch=={torch_pin}: record its CUDA wheel's requirements in TORCH_CUDA_WHEELS "
        "(command above it) and move docker/Dockerfile's base image to that CUDA version"
    )
    return TORCH_CUDA_WHEELS[torch_pin]


def base_image() -> str:
    """The FROM image: the default of ``ARG BASE`` where FROM is ``${BASE}``."""
    base = next(i.args for i in dockerfile() if i.keyword == "FROM")
    if base in ("${BASE}", "$BASE"):
        args = [i.args for i in dockerfile() if i.keyword == "ARG"]
        return next(a.split("=", 1)[1] for a in args if a.startswith("BASE="))
    return base


def test_base_is_the_one_build_argument_and_defaults_to_the_real_image():
    """docker/image_check.sh builds the Dockerfile unchanged on a stand-in base: BASE is its only seam."""
    ins = dockerfile()
    assert [i.args.split("=")[0] for i in ins if i.keyword == "ARG"] == ["BASE"]
    assert ins[0].keyword == "ARG" and ins[1].keyword == "FROM" and ins[1].args == "${BASE}"
    assert base_image().startswith("nvidia/cuda:")


def test_base_image_is_nvidia_cuda_of_the_torch_build():
    base = base_image()
    m = re.fullmatch(r"nvidia/cuda:(\d+\.\d+)\.\d+-(base|runtime|devel)-ubuntu[\d.]+", base)
    assert m, f"base image {base!r}: use an nvidia/cuda:<version>-base-ubuntu<release> tag"
    assert m.group(1) == _cuda_wheel()["cuda"], f"torch's CUDA build is {_cuda_wheel()['cuda']}, base is {m.group(1)}"


def _apt_installs() -> str:
    return " ".join(i.command() for i in dockerfile() if i.keyword == "RUN" and "apt-get install" in i.command())


def _installs_package(package: str) -> bool:
    return re.search(rf"(?<![\w.+-]){re.escape(package)}(?![\w.+-])", _apt_installs()) is not None


def test_image_python_is_a_final_release_the_pins_support():
    """The image's `make env` Python: >= requires-python, and a final release in the base's Ubuntu (issue 30: 22.04's
    python3.11 is 3.11.0rc1, on which torch 2.13's dynamo and Adam.step() fail)."""
    ((run, _),) = image_installs()
    python = env_before(run.line).get("PYTHON", "")
    m = re.fullmatch(r"python(\d+)\.(\d+)", python)
    assert m and (int(m.group(1)), int(m.group(2))) >= doctor.required_python(), f"ENV PYTHON={python}"
    release = re.search(r"ubuntu(\d+\.\d+)$", base_image()).group(1)
    shipped = UBUNTU_PYTHONS[release].get(python)
    assert shipped, f"Ubuntu {release} has no {python} package: {sorted(UBUNTU_PYTHONS[release])}"
    assert re.fullmatch(r"\d+\.\d+\.\d+-[\w.~]+", shipped) and "~rc" not in shipped and "~b" not in shipped, (
        f"Ubuntu {release}'s {python} is {shipped}, a pre-release: the pinned wheels need a final Python"
    )
    for package in (python, f"{python}-venv", f"{python}-dev", "gcc", "make", "bubblewrap"):
        assert _installs_package(package), f"apt-get install {package} is missing"


def test_release_candidate_ubuntu_python_would_be_refused():
    """The check above, on the Dockerfile before issue 30: 22.04's python3.11 is a release candidate."""
    shipped = UBUNTU_PYTHONS["22.04"]["python3.11"]
    assert "~rc" in shipped


def test_image_has_gpp_for_the_cuda_cpu_executor():
    """Without a GPU, .cu correctness runs on the CPU executor, compiled with g++ (issue 30: 33 points pending)."""
    assert _installs_package("g++"), "apt-get install g++ in docker/Dockerfile"
    assert "g++" in DOCKER_README.read_text()


def test_image_works_for_any_uid_and_keeps_learner_state_in_the_mount():
    """A host uid other than 1000 runs the image with --user: HOME is writable by any uid, .dripstone/ lives in the
    mounted exercises/ (issue 30: last.json stayed in the container, lost with --rm), the README says --user."""
    ins = dockerfile()
    home = env_before(10**9).get("HOME", "")
    runs = " ".join(i.command() for i in ins if i.keyword == "RUN")
    assert home and re.search(rf"chmod 1?777 {re.escape(home)}\b", runs), f"HOME={home!r} must be writable by any uid"
    assert "ln -s exercises/.dripstone .dripstone" in runs
    entry = json.loads(next(i.args for i in ins if i.keyword == "ENTRYPOINT"))
    assert entry == ["/course/docker/entrypoint.sh"] and ENTRYPOINT.stat().st_mode & 0o111
    script = ENTRYPOINT.read_text()
    assert "mkdir -p /course/exercises/.dripstone" in script and 'exec "$@"' in script
    assert "[ ! -w /course/exercises ]" in script and '--user \\"\\$(id -u):\\$(id -g)\\"' in script, (
        "a uid that cannot write the mount is told to run with --user, not left to a PermissionError"
    )
    readme = DOCKER_README.read_text()
    assert readme.count('--user "$(id -u):$(id -g)"') >= 2


def test_bwrap_capabilities_agree_in_compose_readme_doctor_and_image_check():
    """bwrap's loopback needs NET_ADMIN as well as SYS_ADMIN (issue 30: with SYS_ADMIN alone batch fell back to
    setpriv); the capabilities image_check.sh proves are the ones compose, the README and doctor's fix name."""
    compose = COMPOSE.read_text()
    m = re.search(r"cap_add:\s*\[([^\]]*)\]", compose)
    assert m and {c.strip() for c in m.group(1).split(",")} == BWRAP_CAPS, "docker/compose.yaml cap_add"
    m = re.search(r"security_opt:\s*\[([^\]]*)\]", compose)
    assert m and {c.strip() for c in m.group(1).split(",")} == BWRAP_SECURITY_OPTS
    readme = DOCKER_README.read_text()
    assert "cap_add: [SYS_ADMIN, NET_ADMIN]" in readme
    check = IMAGE_CHECK.read_text()
    batch_caps = re.search(r"BATCH_CAPS=\(([^)]*)\)", check).group(1)
    assert set(re.findall(r"--cap-add (\w+)", batch_caps)) == BWRAP_CAPS
    assert set(re.findall(r"--security-opt (\S+)", batch_caps)) == BWRAP_SECURITY_OPTS
    for cap in BWRAP_CAPS:
        assert f"--cap-add {cap}" in doctor.FIX_BWRAP_IN_CONTAINER


def test_image_check_builds_the_dockerfile_as_docker_would():
    """buildah/podman default to the OCI format, which drops SHELL (pipefail); BASE is the only build argument."""
    text = IMAGE_CHECK.read_text()
    builds = [c for c in simple_commands(text.replace("\\\n", " ")) if re.search(r"\bbuildah\b.*\b(bud|build)\b", c)]
    assert builds, "docker/image_check.sh builds with buildah"
    for cmd in builds:
        assert "--format docker" in cmd and "-f docker/Dockerfile" in cmd
        assert re.findall(r"--build-arg \"?(\w+)=", cmd) == ["BASE"]
    assert "--keyring=" in text and "debootstrap" in text, "the stand-in base's archive is verified with its key"
    assert re.search(r"^image-check:", MAKEFILE.read_text(), re.M) and "docker/image_check.sh" in MAKEFILE.read_text()
    assert "make image-check" in DOCKER_README.read_text()


def test_image_runs_as_non_root_and_grades_by_default():
    ins = dockerfile()
    user = [i.args for i in ins if i.keyword == "USER"][-1]
    assert re.fullmatch(r"[1-9]\d*(:[1-9]\d*)?", user), f"USER {user}: run as a numeric non-root uid"
    assert [i.command() for i in ins if i.keyword == "CMD"][-1] == "make grade"
    assert any(i.keyword == "WORKDIR" and i.args == "/course" for i in ins)


def test_hadolint_ignores_only_justified_rules():
    pragmas = re.findall(r"#\s*hadolint\s+ignore=([\w,]+)", DOCKERFILE.read_text())
    ignored = {rule for p in pragmas for rule in p.split(",")}
    assert ignored <= JUSTIFIED_IGNORES, f"unjustified hadolint ignores: {sorted(ignored - JUSTIFIED_IGNORES)}"
    assert not (REPO_ROOT / ".hadolint.yaml").exists(), "keep ignores inline, beside their justification"


def test_hadolint_passes():
    binary = shutil.which("hadolint") or shutil.which("hadolint", path=str(REPO_ROOT / ".venv" / "bin"))
    if binary is None:
        pytest.skip("hadolint not installed: `make hadolint` installs it (CI runs it before the tests)")
    proc = subprocess.run([binary, str(DOCKERFILE)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# ---- pins the image installs -------------------------------------------------------------------------


def test_gpu_requirements_are_pinned_and_agree_with_requirements_txt():
    lines = [ln.split("#", 1)[0].strip() for ln in doctor.GPU_REQUIREMENTS.read_text().splitlines()]
    loose = [ln for ln in lines if ln and not doctor.PIN_RE.match(ln)]
    assert not loose, f"requirements-gpu.txt: pin these with ==: {loose}"
    for name, pins in requirement_pins().items():
        assert len({p.version for p in pins}) == 1, f"{name} is pinned differently in {[p.source for p in pins]}"


def test_pins_agree_with_what_the_cuda_torch_requires():
    """pip cannot install the image when a pin contradicts the CUDA torch's own requirements."""
    requires = _cuda_wheel()["requires"]
    clashes = [
        f"{p.name}=={p.version} ({p.source}) but torch's CUDA wheel needs {p.name}{requires[p.name]}"
        for pins in requirement_pins().values()
        for p in pins
        if p.name in requires and p.version not in SpecifierSet(requires[p.name])
    ]
    assert not clashes, "\n".join(clashes)


# ---- instructors' compose file -----------------------------------------------------------------------


def test_compose_batch_grades_mounted_submissions_on_a_reserved_gpu():
    yaml = pytest.importorskip("yaml", reason="PyYAML comes with nbgrader; without it compose.yaml is unchecked")
    batch = yaml.safe_load(COMPOSE.read_text())["services"]["batch"]
    assert batch["build"] == {"context": "..", "dockerfile": "docker/Dockerfile"}
    command = batch["command"]
    assert command[:4] == ["python", "-m", "grader", "batch"]
    submissions, out = command[4], command[command.index("--out") + 1]
    mounts = {v.rsplit(":", 2)[1] if v.endswith(":ro") else v.rsplit(":", 1)[1]: v for v in batch["volumes"]}
    assert mounts[submissions].endswith(":ro"), "mount the submissions read-only"
    assert out in mounts and not mounts[out].endswith(":ro")
    device = batch["deploy"]["resources"]["reservations"]["devices"][0]
    assert device["driver"] == "nvidia" and "gpu" in device["capabilities"]
    assert batch["network_mode"] == "none"
    assert batch["user"] == "0:0", "the sandbox needs root in the container to give each submission its own uid"


def test_gpu_batch_grading_is_described_one_way_everywhere():
    """Issue 31: compose.yaml's batch had no --gpus (so its "every tier" comment did not hold), while docker/README,
    BATCH.md and make gpu-check each described the GPU batch otherwise. One command: `batch ... --gpus`."""
    command = re.search(r"^\s*command:\s*(\[.*\])\s*$", COMPOSE.read_text(), re.M)
    assert command and "--gpus" in json.loads(command.group(1)), "compose's batch service grades with --gpus"
    assert "batch /submissions --out /out --gpus" in DOCKER_README.read_text()
    batch_md = (REPO_ROOT / "grader" / "BATCH.md").read_text()
    assert "batch SUBMISSIONS --out OUT --gpus" in batch_md and "compose.yaml" in batch_md
    assert "--gpus" in (REPO_ROOT / ".ci" / "gpu-check").read_text()
