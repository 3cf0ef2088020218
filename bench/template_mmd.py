"""How far one way of writing a corpus is from the corpus, in the evaluation's MMD² (MiniLM space, RBF kernel).

The demo clinic's notes are written in several templates ("Seen today: …", "Follow-up note for …",
"Consultation with …" and others). This script groups the members by their first two words, keeps the groups of at
least ``--least`` notes, and prints the MMD² of each group (real notes, true content, one template) to the held-out
non-members, beside the MMD² of as many members of every template. With ``--synthetic F`` (a JSON Lines release, or
the JSON of ``bench/writer_decoding.py --json-out`` with ``--arm``) it prints that corpus's MMD² to the same held-out
notes too. It reads the shipped demo corpus only and is never part of a run.

    python bench/template_mmd.py [--least 40] [--synthetic F [--arm A]]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's core/, not an installed one

from core.evaluation.quality import mmd_rbf
from core.models.registry import load_embedder
from core.common.paths import resources_dir
from core.specs.common import ModelChoice


def _synthetic(path: Path, arm: str) -> list[str]:
    if path.suffix == ".jsonl":
        return [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return list(json.loads(path.read_text(encoding="utf-8"))["draws"][0]["texts"][arm])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--least", type=int, default=40, help="the fewest notes a template group needs")
    ap.add_argument("--synthetic", type=Path)
    ap.add_argument("--arm", default="echo")
    args = ap.parse_args()
    rows = sorted(csv.DictReader((resources_dir() / "demo" / "clinic" / "notes.csv").open(encoding="utf-8")),
                  key=lambda r: r["id"])
    members = [r["note"] for i, r in enumerate(rows) if i % 3 != 2]  # the evaluation's split (core.evaluation.data)
    held_out = [r["note"] for i, r in enumerate(rows) if i % 3 == 2]
    embedder = load_embedder(ModelChoice(source="default"))
    target = embedder.embed(held_out)
    groups: dict[str, list[str]] = defaultdict(list)
    for note in members:
        groups[" ".join(note.split()[:2])].append(note)
    big = {k: v for k, v in groups.items() if len(v) >= args.least}
    print(f"held-out notes: {len(held_out)}; members: {len(members)} (MMD² grows as a sample shrinks: compare equal sizes)")
    for opening, notes in sorted(big.items(), key=lambda kv: -len(kv[1])):
        one, every = mmd_rbf(embedder.embed(notes), target), mmd_rbf(embedder.embed(members[: len(notes)]), target)
        print(f"one template ({opening!r}, {len(notes)} members): MMD² {one:.4f}; "
              f"as many members of every template: {every:.4f}")
    if args.synthetic:
        texts = _synthetic(args.synthetic, args.arm)
        print(f"synthetic ({len(texts)} documents): MMD² {mmd_rbf(embedder.embed(texts), target):.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
