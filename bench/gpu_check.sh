#!/usr/bin/env bash
# The GPU check (docs/bench/gpu.md). Two ways to run it:
#
#   bench/gpu_check.sh --offline-kit [KIT]   on a bare GPU machine with its own Python stack (torch + CUDA,
#       transformers, numpy, scipy, pytest), no package index and no project venv: runs with that machine's
#       python3 ($PY), this checkout and the offline kit (default bench/kit, built beforehand where the project
#       is installed: .venv/bin/python bench/gpu_kit.py --out bench/kit). Installs nothing. Models are
#       random-weight models from public configs (SmolLM2-135M's, a Llama-3.1-8B shape).
#   PRIVET_GPU_CHECK_LLM=/models/my-llm bench/gpu_check.sh --offline-kit   the same steps with the site's own model
#       (a local Hugging Face causal-LM folder with a chat template, loaded in bf16) instead of random weights.
#   bench/gpu_check.sh --offline-kit KIT --cpu-dry-run   the same script on a CPU with tiny shapes
#       (tests/compute/test_gpu_kit.py runs it; CUDA tests are then skipped, not failed).
#
# Steps: 1. the CUDA-marked tests (pytest -m cuda);  2. bench/gpu_check.py: the engine vs HF generate vs a
# DP-RAG-style loop, the forced out-of-memory halving, a timed DP-SynRAG run at the seed's defaults on the
# kit's 8,000-unit corpus, and the realised writer (text = "realised") on the device: its tokens/s against HF
# generate with the same constraints and a timed realise() of 256 topics. Prints ONE JSON line (also
# $OUT_DIR/gpu_check.json). Stops loudly on any error.
# Budget: under 8 minutes on one H200 (everything is killed at PRIVET_GPU_CHECK_TIMEOUT s, default 480).
set -euo pipefail
cd "$(dirname "$0")/.."
MODE="" KIT=bench/kit DRY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --offline-kit) MODE=kit; if [ $# -gt 1 ] && [ "${2#--}" = "$2" ]; then KIT=$2; shift; fi ;;
    --cpu-dry-run) DRY=1 ;;
    *) echo "GPU CHECK FAILED: unknown option '$1' (use --offline-kit [KIT] [--cpu-dry-run])." >&2; exit 2 ;;
  esac
  shift
done
[ "$MODE" = kit ] || { echo "GPU CHECK FAILED: say --offline-kit [KIT] (see the top of $0)." >&2; exit 2; }
PY=${PY:-python3}
OUT_DIR=${OUT_DIR:-bench/out}
LIMIT=${PRIVET_GPU_CHECK_TIMEOUT:-480}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 QT_QPA_PLATFORM=offscreen RAY_USAGE_STATS_ENABLED=0 TOKENIZERS_PARALLELISM=false
mkdir -p "$OUT_DIR"
die() { echo "GPU CHECK FAILED: $*" >&2; exit 1; }
started=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - started) )); }

[ -f "$KIT/kit.json" ] || die "no offline kit in $KIT: build it where the project is installed with '.venv/bin/python bench/gpu_kit.py --out $KIT' and copy it along."
KIT=$(cd "$KIT" && pwd)
export PRIVET_TOKENIZER_DIR="$KIT/tokenizer" PRIVET_ZIPF_TABLE="$KIT/zipf.tsv"  # read by the CUDA tests too
command -v "$PY" >/dev/null || die "$PY not found (set PY=/path/to/python3)."
if [ "$DRY" = 1 ]; then
  DEVICE=cpu SHAPES=tiny
else
  DEVICE=cuda SHAPES=real
  command -v nvidia-smi >/dev/null || die "nvidia-smi not found: this machine has no NVIDIA driver."
  nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv,noheader || die "nvidia-smi cannot see a GPU."
  "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
    || die "torch ($PY) sees no GPU: this machine's torch is not a CUDA build, or its CUDA is newer than the driver."
fi
"$PY" -c 'import torch, transformers, numpy, scipy, pytest' || die "$PY lacks one of torch, transformers, numpy, scipy, pytest."

echo "== CUDA tests" >&2
set +e
timeout "$(left)" "$PY" -m pytest -q -m cuda -p no:cacheprovider tests/compute/test_cuda.py >"$OUT_DIR/cuda_tests.log" 2>&1
rc=$?
set -e
tests_line=$(tail -n 1 "$OUT_DIR/cuda_tests.log")
[ $rc -eq 0 ] || die "CUDA tests failed (see $OUT_DIR/cuda_tests.log): $tests_line"
if [ "$DRY" = 0 ]; then
  echo "$tests_line" | grep -q "passed" || die "no CUDA test ran: $tests_line"
  if echo "$tests_line" | grep -q "skipped"; then die "CUDA tests were skipped (torch sees no GPU?): $tests_line"; fi
fi

echo "== engine benchmark, forced OOM halving, timed DP-SynRAG run, realised writer ($SHAPES shapes on $DEVICE)" >&2
timeout "$(left)" "$PY" bench/gpu_check.py --kit "$KIT" --device "$DEVICE" --shapes "$SHAPES" --tests "$tests_line" \
  ${PRIVET_GPU_CHECK_LLM:+--llm-folder "$PRIVET_GPU_CHECK_LLM"} --json-out "$OUT_DIR/gpu_check.json" >"$OUT_DIR/gpu_check.stdout" \
  || die "bench/gpu_check.py failed or ran past ${LIMIT}s (its error is above; figures so far in $OUT_DIR)."
tail -n 1 "$OUT_DIR/gpu_check.stdout"
echo "== GPU check passed in $(( $(date +%s) - started )) s; figures in $OUT_DIR/gpu_check.json" >&2
