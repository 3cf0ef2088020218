#!/usr/bin/env bash
# Build Privet's self-contained Linux bundle and its archive (`make bundle`; GPU=1 for the CUDA build).
#
#   installer/bundle/make_bundle.sh [OUT_DIR]      (default OUT_DIR: dist/)
#
# Needs the project's environment (make setup) plus PyInstaller (installer/requirements-build.txt).
# Writes OUT_DIR/privet/ (the unpacked bundle), OUT_DIR/privet-<version>-linux-x86_64[-cuda].tar.zst
# (.tar.gz when zstd is missing), its .sha256 file and INSTALL.txt. Intermediate files go to
# ${WORK_DIR:-build/pyinstaller}. Both dist/ and build/ are git-ignored.
# LOG_LEVEL=INFO shows PyInstaller's progress (default WARN).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
py=${PYTHON:-$repo/.venv/bin/python}
out=$(mkdir -p "${1:-$repo/dist}" && cd "${1:-$repo/dist}" && pwd)
work=${WORK_DIR:-$repo/build/pyinstaller}
gpu=${GPU:-0}
cd "$repo"

"$py" -c "import PyInstaller" 2>/dev/null || {
  echo "PyInstaller is missing: $py -m pip install -r installer/requirements-build.txt" >&2; exit 1; }
version=$("$py" -c "import core; print(core.__version__)")
flavour=linux-x86_64
[ "$gpu" = 1 ] && flavour=linux-x86_64-cuda
name="privet-$version-$flavour"
bundle="$out/privet"

echo "== PyInstaller (one folder, GPU=$gpu): about 13 min on 2 cores"
rm -rf "$bundle"
GPU=$gpu "$py" -m PyInstaller --noconfirm --clean --log-level "${LOG_LEVEL:-WARN}" \
  --distpath "$out" --workpath "$work" "$here/privet.spec"

echo "== desktop entry, icon, INSTALL.txt"
cp "$here/privet-desktop" "$here/install-desktop-entry.sh" "$here/privet.desktop" "$here/INSTALL.txt" "$bundle/"
cp resources/icons/privet.png "$bundle/privet.png"
chmod 0755 "$bundle/privet-desktop" "$bundle/install-desktop-entry.sh"

echo "== bundle identity (core/install/bundle.py): file manifest and bundle.json"
internal="$bundle/_internal"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo "")
git diff --quiet HEAD 2>/dev/null || commit="${commit}+local-changes"
(cd "$bundle" && find . -type f ! -path ./_internal/bundle.json ! -path ./_internal/bundle-files.sha256 -print0 \
  | LC_ALL=C sort -z | xargs -0 sha256sum) > "$internal/bundle-files.sha256"
content=$(sha256sum "$internal/bundle-files.sha256" | cut -d' ' -f1)
cat > "$internal/bundle.json" <<JSON
{
  "version": "$version",
  "commit": "$commit",
  "built_at": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "platform": "$flavour",
  "content_sha256": "$content"
}
JSON

echo "== archive"
cd "$out"
rm -rf "$name" && mv privet "$name"
if command -v zstd >/dev/null; then
  archive="$name.tar.zst"
  tar -cf - "$name" | zstd -q -T2 -3 -o "$archive" -f
else
  archive="$name.tar.gz"
  echo "zstd not found: writing $archive instead" >&2
  tar -czf "$archive" "$name"
fi
sha256sum "$archive" > "$archive.sha256"
cp "$here/INSTALL.txt" "$out/INSTALL.txt"
mv "$name" privet  # keep dist/privet as the unpacked bundle for local checks
echo "Bundle:  $out/privet ($(du -sh "$out/privet" | cut -f1)), content SHA-256 $content"
echo "Archive: $out/$archive ($(du -h "$archive" | cut -f1)); SHA-256 in $archive.sha256"
