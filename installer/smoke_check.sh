#!/usr/bin/env bash
# Smoke check of the self-contained bundle on this machine, as a workstation without Python would run it.
#
#   installer/smoke_check.sh ARCHIVE [WORK_DIR]
#
# ARCHIVE is privet-<version>-linux-x86_64.tar.zst (or .tar.gz) from `make bundle`. The check:
#  1. verifies the archive's SHA-256 file (when present) and unpacks it into a clean folder;
#  2. verifies every file against the bundle's manifest (INSTALL.txt step 3);
#  3. runs the bundle with an empty environment, no Python on PATH, a fresh HOME and no network
#     (env -i, a PATH that holds /usr/bin and /bin minus python*, unshare -n):
#     privet --version, privet models, privet run on a tiny spec (demo clinic notes, small R/T/k) with
#     each model backend (llama.cpp, transformers), privet verify on the certificate it exported;
#  4. starts the GUI under Xvfb (still no network), times it to the main window and saves a
#     screenshot: GUI_RUNS times (default 3) with the bundle's files evicted from the page cache
#     first ("cold"), each followed by a start right after ("warm").
# Needs for the check only (not at run time): Xvfb, xdotool, ImageMagick (import), util-linux (unshare;
# as a normal user it uses `unshare -rn`), python3 for the page-cache eviction (skipped without it),
# fincore (util-linux) to show it worked.
# Exit status 0 = every step passed. The transcript goes to stdout; WORK_DIR keeps the files.
set -uo pipefail
archive=$(readlink -f "${1:?usage: smoke_check.sh ARCHIVE [WORK_DIR]}")
work=${2:-$(mktemp -d /tmp/privet-smoke.XXXXXX)}
mkdir -p "$work" && work=$(cd "$work" && pwd)
failures=0
say() { printf '%s\n' "$*"; }
step() { say ""; say "== $*"; }
check() {  # check NAME CMD...: run, show the output, count a failure
  local name=$1; shift
  local t0=$(date +%s.%N)
  "$@"; local rc=$?
  local t1=$(date +%s.%N)
  say "-- $name: exit $rc, $(printf '%.1f' "$(echo "$t1 - $t0" | bc)") s"
  [ $rc -eq 0 ] || failures=$((failures + 1))
  return $rc
}

say "Privet bundle smoke check, $(date -u +%Y-%m-%dT%H:%M:%SZ), on $(uname -srm), $(nproc) CPU cores"
say "archive: $archive ($(du -h "$archive" | cut -f1))"
say "work folder: $work"

step "1. archive checksum and unpack into a clean folder"
if [ -f "$archive.sha256" ]; then
  cd "$(dirname "$archive")" && check "sha256sum -c" sha256sum -c "$(basename "$archive").sha256"
  cd "$work"
fi
rm -rf "$work/unpacked" && mkdir -p "$work/unpacked"
check "unpack" tar -xf "$archive" -C "$work/unpacked"
bundle=$(find "$work/unpacked" -mindepth 1 -maxdepth 1 -type d | head -1)
say "bundle folder: $bundle ($(du -sh "$bundle" | cut -f1), $(find "$bundle" -type f | wc -l) files)"

step "2. every file against the bundle's manifest"
# The manifest's paths are relative to the bundle folder (./privet, ./_internal/...), as INSTALL.txt checks it.
cd "$bundle" && check "sha256sum -c _internal/bundle-files.sha256" sha256sum -c --quiet _internal/bundle-files.sha256
cd "$work"
say "content SHA-256 (sha256 of the manifest): $(sha256sum "$bundle/_internal/bundle-files.sha256" | cut -d' ' -f1)"

step "3. command line: empty environment, no Python on PATH, no network"
# A PATH with everything of /usr/bin and /bin except python*, so nothing can fall back on a system Python.
sysbin="$work/sysbin"; rm -rf "$sysbin"; mkdir -p "$sysbin"
for f in /usr/bin/* /bin/*; do
  case $(basename "$f") in python*|pydoc*|pip*) continue ;; esac
  [ -e "$sysbin/$(basename "$f")" ] || ln -s "$f" "$sysbin/$(basename "$f")"
done
home="$work/home"; rm -rf "$home"; mkdir -p "$home"
netns=(unshare -n); [ "$(id -u)" -eq 0 ] || netns=(unshare -rn)
sandbox() { env -i PATH="$sysbin" HOME="$home" LANG=C.UTF-8 "$@"; }
say "python on the sandbox PATH: $(sandbox sh -c 'command -v python3 python || echo none')"
say "network in the sandbox: $(sandbox "${netns[@]}" sh -c 'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " " | tr "\n" " "') (loopback only, down)"
cd "$bundle"
check "privet --version" sandbox "${netns[@]}" ./privet --version
check "privet models" sandbox "${netns[@]}" ./privet models

# Tiny runs on the demo clinic notes (600 public, invented notes): DP-SynRAG with small R, T, k, once on
# each language-model backend the bundle ships: transformers (torch; what "auto" picks on a CPU) and
# llama.cpp. A run must write at least one synthetic document, so the model really generated text.
demo="$bundle/_internal/resources/demo"
cp "$demo/clinic/notes.csv" "$work/demo_notes.csv"
tiny_run() {  # tiny_run BACKEND RELEASE_FOLDER
  local backend=$1 release=$2 spec="$work/tiny_run_$1.toml" docs
  cat > "$spec" <<TOML
# Smoke check: DP-SynRAG on the demo notes with a tiny setting (a few documents, not a useful corpus).
method = "dp_synrag"
task = "Answer patients' questions about which disease matches their symptoms."

[data]
path = "demo_notes.csv"
text_column = "note"
id_column = "id"
person_column = "patient"

[privacy]
epsilon = 10.0

[llm]
source = "default"
backend = "$backend"
device = "cpu"

[embedder]
source = "default"

[dp_synrag]
K = 2
R = ${SMOKE_R:-2}
L = 1
k = 5
T = ${SMOKE_T:-6}
hist_fraction = 0.3
keywords = "vocabulary"
topic_words = "specific"
refine = false
answer_start = "keyword"
self_filter = false
domain_lists = ["$demo/../vocab/medical_demo_domain.txt"]

[writing]
max_prompt_tokens = 128

[output]
custodian = "Smoke check"
organisation = "Privet bundle smoke check (public demo data)"
irb_protocol = "SMOKE-0001"
TOML
  # (into a file, not a pipe: check counts failures in this shell)
  check "privet run (tiny spec, $backend)" sandbox "${netns[@]}" ./privet run "$spec" --output "$release" --quiet \
    >"$work/run-$backend.txt" 2>&1
  cat "$work/run-$backend.txt"
  docs=$(sed -n 's/^Synthetic documents: \([0-9]*\).*/\1/p' "$work/run-$backend.txt")
  if [ "${docs:-0}" -ge 1 ]; then say "-- $backend wrote $docs synthetic document(s)"
  else say "-- $backend wrote no synthetic document"; failures=$((failures + 1)); fi
}
runs=${SMOKE_RUNS:-1}  # SMOKE_RUNS=0 skips the pipeline runs (to re-time the GUI only): then not a full check
if [ "$runs" = 0 ]; then
  say "-- tiny runs SKIPPED (SMOKE_RUNS=0)"
else
  tiny_run llamacpp "$work/release-llamacpp"
  tiny_run transformers "$work/release"
  say "release: $(ls "$work/release" 2>/dev/null | tr '\n' ' ')"
  cert="$work/release/certificate.json"
  if [ -f "$cert" ]; then
    check "privet verify" sandbox "${netns[@]}" ./privet verify "$work/release"
    say "certificate software section:"
    grep -A 7 '"privet_bundle"' "$cert" | head -8
    grep -q "$(sha256sum "$bundle/_internal/bundle-files.sha256" | cut -d' ' -f1)" "$cert" \
      && say "-- certificate records this bundle's content SHA-256: yes" \
      || { say "-- certificate records this bundle's content SHA-256: NO"; failures=$((failures + 1)); }
  else
    say "-- no certificate found in $work/release"; failures=$((failures + 1))
  fi
fi

step "4. desktop application under Xvfb (no network), time to the main window"
# Start-up time = from launching ./privet gui to the main window ("Privet — private synthetic text")
# being mapped on the X server (xdotool search --onlyvisible --name, polled every 50 ms).
# cold: the bundle's files evicted from the page cache first (posix_fadvise DONTNEED on every file, which
# needs no root; fincore shows how much of the bundle was still cached before and after);
# warm: the next start, files cached. GUI_RUNS (default 3) pairs of cold + warm starts.
display=:97
# -noreset: the server does not regenerate each time its last client (the stopped app, xdotool) leaves
Xvfb $display -screen 0 1280x800x24 -nolisten tcp -noreset >"$work/xvfb.log" 2>&1 &
xvfb=$!
socket=/tmp/.X11-unix/X${display#:}  # the sandbox has its own network namespace: it reaches X through this file
for _ in $(seq 1 100); do [ -S "$socket" ] && break; sleep 0.1; done
x_ready() {  # the X server is still running and its socket is in place
  kill -0 $xvfb 2>/dev/null || { say "-- Xvfb has stopped (log: $work/xvfb.log)"; return 1; }
  [ -S "$socket" ] || { say "-- the X server's socket $socket has gone"; return 1; }
}
cached_mb() {  # MB of the bundle's files in the page cache (fincore, util-linux), or "?" without fincore
  command -v fincore >/dev/null || { echo "?"; return; }
  find "$bundle" -type f -print0 | xargs -0 fincore -b -n -o RES 2>/dev/null \
    | awk '{s += $1} END {printf "%.0f", s / 1048576}'
}
evict() {
  command -v python3 >/dev/null || { say "(python3 missing on the checking machine: cannot evict, 'cold' is not cold)"; return; }
  local before; before=$(cached_mb)
  sync
  python3 - "$bundle" <<'PY'
import os, sys
for root, _, files in os.walk(sys.argv[1]):
    for name in files:
        try:
            fd = os.open(os.path.join(root, name), os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)
        except OSError:
            pass
PY
  say "   page cache: ${before} MB of the bundle cached before eviction, $(cached_mb) MB after"
}
window_shown() { DISPLAY=$display xdotool search --onlyvisible --name "^Privet — " >/dev/null 2>&1; }
cold_times=(); warm_times=()
gui_start() {  # gui_start LABEL RUN
  local label=$1 run=$2 t0 t1 pid found=0 took
  x_ready || { failures=$((failures + 1)); return; }
  t0=$(date +%s.%N)
  # exec: $! is then the application itself (unshare execs it), so the kill below reaches it
  (exec env -i PATH="$sysbin" HOME="$home" LANG=C.UTF-8 DISPLAY=$display "${netns[@]}" ./privet gui) \
    >"$work/gui-$label-$run.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 1200); do  # up to 60 s
    if window_shown; then found=1; break; fi
    kill -0 $pid 2>/dev/null || break
    sleep 0.05
  done
  t1=$(date +%s.%N)
  if [ $found = 1 ]; then
    took=$(printf '%.2f' "$(echo "$t1 - $t0" | bc)")
    say "-- GUI $label start $run: main window shown after $took s"
    if [ "$label" = cold ]; then cold_times+=("$took"); else warm_times+=("$took"); fi
    if [ "$run" = 1 ]; then
      sleep 2
      DISPLAY=$display import -window root "$work/gui-$label.png" && say "   screenshot: $work/gui-$label.png"
    fi
  else
    say "-- GUI $label start $run: NO main window within 60 s (log: $work/gui-$label-$run.log)"; failures=$((failures + 1))
    tail -5 "$work/gui-$label-$run.log"
  fi
  kill $pid 2>/dev/null; wait $pid 2>/dev/null
  for _ in $(seq 1 100); do window_shown || break; sleep 0.05; done  # the window is gone before the next start
  if window_shown; then say "-- GUI $label start $run: the window stayed after the application was stopped"; failures=$((failures + 1)); fi
}
median() { [ $# -gt 0 ] || { echo "-"; return; }; printf '%s\n' "$@" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
if window_shown; then say "-- a Privet window is already on display $display: stop it first"; failures=$((failures + 1)); fi
for run in $(seq 1 "${GUI_RUNS:-3}"); do
  evict
  gui_start cold "$run"
  gui_start warm "$run"
done
say "GUI start-up, main window shown: cold ${cold_times[*]:-none} s (median $(median "${cold_times[@]}")), warm ${warm_times[*]:-none} s (median $(median "${warm_times[@]}"))"
kill $xvfb 2>/dev/null; wait $xvfb 2>/dev/null

say ""
if [ $failures -ne 0 ]; then say "SMOKE CHECK FAILED: $failures step(s)"
elif [ "$runs" = 0 ]; then say "CHECKS PASSED, BUT NOT A FULL SMOKE CHECK (SMOKE_RUNS=0: no pipeline runs)"
else say "SMOKE CHECK PASSED"; fi
exit $((failures > 0))
