"""Does the synthetic corpus have the demo clinic's shape? (issue 33 items 1, 4, 5; docs/method.md §6.2)

Runs the demo spec (``resources/demo/demo_run.toml``) end to end once per ``--documents`` setting, with OS
entropy, in a throw-away Privet home, and reports for each:

* ``documents``, ``topics`` (after merging) and ``merged`` (topics that took another in), from the run's
  public shape checkpoint;
* ``tv``: the total variation distance between the documents' disease shares and the real patients' disease
  shares (``diseases.json``, the demo generator's public catalogue). A document's disease is the catalogue
  disease whose name or drug it names; a document naming none counts as "none" (a share the real corpus does
  not have, so it adds to the distance);
* ``tv_topics``: the total variation distance between the planned documents' topic shares and the real notes'
  (the notes holding each topic's word, over all topics: what proportional allocation aims at);
* ``planned``, ``tv_planned``: the same over the documents the shape planned (each named by its topic's word
  and sampled co-keywords), before the writer and the near-duplicate filter;
* ``words``: the mean words per document (the real notes' mean beside it).

``--text topic_line`` (the default) writes each document as its released words only, so no writer runs and
tiny models suffice: the shape, not the writing, is measured. ``--text realised`` runs the public writer.

    PRIVET_HOME=$(mktemp -d) nice -n 15 .venv/bin/python bench/corpus_shape.py --documents 0 -1 --llm tiny-random
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core.common.paths import resources_dir  # noqa: E402
from core.specs.runspec import ModelChoice, RunSpec  # noqa: E402

DEMO = resources_dir() / "demo"


def disease_of(text: str, catalogue: Sequence[dict[str, Any]]) -> str:
    """The catalogue disease a document names (its name or its drug), the first one it names, or "none"."""
    lowered = text.lower()
    hits = [(lowered.find(k), d["name"]) for d in catalogue for k in (d["name"], d["drug"]) if k in lowered]
    return min(hits)[1] if hits else "none"


def total_variation(p: dict[str, float], q: dict[str, float]) -> float:
    return 0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in set(p) | set(q))


def measure(documents: int, epsilon: float, llm: str, text: str, length: str) -> dict[str, Any]:
    from core.run.pipeline import run_pipeline

    spec = RunSpec.load(str(DEMO / "demo_run.toml"))
    if llm == "tiny-random":
        spec.llm = spec.embedder = ModelChoice(source="tiny-random")
    spec.privacy.epsilon = epsilon
    spec.dp_synrag.text, spec.dp_synrag.documents, spec.dp_synrag.length = text, documents, length
    spec.dp_synrag.self_filter = False
    catalogue = json.loads((DEMO / "clinic" / "diseases.json").read_text(encoding="utf-8"))["diseases"]
    real = {d["name"]: d["count"] / sum(x["count"] for x in catalogue) for d in catalogue}
    with tempfile.TemporaryDirectory() as out:
        spec.output.folder = out
        result = run_pipeline(spec)
    texts = [json.loads(line)["text"] for line in result.synthetic_path.read_text(encoding="utf-8").splitlines()
             if line.strip()]
    shape = json.loads((result.run_dir / "checkpoints" / "dp_synrag" / "corpus-shape.json").read_text())["shape"]
    found = Counter(disease_of(t, catalogue) for t in texts)
    synthetic = {k: v / max(len(texts), 1) for k, v in found.items()}
    planned_found = Counter(disease_of(" ".join(words), catalogue) for words in shape["documents"])
    planned = {k: v / max(len(shape["documents"]), 1) for k, v in planned_found.items()}
    with open(DEMO / "clinic" / "notes.csv", encoding="utf-8") as fh:
        notes = [row["note"] for row in csv.DictReader(fh)]
    held = [sum(1 for n in notes if any(w in n.lower() for w in (t["word"], *t.get("merged_words", ()))))
            for t in shape["topics"]]  # real notes holding each topic's word(s): an evaluation figure, never exported
    topic_real = {str(i): h / max(sum(held), 1) for i, h in enumerate(held)}
    topic_planned = {str(i): n / max(sum(shape["allocation"]), 1) for i, n in enumerate(shape["allocation"])}
    return {
        "documents_setting": documents,
        "tv_topics": round(total_variation(topic_planned, topic_real), 3), "epsilon": epsilon, "text": text, "length": length,
        "documents": len(texts), "topics": len(shape["topics"]),
        "merged": sum(1 for t in shape["topics"] if len(t["clusters"]) > 1),
        "tv": round(total_variation(synthetic, real), 3), "none_share": round(synthetic.get("none", 0.0), 3),
        "planned": len(shape["documents"]), "tv_planned": round(total_variation(planned, real), 3),
        "none_share_planned": round(planned.get("none", 0.0), 3),
        "merges": [[t["word"], *t["co_keywords"]][:4] for t in shape["topics"] if len(t["clusters"]) > 1][:6],
        "diseases_named": len(set(found) - {"none"}), "diseases_real": len(real),
        "words": round(statistics.mean(len(t.split()) for t in texts), 1) if texts else 0.0,
        "real_words": round(statistics.mean(len(n.split()) for n in notes), 1),
        "allocation": sorted(((t["word"], n) for t, n in zip(shape["topics"], shape["allocation"])),
                             key=lambda x: -x[1])[:8],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, nargs="+", default=[0, -1])
    parser.add_argument("--epsilon", type=float, default=10.0)
    parser.add_argument("--llm", default="tiny-random", help="tiny-random, or default (the packaged models)")
    parser.add_argument("--text", default="topic_line", choices=("topic_line", "realised"))
    parser.add_argument("--length", default="form", choices=("form", "dp", "none"))
    args = parser.parse_args(argv)
    if "PRIVET_HOME" not in os.environ:
        parser.error("set PRIVET_HOME to a throw-away folder (the run charges a ledger)")
    for documents in args.documents:
        print(json.dumps(measure(documents, args.epsilon, args.llm, args.text, args.length)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
