# Two commands for a newcomer (only python3 needed): `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# CPU-only PyTorch (a plain `pip install torch` pulls a multi-GB CUDA build on Linux).
TORCH_SPEC  ?= torch==2.13.0
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

.PHONY: setup run test bench opensearch clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --retries 1 "$(TORCH_SPEC)" --extra-index-url $(TORCH_INDEX)
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@

run: setup
	$(BIN)/memory serve

test: setup
	$(BIN)/python -m pytest

# A real single-node OpenSearch built from Maven Central (JDK 17 + Maven), as the tests start it; Ctrl-C stops it.
opensearch: setup
	$(BIN)/python -m tests.support.opensearch_node run

bench: setup
	$(BIN)/python bench/summary.py

clean:
	rm -rf $(VENV)
