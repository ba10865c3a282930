# Entry points for a fresh machine: `make demo` (minutes), `make demo-full` and `make test` (see README.md).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
OUT    ?= runs/demo
export MLFLOW_DISABLE_TELEMETRY := true

.PHONY: install install-test browser image-tools image demo demo-full test test-images test-all bench bench-test clean

# The runtime package: the train extra (training, evaluation, export; it holds the forecast extra).
$(VENV)/.installed-runtime: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	# torch first, pinned: an unpinned torch would pull a multi-GB CUDA build.
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[train]'
	touch $@

# ... plus the test tools (pytest, hypothesis, ruff, mypy, hadolint, compliance-checker, playwright), the
# headless browser the page tests drive (Debian's Chromium) and the image tests' buildah and podman, each
# installed where it is missing (as root, or with sudo).
$(VENV)/.installed-test: $(VENV)/.installed-runtime
	$(PIP) install --quiet -e '.[test]'
	command -v chromium >/dev/null 2>&1 || $(MAKE) --no-print-directory browser
	(for tool in buildah podman runc mmdebstrap; do command -v $$tool >/dev/null 2>&1 || exit 1; done) \
		|| $(MAKE) --no-print-directory image-tools
	touch $@

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	$(SUDO) apt-get install -y -qq chromium chromium-driver >/dev/null \
		|| ($(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium chromium-driver >/dev/null)

# The tools the image tests build and run the images with (tests/images), from Debian's packages: buildah and
# podman, runc (crun refuses a host with cgroups v1 and v2 side by side) and mmdebstrap (the stand-in bases).
image-tools:
	$(SUDO) apt-get install -y -qq buildah podman runc mmdebstrap >/dev/null \
		|| ($(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq buildah podman runc mmdebstrap >/dev/null)

# Both Dockerfile targets, hydroseq-forecast:VERSION and hydroseq:VERSION, with docker, podman or buildah;
# BASE=local builds them on stand-ins made from Debian's packages where the registry cannot be reached;
# TARGETS=forecast (or train) builds that one alone.
BASE ?= registry
TARGETS ?= all
image:
	bash images/build.sh $(BASE) $(TARGETS)

install: $(VENV)/.installed-runtime

install-test: $(VENV)/.installed-test

# ingest, a short training, evaluate, export, forecast and a scored hindcast (steps 1-5 of demo.sh)
demo: install
	bash pipelines/demo.sh --quick $(OUT)

# the same with the 40-epoch demo model, the shipped base model and a model with weather-forecast inputs
demo-full: install
	bash pipelines/demo.sh $(OUT)

# Lint (ruff), type check (mypy, settings in pyproject.toml), then the tests (CI): all but the cases marked
# `exhaustive` or `images`; of the image suite it runs the smoke test (`image_smoke`: the forecast target built
# alone, the bundled basins forecast in it) and the container-store check. test-images: the whole image suite
# (tests/images, both targets), to run before a change to the Dockerfile or images/ lands. test-all: everything,
# the `exhaustive` cases (more kill points and resumes of behaviours `make test` checks) and the images too.
test: install-test
	$(PY) -m ruff check hydroseq tests benchmarks pipelines experiments examples
	$(PY) -m mypy
	HYDROSEQ_REQUIRE_BROWSER=1 HYDROSEQ_REQUIRE_IMAGES=1 $(PY) -m pytest -n 2 -q -m "not exhaustive and not images"

test-images: install-test
	HYDROSEQ_REQUIRE_IMAGES=1 $(PY) -m pytest tests/images -n 2 -q -m "slow or not slow"

test-all: install-test
	HYDROSEQ_REQUIRE_BROWSER=1 HYDROSEQ_REQUIRE_IMAGES=1 $(PY) -m pytest -n 2 -q -m "slow or not slow"

bench: install-test
	$(PY) -m experiments.compare

# The tests of benchmarks/ and experiments/ (a --quick comparison among them); `make test` runs only
# the benchmarks' quick runs (tests/benchmarks/).
bench-test: install-test
	$(PY) -m pytest benchmarks/tests experiments/tests -n 2 -q -m "slow or not slow"

clean:
	rm -rf runs mlruns.db mlartifacts .hydroseq_cache .mypy_cache .ruff_cache
