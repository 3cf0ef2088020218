"""The evaluation's membership attacks (``core.evaluation.membership``) on one DP-SynRAG release of the demo clinic,
with more candidates per side than ``privet evaluate`` scores (30 at the demo scale, where an AUC's standard error
is about 0.075).

The release is read from the run's checkpoints (``realised-*.json``: each document as the writer left it, before the
length fit and the filters, so a few more documents than were exported). Members are the evaluation's
``members.csv``; non-members are the demo clinic's held-out notes (every third note, as ``core.evaluation.data``
splits them). Both are taken evenly spaced, ``--per-class`` of each. Private workspace in, AUCs out; never part of a
run.

    python bench/membership_release.py --run W/runs/dp_synrag_eps10 --members W/members.csv [--per-class 200]
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's core/, not an installed one

from core.evaluation import membership
from core.evaluation.retrieval import VectorIndex
from core.models.registry import load_embedder, load_language_model
from core.common.paths import resources_dir
from core.specs.common import ModelChoice

CONTEXT_DOCS, MIA_TOKENS = 3, 48  # the demo scale's (core.evaluation.config)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", required=True, type=Path, help="the evaluation's run folder (holds checkpoints/)")
    ap.add_argument("--members", required=True, type=Path, help="the evaluation's members.csv")
    ap.add_argument("--per-class", type=int, default=200)
    args = ap.parse_args()
    texts = [json.loads(Path(f).read_text(encoding="utf-8"))["text"]
             for f in glob.glob(str(args.run / "checkpoints" / "realised-*.json"))]
    texts = [t for t in texts if t]
    notes = resources_dir() / "demo" / "clinic" / "notes.csv"
    rows = sorted(csv.DictReader(notes.open(encoding="utf-8")), key=lambda r: r["id"])
    non_members = [r["note"] for i, r in enumerate(rows) if i % 3 == 2]
    members = [r["text"] for r in csv.DictReader(args.members.open(encoding="utf-8"))]
    n = min(args.per_class, len(members), len(non_members))
    members = members[:: max(1, len(members) // n)][:n]
    non_members = non_members[:: max(1, len(non_members) // n)][:n]
    embedder, llm = load_embedder(ModelChoice(source="default")), load_language_model(ModelChoice(source="default"))
    candidates, labels, embedded = membership.embed_candidates(embedder, members, non_members)
    reference = membership.reference_nll(llm, candidates, MIA_TOKENS)
    index = VectorIndex.build(texts, embedder)
    print(f"release: {len(texts)} documents; {len(members)} members against {len(non_members)} non-members")
    for attack in membership.run_attacks(candidates, labels, embedded, index, llm, reference, CONTEXT_DOCS, MIA_TOKENS):
        result = attack.to_dict()
        print(f"{result['attack']:20s} AUC {result['auc']:.3f} [{result['ci_low']:.3f}, {result['ci_high']:.3f}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
