# Two entry points for a fresh machine: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
OUT    ?= runs/demo
export MLFLOW_DISABLE_TELEMETRY := true

.PHONY: install demo test bench bench-test clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	# torch first, pinned: an unpinned torch would pull a multi-GB CUDA build.
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed

demo: install
	bash pipelines/demo.sh $(OUT)

# Lint (ruff), type check (mypy, settings in pyproject.toml), then the tests.
test: install
	$(PY) -m ruff check hydroseq tests benchmarks pipelines experiments
	$(PY) -m mypy
	$(PY) -m pytest -n 2 -q

bench: install
	$(PY) -m experiments.compare

# The tests of benchmarks/ and experiments/ (a --quick comparison among them); `make test` runs only
# the benchmarks' quick runs (tests/benchmarks/).
bench-test: install
	$(PY) -m pytest benchmarks/tests experiments/tests -n 2 -q

clean:
	rm -rf runs mlruns.db mlartifacts .hydroseq_cache .mypy_cache .ruff_cache
