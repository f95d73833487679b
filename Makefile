# Dripstone: `make grade` grades exercises/, `make test` proves the course.
# Both create the pinned environment in .venv first if it is missing (one install path: CI and the
# docker image run `make env` too).

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cksum < requirements.txt | cut -d' ' -f1)

L      ?=
TARGET ?= exercises
GRADE_ARGS := --target $(TARGET) $(if $(L),--unit $(L)) $(if $(E),--exercise $(E)) $(ARGS)

.PHONY: env grade test stubs check-stubs lint bench clean-env help

help:
	@echo "make grade [L=23] [E=softmax_fused] [TARGET=dir]   grade your work (exercises/ by default)"
	@echo "make test                                          prove the course: engine, solutions, stubs, known-wrong"
	@echo "make stubs                                         regenerate exercises/ from solutions/"
	@echo "make env                                           create the pinned environment in $(VENV)"

env: $(STAMP)

$(STAMP): requirements.txt
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is required, found " + sys.version.split()[0]' \
	  || { echo "install Python 3.11 or newer, or run: make PYTHON=/path/to/python3.11"; exit 1; }
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@rm -f $(VENV)/.installed-* && touch $@

grade: env
	@$(PY) -m grader grade $(GRADE_ARGS)

test: env
	$(PY) -m grader stubs --check
	$(PY) -m ruff check grader tests solutions kernels_ref
	$(PY) -m pytest -q $(ARGS)

stubs: env
	$(PY) -m grader stubs

lint: env
	$(PY) -m ruff check grader tests solutions kernels_ref
	$(PY) -m ruff format --check grader

clean-env:
	rm -rf $(VENV)
