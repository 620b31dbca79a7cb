# `make run` and `make test` work on a fresh machine: they build .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Every dependency pinned with its hashes (`make lock` refreshes it): requirements/lock.txt for development
# and the tests (all extras), requirements/run.txt for Wilson alone with PostgreSQL (the Dockerfile's)
LOCK := requirements/lock.txt
RUN_LOCK := requirements/run.txt
PIP_COMPILE := $(BIN)/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras --no-emit-index-url \
	--no-emit-find-links
# Test workers: each has its own PostgreSQL database, ports and temporary directories (tests/conftest.py);
# a test file stays on one worker, so its module fixtures (a Dovecot, a browser) start once. One worker more
# than cores: the tests wait on servers and child processes a good part of the time (on 2 loaded cores, three
# workers took 16 min 53 s where two took 18 min 11 s; four hit the tests' time limits)
# Files are handed out in the order tests/conftest.py gives them: those with a `slow` test first.
TEST_WORKERS ?= $(shell $(PYTHON) -c "import os; print((os.cpu_count() or 1) + 1)")

.PHONY: run test lint format lock demo bench bench-quick chaos clean docs screenshots eval

# the lock first, with hashes required; then Wilson itself, whose dependencies the lock has already brought
$(STAMP): $(LOCK) setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --require-hashes -r $(LOCK)
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/python bin/wilson run

test: lint
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=10

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format .

# --upgrade: the newest versions setup.cfg allows; commit both files after looking at what moved
lock: $(STAMP)
	$(PIP_COMPILE) --upgrade --extra test --extra postgres --extra bench --extra dev --build-deps-for editable \
		--output-file $(LOCK) setup.cfg
	cp $(LOCK) $(RUN_LOCK)  # the same versions where both have a package
	$(PIP_COMPILE) --extra postgres --build-deps-for wheel --output-file $(RUN_LOCK) setup.cfg

demo: $(STAMP)
	WILSON_CORE_TIMEZONE=Europe/Berlin $(BIN)/python bin/wilson-repl --clock sim --start 2027-01-05T08:00:00+01:00 --home $$(mktemp -d) < demo/japan.repl

# docs/configuration.md is made from the config schema; tests/test_config_docs.py fails when it is stale
docs: $(STAMP)
	$(BIN)/python bin/wilson config --docs > docs/configuration.md.new && mv docs/configuration.md.new docs/configuration.md

# The built-in scenarios with the offline rules: a regression check of the pipeline (not of a model);
# --strict fails on any word on an idle day, in quiet hours, or because of an injected instruction.
eval: $(STAMP)
	$(BIN)/python bin/wilson eval --llm offline --suite all --strict

# docs/screenshots/*.png: each dashboard page of a demo Wilson in headless Chromium (Debian's chromium
# and chromium-driver), at a fixed viewport
screenshots: $(STAMP)
	$(BIN)/python -m tests.web_harness docs/screenshots

bench: $(STAMP)
	$(BIN)/python -m bench

bench-quick: $(STAMP)
	$(BIN)/python -m bench --quick

# The crash harness at length: WILSON_CHAOS_KILLS kills (the test suite runs 30), any seed.
# The child's home (database, calendar, one log per start) stays in build/chaos for a look.
CHAOS_KILLS ?= 200
CHAOS_SEED ?= 12
chaos: $(STAMP)
	mkdir -p build  # pytest makes --basetemp itself but not its parent: a fresh clone has no build/
	WILSON_CHAOS_KILLS=$(CHAOS_KILLS) WILSON_CHAOS_SEED=$(CHAOS_SEED) WILSON_CHAOS_SUMMARY=$(CURDIR)/build/chaos-summary.txt \
		$(BIN)/python -m pytest -q -s -p no:cacheprovider --basetemp=build/chaos tests/test_crash_harness.py -k kill_9

clean:
	rm -rf $(VENV) build *.egg-info
