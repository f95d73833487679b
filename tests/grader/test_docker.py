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

from grader.grading.target import REPO_ROOT
from grader.tools import doctor

DOCKERFILE = REPO_ROOT / "docker" / "Dockerfile"
CI_RUN = REPO_ROOT / ".ci" / "run"
MAKEFILE = REPO_ROOT / "Makefile"
COMPOSE = REPO_ROOT / "docker" / "compose.yaml"
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
    assert re.search(r"^grade:.*\benv\b", text, re.M) and re.search(r"^test:.*\benv\b", text, re.M)
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


def test_base_image_is_nvidia_cuda_of_the_torch_build():
    base = next(i.args for i in dockerfile() if i.keyword == "FROM")
    m = re.fullmatch(r"nvidia/cuda:(\d+\.\d+)\.\d+-(base|runtime|devel)-ubuntu[\d.]+", base)
    assert m, f"base image {base!r}: use an nvidia/cuda:<version>-base-ubuntu<release> tag"
    assert m.group(1) == _cuda_wheel()["cuda"], f"torch's CUDA build is {_cuda_wheel()['cuda']}, base is {m.group(1)}"


def test_image_python_is_the_one_the_pins_are_resolved_for():
    need = "python{}.{}".format(*doctor.required_python())
    ((run, _),) = image_installs()
    assert env_before(run.line).get("PYTHON") == need
    apt = " ".join(i.command() for i in dockerfile() if i.keyword == "RUN" and "apt-get install" in i.command())
    for package in (need, f"{need}-venv", f"{need}-dev", "gcc", "make", "bubblewrap"):
        assert re.search(rf"(?<![\w.-]){re.escape(package)}(?![\w.-])", apt), f"apt-get install {package} is missing"


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
