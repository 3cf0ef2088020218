#!/usr/bin/env bash
# Install Privet from this folder with no network: pip --no-index, every wheel hash-checked.
#   bash install_offline.sh PREFIX        (creates a virtual environment in PREFIX)
set -euo pipefail
prefix=${1:?usage: install_offline.sh PREFIX}
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
export PIP_CONFIG_FILE=/dev/null  # only this folder: no site indexes or find-links
"$py" -m venv "$prefix"
"$prefix/bin/pip" install --no-index --no-deps --require-hashes --find-links "$here/wheels" \
  -r "$here/requirements-lock.txt"
"$prefix/bin/privet" models
echo "Installed. Start the application with $prefix/bin/privet-desktop, or run $prefix/bin/privet --help."
