#!/usr/bin/env bash
# One-command GPU check for a site with an NVIDIA GPU:  make gpu-check   (or bench/gpu_check.sh)
#
#  1. installs the CUDA build of torch into the venv if the installed torch cannot see the GPU
#     (offline machines: put the torch wheel in $PRIVET_WHEELS, it is installed from there);
#  2. runs the CUDA-marked tests (pytest -m cuda);
#  3. the engine benchmark on --device cuda in bf16 (engine vs HF generate vs dp-rag-style loop);
#  4. a forced out-of-memory halving on the GPU, and a timed DP-SynRAG run at the seed's defaults
#     on a generated 8,000-note corpus (bench/gpu_check.py).
# Prints one JSON line of figures (also in $OUT_DIR/gpu_check.json). Stops loudly on any error.
# Budget: under 8 minutes on one H200 (the whole check is killed at PRIVET_GPU_CHECK_TIMEOUT s).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
OUT_DIR=${OUT_DIR:-bench/out}
LIMIT=${PRIVET_GPU_CHECK_TIMEOUT:-480}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 QT_QPA_PLATFORM=offscreen RAY_USAGE_STATS_ENABLED=0
mkdir -p "$OUT_DIR"
die() { echo "GPU CHECK FAILED: $*" >&2; exit 1; }
started=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - started) )); }

command -v nvidia-smi >/dev/null || die "nvidia-smi not found: this machine has no NVIDIA driver."
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || die "nvidia-smi cannot see a GPU."
[ -x "$PY" ] || die "$PY not found: run 'make setup' first (or set PY=/path/to/python)."

if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)'; then
  echo "== installing the CUDA build of $TORCH_SPEC"
  if [ -n "${PRIVET_WHEELS:-}" ]; then
    "$PY" -m pip install -q --no-index --find-links "$PRIVET_WHEELS" --force-reinstall --no-deps "$TORCH_SPEC" \
      || die "could not install $TORCH_SPEC from $PRIVET_WHEELS."
  else
    "$PY" -m pip install -q --force-reinstall --no-deps --index-url "${TORCH_INDEX:-https://download.pytorch.org/whl/cu128}" "$TORCH_SPEC" \
      || die "could not install the CUDA build of $TORCH_SPEC (offline? put the wheel in \$PRIVET_WHEELS)."
  fi
  "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
    || die "torch still sees no GPU after installing the CUDA build (driver too old for this CUDA?)."
fi

echo "== CUDA tests"
timeout "$(left)" "$PY" -m pytest -q -m cuda -p no:cacheprovider >"$OUT_DIR/cuda_tests.log" 2>&1 \
  || die "CUDA tests failed (see $OUT_DIR/cuda_tests.log): $(tail -n 1 "$OUT_DIR/cuda_tests.log")"
tests_line=$(tail -n 1 "$OUT_DIR/cuda_tests.log")
echo "$tests_line" | grep -q "passed" || die "no CUDA test ran: $tests_line"
echo "$tests_line" | grep -q "skipped" && die "CUDA tests were skipped (torch sees no GPU?): $tests_line"

echo "== engine benchmark on cuda (bf16)"
timeout "$(left)" "$PY" bench/private_prediction.py --device cuda --groups 32 --rows 16 --tokens 64 \
  --naive-tokens 2 --skip naive,llamacpp --json-out "$OUT_DIR/bench_cuda.json" || die "the engine benchmark failed."

echo "== forced OOM halving and a timed DP-SynRAG run (8,000 units, seed defaults)"
timeout "$(left)" "$PY" bench/gpu_check.py --bench-json "$OUT_DIR/bench_cuda.json" --tests "$tests_line" \
  --json-out "$OUT_DIR/gpu_check.json" | tail -n 1 || die "the OOM halving or the DP-SynRAG run failed (or the check ran past ${LIMIT}s)."
echo "== GPU check passed in $(( $(date +%s) - started )) s; figures in $OUT_DIR/gpu_check.json"
