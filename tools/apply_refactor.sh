#!/usr/bin/env bash
# The mechanical part of issue 12, in the order of docs/refactor-plan.md. Run from the repository root
# of a clean checkout of the merged main:   bash tools/apply_refactor.sh [FIRST_STEP [LAST_STEP]]
# Each step edits the tree by name (modules, definitions), commits, and stops at the first failure.
# PY defaults to .venv/bin/python; ruff comes from the same environment. Step 9 (whole-tree ruff format)
# runs only with FORMAT=1.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
RUFF=${RUFF:-$(dirname "$PY")/ruff}
FIRST=${1:-1}
LAST=${2:-10}
R() { "$PY" tools/refactor.py "$@"; }

if [ -n "$(git status --porcelain)" ]; then
  echo "apply_refactor: the working tree has uncommitted changes; commit or stash them first" >&2
  exit 1
fi

tidy() {  # sort imports and drop the ones a move left unused, in the files this step touched
  local files
  files=$(git diff --name-only --diff-filter=AMR HEAD -- '*.py')
  if [ -n "$files" ]; then
    # shellcheck disable=SC2086
    "$RUFF" check --fix --quiet --select I,F401 $files || true
  fi
}

commit() {  # the tree must still import (IMPORT_CHECK=0 skips this), then the step is committed
  [ "${IMPORT_CHECK:-1}" = 0 ] || "$PY" -c "import importlib, pathlib
for p in sorted(pathlib.Path('core').rglob('*.py')):
    importlib.import_module('.'.join(p.with_suffix('').parts).removesuffix('.__init__'))
from core.cli import build_parser; build_parser()"
  git add -A
  git commit -q -m "$1"
  echo "apply_refactor: committed: $1"
}

step() { [ "$1" -ge "$FIRST" ] && [ "$1" -le "$LAST" ]; }

if step 1; then  # core/methods/base.py: Method, MethodContext, SyntheticDoc, PlanSummary
  R move-symbols core.methods.dp_synrag core.methods.base SyntheticDoc MethodContext Charge \
    --doc "What every method shares: the Method protocol, its context and its results (docs/method.md §1.7).

The pipeline drives every method through :class:\`Method\`; a method receives a :class:\`MethodContext\`
(models, the charge callback, checkpoints, test-mode randomness) and returns :class:\`SyntheticDoc\` s.
:class:\`PlanSummary\` is what a run would spend, shown before anything is charged."
  R move-symbols core.pipeline core.methods.base PlanSummary
  R move-symbols core.methods.registry core.methods.base Method COMMON_NOTES _stages_from_events _sampler_descriptions
  R rename-symbol _stages_from_events stages_from_events
  R rename-symbol _sampler_descriptions sampler_descriptions
  R patch method-protocol
  tidy
  commit "Methods: one base module (Method, MethodContext, SyntheticDoc, PlanSummary) - issue 12 step 1"
fi

if step 2; then  # DP-SynRAG and RPSG packages; function-level imports of methods hoisted
  R move-module core.methods.dp_synrag core.methods.dp_synrag.algorithm \
    --package-doc "DP-SynRAG (docs/method.md §2): the algorithm, its vocabulary and its pipeline adapter."
  R move-module core.vocabulary core.methods.dp_synrag.vocabulary
  R move-module core.methods.dp_synrag_guidance core.methods.dp_synrag.guidance
  R move-module core.methods.self_filter core.methods.dp_synrag.self_filter
  R move-symbols core.methods.registry core.methods.dp_synrag.method DPSynRAGMethod dp_synrag_guidance generation_notes \
    --doc "DP-SynRAG behind the pipeline's method interface (plan, run, record, samplers)."
  R move-module core.methods.rpsg core.methods.rpsg.algorithm \
    --package-doc "RPSG (docs/method.md §3): the algorithm, its PII masking and its pipeline adapter."
  R move-module core.methods.rpsg_adapter core.methods.rpsg.method
  R move-module core.pii core.methods.rpsg.pii
  R hoist core/methods/registry.py core/methods/dp_synth.py core/methods/dp_synrag/method.py \
    core/methods/rpsg/method.py core/methods/aug_pe/adapter.py core/methods/base.py core/pipeline.py core/evaluation/runs.py \
    core/evaluation/evaluate.py
  tidy
  commit "Methods: DP-SynRAG and RPSG packages (vocabulary with DP-SynRAG, PII with RPSG); imports at the top - issue 12 steps 2, 5"
fi

if step 3; then  # torch-free accounting: ModelChoice into the run spec (which then imports no model code)
  # The planner keeps reading the run spec's dataclasses: once core.runspec imports neither core.models
  # nor core.methods, that import holds every contract (privacy-no-models, accounting-no-torch).
  R move-symbols core.models.base core.runspec ModelChoice
  R patch models-init
  tidy
  commit "Accounting imports no torch: ModelChoice lives in the run spec - issue 12 step 3"
fi

if step 4; then  # the ledger/export/verify/keys commands leave the certificate package; the record joins it
  R move-module core.certificate.cli core.export_cli
  R move-module core.privacy_record core.certificate.privacy_record
  R hoist core/export_cli.py
  tidy
  commit "Certificate package: no CLI (export/verify/ledger/keys in core/export_cli.py), holds the privacy record - issue 12 step 4"
fi

if step 5; then  # demo-data code out of resources/ (data only there)
  R move-module resources.demo.generate core.demo.generate \
    --package-doc "The public demo corpora: generator and \`privet demo-data\` (data in resources/demo)."
  R move-module resources.demo.cli core.demo.cli
  R move-module resources.vocab.build tools.build_vocab
  # (core/demo/generate.py and tools/build_vocab.py already find their data through core.paths.resources_dir)
  R patch demo-lint
  R patch demo-seed-allowed
  git rm -q resources/demo/__init__.py
  tidy
  commit "Demo-data and word-list code out of resources/ (core/demo, tools/build_vocab.py) - issue 12 step 5"
fi

if step 6; then  # the code cites docs/method.md instead of the external SPEC
  files=$(grep -rl "SPEC §" core desktop resources tests bench docs --include='*.py' --include='*.md' --include='*.txt' \
    | grep -v -e docs/method.md -e docs/refactor-plan.md || true)
  for skip in ${STEP6_SKIP:-}; do  # files someone else is editing now: run step 6 again after their merge
    files=$(printf '%s\n' $files | grep -v -x -F "$skip" || true)
  done
  if [ -n "$files" ]; then
    # shellcheck disable=SC2086
    sed -i 's/SPEC §/docs\/method.md §/g' $files
  fi
  commit "Code cites docs/method.md sections instead of the external specification - issue 12 step 6"
fi

if step 7; then  # the last module cycles: the run spec names its methods, the ledger imports the conversion
  R patch runspec-method-names
  R patch ledger-conversion-top
  R patch importlinter-type-checking
  tidy
  commit "No import cycles: the run spec names its methods itself, the ledger imports the conversion at the top - issue 12 step 7"
fi

if step 9 && [ "${FORMAT:-0}" = 1 ]; then  # whole-tree import sort, pyupgrade and format; rules switched on
  # Opt-in (FORMAT=1): a whole-tree format conflicts with every open branch, so it runs once, on its own.
  "$RUFF" check --fix --quiet --select I,UP,F401,B009,RUF022,SIM905 . || true
  "$RUFF" format --quiet .
  R patch lint-rules-on
  "$RUFF" check .
  commit "Whole tree: ruff import order, pyupgrade and format; I and UP rules on - issue 12 step 9"
fi

if step 10; then  # every import contract, the cycle check and make lint in CI
  R patch contracts-on
  "$RUFF" check --fix --quiet --select F401,I tests/test_import_graph.py
  "$RUFF" check .
  "$(dirname "$PY")/lint-imports"
  "$PY" tools/import_graph.py --check
  commit "CI runs make lint: every import contract and the function-level cycle check - issue 12 step 10"
fi
