"""What DP-SynRAG releases on a members file, without writing: the shape's topics and, on the demo clinic, how
well they would retrieve (docs/method.md §2.2, §2.2b, §6.2).

Runs the real method adapter through ``core.evaluation.runs.run_method`` (every stage charged to a throw-away
ledger in ``--work``, noise from OS entropy as in any run), but the writer, the near-duplicate filter, the
junk rule and the self-filter are replaced by writing each document as its bare words (the topic's word, the words merged into
it, its co-keywords). It prints every (merged) topic with its released count and co-keywords, and with
``--retrieval`` (clinic and MovieLens) the evaluation's retrieval proxy on those word lists: the share of the first
``--questions`` held-out questions whose top-k retrieved word lists name the gold condition, and their topic TV
(the evaluation's ``core.evaluation.roles.topic_share_tv`` against the members' texts); with ``--held-out``
(any dataset) the share of held-out texts' common content words the word lists hold (``core.evaluation.coverage``). It isolates what
the released topics allow from how the writer writes them; run it several times, every run is a new noise draw.

    python bench/released_topics.py --dataset clinic --members M.csv --epsilon 10 --work W [--retrieval]
        [--held-out H.csv] [--set K=5 --set documents=40]

``M.csv`` is an evaluation's ``members.csv`` (``privet evaluate`` writes it in its work folder).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's core/, not an installed one

import core.methods.dp_synrag.algorithm as algorithm
from core.evaluation import runs
from core.evaluation.config import make_config
from core.common.paths import resources_dir


class _NoWriter:
    device = "cpu"


def _word_lists(units, shape, selected, topic_counts, spec, plan, ctx, form=None) -> dict[int, str]:
    return {i: " ".join(d.words) for i, d in enumerate(shape.documents)}


def _setting(text: str) -> tuple[str, object]:
    key, _, value = text.partition("=")
    return key.strip(), json.loads(value)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default="clinic")
    ap.add_argument("--members", required=True, type=Path)
    ap.add_argument("--epsilon", type=float, default=10.0)
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--retrieval", action="store_true")
    ap.add_argument("--domain-list", action="store_true", help="with the dataset's public list, as privet evaluate runs by default")
    ap.add_argument("--questions", type=int, default=40)
    ap.add_argument("--held-out", type=Path, default=None,
                    help="a CSV of held-out texts (column text): print the word lists' content-word coverage of it")
    ap.add_argument("--set", action="append", default=[], help="a [dp_synrag] setting, e.g. K=5")
    args = ap.parse_args()

    algorithm.write_texts = _word_lists  # type: ignore[assignment]
    algorithm.drop_near_duplicates = lambda texts: texts  # type: ignore[assignment]
    algorithm.self_filter = lambda texts, *a, **k: texts  # type: ignore[assignment]
    algorithm.without_junk = lambda texts, *a, **k: texts  # type: ignore[assignment]  # a bare word list is "junk"
    work = args.work / time.strftime("%Y%m%dT%H%M%S")
    work.mkdir(parents=True)
    config = make_config(args.dataset, work, "demo", (args.epsilon,), ("dp_synrag",), domain_list=args.domain_list)
    settings = dict(_setting(s) for s in args.set)
    config = replace(config, scale=replace(config.scale, dp_synrag=replace(config.scale.dp_synrag, **settings)))
    spec = runs.run_spec(config, args.members, "dp_synrag", args.epsilon)
    spec = replace(spec, writing=replace(spec.writing, batch_rows=8))
    run = runs.run_method(spec, work, work / "run", _NoWriter(), None)
    shape = json.loads((work / "run" / "checkpoints" / "dp_synrag" / "corpus-shape.json").read_text())["shape"]
    for topic, n in zip(shape["topics"], shape["allocation"]):
        co = ", ".join(f"{w}:{c:.0f}" for w, c in zip(topic["co_keywords"][:8], topic["co_counts"][:8]))
        print(f"{topic['count']:7.1f}  x{n}  {topic['word']}  {topic.get('merged_words') or ''}  | {co}")
    print(f"{len(shape['topics'])} topics, {len(run.documents)} documents")
    if args.retrieval and args.dataset in ("clinic", "movielens"):
        texts = [d.text for d in run.documents]
        print(f"retrieval proxy on the word lists: {_retrieval(config, texts, args.questions):.3f}")
        if args.dataset == "clinic":
            print(f"topic TV of the word lists: {_topic_tv(config, texts, args.members):.3f}")
    if args.held_out is not None:
        print(f"content-word coverage of the word lists: {_coverage([d.text for d in run.documents], args.held_out):.3f}")
    return 0


def _retrieval(config, texts: list[str], n_questions: int) -> float:
    from core.evaluation.retrieval import VectorIndex
    from core.evaluation.utility import hit_rate, retrieval_hits
    from core.models.registry import load_embedder

    path = resources_dir() / "demo" / config.dataset.name / "questions.jsonl"
    kind = config.dataset.benign_kind
    questions = [q for q in map(json.loads, path.read_text().splitlines()) if q["kind"] == kind][:n_questions]
    embedder = load_embedder(config.scale.embedder)
    index = VectorIndex.build(texts, embedder)
    retrieved = index.retrieve(embedder.embed([q["question"] for q in questions]), config.scale.top_k)
    return hit_rate(retrieval_hits(retrieved, [q["answer"] for q in questions]))


def _topic_tv(config, texts: list[str], members: Path) -> float:
    """The evaluation's topic TV (core.evaluation.roles) of the word lists against the members' texts."""
    import csv

    from core.evaluation.roles import clinic_truth, topic_share_tv

    with members.open(newline="", encoding="utf-8") as handle:
        real = [row["text"] for row in csv.DictReader(handle)]
    tv = topic_share_tv(texts, real, clinic_truth(config.dataset.folder / config.dataset.roles_file))
    return float("nan") if tv is None else tv


def _coverage(texts: list[str], held_out: Path) -> float:
    """The evaluation's content-word coverage (core.evaluation.coverage) of the word lists on held-out texts."""
    import csv

    from core.evaluation.coverage import common_content_words, content_word_share

    with held_out.open(newline="", encoding="utf-8") as handle:
        held = [row["text"] for row in csv.DictReader(handle)]
    return content_word_share(texts, common_content_words(held))


if __name__ == "__main__":
    raise SystemExit(main())
