"""Do the roles (docs/method.md §2.4c) change what the documents retrieve? One released draw, written three ways.

Each draw runs the real DP-SynRAG adapter once on the demo clinic's members (every stage charged to a
throw-away ledger in ``--work``, noise from OS entropy), then writes the *same* released topics with the public
writer three times: with the roles and slots (what a run does, ``roles``), with the roles but each typed word
allowed bare outside its slot (``roles_noban``), and with every word untyped (the writer before roles,
``untyped``). Each goes through the near-duplicate filter and the self-filter and is scored on the same held-out
questions with the evaluation's retrieval proxy (a top-k retrieved document names the gold condition), as are
the topics' bare word lists (``words``). The difference within a draw is the writer's alone; the spread across
draws is the noise's.

    python bench/writer_roles.py --work W [--draws 3] [--epsilon 10] [--json-out W/roles.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's core/, not an installed one

import core.methods.dp_synrag.algorithm as algorithm
from core.evaluation import runs
from core.evaluation.config import make_config
from core.evaluation.data import prepare_data
from core.evaluation.retrieval import VectorIndex
from core.evaluation.utility import hit_rate, retrieval_hits
from core.methods.dp_synrag.write.dedup import drop_near_duplicates
from core.methods.dp_synrag.write.drafts import fit_length
from core.methods.dp_synrag.write.public_decoding import writer_generator
import core.methods.dp_synrag.write.realisation as realisation
from core.methods.dp_synrag.write.realisation import WriterSettings, realise, topic_placements
from core.methods.dp_synrag.shape.examples import form_reference
from core.methods.dp_synrag.write.roles import RoleSources
from core.methods.private_prediction.self_filter import self_filter
from core.models.registry import load_embedder, load_language_model

ARMS = ("roles", "roles_noban", "untyped")


_WITH_WORDS = realisation._with_words


def _allowing(placed: set[str]):
    """The writer's ban of refused words, without the typed words of a slot (the ``roles_noban`` arm)."""

    def with_words(tokenizer, guard, words):
        return _WITH_WORDS(tokenizer, guard, [w for w in words if w not in placed])

    return with_words


def _writer_arms(found: dict[str, list[str]]):
    """A ``write_texts`` that writes the released shape in both arms and hands the pipeline the roles arm."""

    def write(units, shape, selected, noisy_counts, spec, plan, ctx, form) -> dict[int, str]:
        topics = list(shape.documents)
        example = form.example
        reference = form_reference(example)
        texts_of: dict[str, dict[int, str]] = {}
        for arm in ARMS:
            roles = RoleSources.of(spec.domain_lists) if arm != "untyped" else None
            placed = {w for p in topic_placements(topics, example, roles) for w in p.placed}
            realisation._with_words = _allowing(placed if arm == "roles_noban" else set())  # type: ignore[assignment]
            drafts = realise(topics, ctx.task, example, ctx.llm, ctx.reporter, WriterSettings(
                spec.realisation_tokens, max_prompt_tokens=ctx.max_prompt_tokens,
                generator=writer_generator(ctx.llm.device, None), roles=roles))
            texts = {r: fit_length(d.text, topics[r].words, shape.words_per_document)
                     for r, d in enumerate(drafts) if d.written}
            kept = self_filter(drop_near_duplicates(texts), ctx, spec.self_filter, spec.self_filter_mode, reference)
            found[arm] = [kept[r] for r in sorted(kept)]
            texts_of[arm] = texts
        found["words"] = [" ".join(t.words) for t in topics]
        return texts_of["roles"]

    return write


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--draws", type=int, default=3)
    ap.add_argument("--epsilon", type=float, default=10.0)
    ap.add_argument("--json-out", type=Path)
    args = ap.parse_args()

    work = args.work / time.strftime("%Y%m%dT%H%M%S")
    work.mkdir(parents=True)
    config = make_config("clinic", work, "demo", (args.epsilon,), ("dp_synrag",), domain_list=False)
    scale = config.scale
    data = prepare_data(config.dataset, scale.max_members, scale.canaries, scale.benign_questions, 0, work)
    llm = runs.GreedyCache(load_language_model(scale.llm))
    embedder = load_embedder(scale.embedder)
    questions = embedder.embed([q.question for q in data.benign])
    golds = [q.answers for q in data.benign]

    def proxy(texts: list[str]) -> float:
        return hit_rate(retrieval_hits(VectorIndex.build(texts, embedder).retrieve(questions, scale.top_k), golds))

    rows = []
    for draw in range(args.draws):
        found: dict[str, list[str]] = {}
        algorithm.write_texts = _writer_arms(found)  # type: ignore[assignment]
        spec = runs.run_spec(config, data.members_csv, "dp_synrag", args.epsilon)
        started = time.monotonic()
        runs.run_method(spec, work / f"draw{draw}", work / f"draw{draw}" / "run", llm, embedder)
        row = {"draw": draw, "seconds": round(time.monotonic() - started, 1),
               **{f"{arm}_documents": len(found[arm]) for arm in (*ARMS, "words")},
               **{f"{arm}_retrieval": round(proxy(found[arm]), 3) for arm in (*ARMS, "words")},
               "samples": {arm: found[arm][:2] for arm in ARMS}}
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "samples"}), flush=True)
    for arm in (*ARMS, "words"):
        values = [r[f"{arm}_retrieval"] for r in rows]
        print(f"{arm}: mean retrieval {sum(values) / len(values):.3f} over {len(values)} draws {values}")
    if args.json_out:
        args.json_out.write_text(json.dumps({"epsilon": args.epsilon, "questions": len(golds), "draws": rows},
                                            indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
