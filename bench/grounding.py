"""Grounding of finished runs (issue 56, item 4; core/evaluation/grounding.py): the share of documents holding a
content term no released word of their topic supports, and the share mixing the catalogue's conditions.

Reads each run folder's synthetic documents and released values (its checkpoints) and the demo generator's public
catalogue (``diseases.json`` of ``privet demo-data``), and writes one JSON row per run (figures and the synthetic
corpus's own most frequent unsupported terms; no private text)::

    .venv/bin/python bench/grounding.py RUN_DIR [RUN_DIR ...] --catalogue FOLDER/diseases.json --out F.json

A run folder is under ``$PRIVET_HOME/runs/`` (``privet run`` prints it).
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dirs", type=Path, nargs="+")
    parser.add_argument("--catalogue", type=Path, required=True, help="the demo file's diseases.json")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    from core.evaluation.grounding import catalogue_conditions, grounding, read_release

    conditions = catalogue_conditions(args.catalogue)
    rows = []
    for run_dir in args.run_dirs:
        with (run_dir / "synthetic.csv").open(encoding="utf-8", newline="") as f:
            texts = [row["text"] for row in csv.DictReader(f)]
        score = grounding(texts, read_release(run_dir), conditions)
        rows.append({"run": run_dir.name, "catalogue": str(args.catalogue), **score.to_dict()})
        print(f"{run_dir.name}: unsupported {rows[-1]['unsupported_share']}, mix {rows[-1]['mix_share']}")
    args.out.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
