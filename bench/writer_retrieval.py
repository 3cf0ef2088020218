"""What the writer makes of one release: DP-SynRAG run on an evaluation's members with the real writer, scored with
the evaluation's retrieval proxy, role accuracy and own-form share (demo clinic), so that writer draws on the same
release can be compared (docs/results/history.md, "Round 5, session 8").

The first call runs the whole method (every stage charged to a throw-away ledger in the run folder, noise from OS
entropy); ``--reuse RUN`` runs it again on that folder, whose checkpointed release is read back and not drawn again,
so only the writer draws anew. ``--shipped`` writes in the shipped form instead of the released forms;
``--no-complaint`` leaves a form's complaint slot to the writer's own words (``slot_fillers.symptom_slot``)::

    .venv/bin/python bench/writer_retrieval.py --members M.csv --work W [--epsilon 10] [--reuse W/RUN] [--tag T]
        [--shipped] [--no-complaint]

``M.csv`` is an evaluation's ``members.csv`` (``privet evaluate`` writes it in its work folder). Writes the documents
(``docs-T.json``) and each question's retrieval (``retrieval-T.json``) in the run folder: evaluation only.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's core/, not an installed one


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--members", type=Path, required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--epsilon", type=float, default=10.0)
    ap.add_argument("--reuse", type=Path, help="a run folder of an earlier call: its release is reused")
    ap.add_argument("--tag", default="draw")
    ap.add_argument("--shipped", action="store_true", help="write in the shipped form, not the released forms")
    ap.add_argument("--no-complaint", action="store_true", help="no complaint slot (the writer before session 8)")
    args = ap.parse_args()

    import core.methods.dp_synrag.algorithm as algorithm
    import core.methods.dp_synrag.write.form_writer as form_writer
    from core.common.paths import resources_dir
    from core.evaluation import roles, runs
    from core.evaluation.config import make_config
    from core.evaluation.own_form import own_form_share
    from core.evaluation.retrieval import VectorIndex
    from core.evaluation.utility import hit_rate, retrieval_hits
    from core.models.registry import load_embedder, load_language_model

    if args.shipped:
        algorithm.follows_forms = lambda *a, **k: False  # type: ignore[assignment]
    if args.no_complaint:
        form_writer.symptom_slot = lambda *a, **k: -1  # type: ignore[assignment]
    work = args.reuse or args.work / time.strftime("%Y%m%dT%H%M%S")
    work.mkdir(parents=True, exist_ok=True)
    config = make_config("clinic", work, "demo", (args.epsilon,), ("dp_synrag",), domain_list=False)
    spec = runs.run_spec(config, args.members, "dp_synrag", args.epsilon)
    llm, embedder = runs.GreedyCache(load_language_model(config.scale.llm)), load_embedder(config.scale.embedder)
    started = time.monotonic()
    docs = [d.text for d in runs.run_method(spec, work, work / "run", llm, embedder).documents]
    seconds = time.monotonic() - started
    path = resources_dir() / "demo" / "clinic" / "questions.jsonl"
    questions = [q for q in map(json.loads, path.read_text().splitlines())
                 if q["kind"] == config.dataset.benign_kind][:40]
    index = VectorIndex.build(docs, embedder)
    retrieved = index.retrieve(embedder.embed([q["question"] for q in questions]), config.scale.top_k)
    hits = retrieval_hits(retrieved, [q["answer"] for q in questions])
    truth = roles.clinic_truth(config.dataset.folder / config.dataset.roles_file)
    role = roles.role_accuracy(docs, truth).to_dict()["role_accuracy"]
    own = own_form_share(docs, config.dataset.templates() or [])
    (work / f"docs-{args.tag}.json").write_text(json.dumps(docs, indent=1))
    (work / f"retrieval-{args.tag}.json").write_text(json.dumps(
        [{"question": q["question"], "gold": q["answer"], "hit": h, "retrieved": r}
         for q, h, r in zip(questions, hits, retrieved)], indent=1))
    print(f"{args.tag}: {len(docs)} documents in {seconds:.0f} s, retrieval {hit_rate(hits):.3f}, "
          f"role accuracy {role:.2f}, own forms {own or 0.0:.2f}; run folder {work}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
