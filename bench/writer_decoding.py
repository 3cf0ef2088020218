"""How the public writer's decoding settings change what it writes. One released draw, written several ways.

Each draw runs the real DP-SynRAG adapter once on a demo corpus's members with the adaptive default (every
stage charged to a throw-away ledger in ``--work``, noise from OS entropy), then writes the *same* released
shape with the public writer under each arm's public decoding constants (temperature, top-p, repetition
penalty, tokens per draft, the echo), through the same length fit, near-duplicate filter and self-filter.
Each arm is scored on:

* ``retrieval``: the evaluation's retrieval proxy on the held-out questions (clinic and MovieLens only);
* ``unsupported``: the share of the documents' content words that no real document of the corpus (members
  and held-out non-members) holds, and that are not released words or words of the form: what the writer
  invented ("HIV", "heroin", "court order" in a clinic of invented conditions);
* ``mmd2``: MMD² in MiniLM space to the held-out non-members; ``junk``; ``words`` (mean per document);
  ``distinct2``; ``content_words``: the share of the held-out documents' 200 commonest content words the
  corpus holds (the evaluation's); ``role_accuracy`` (the demo clinic, whose generator knows each word's role).

An arm's ``echo`` is the echo rule's penalty (``public_decoding.ECHO_PENALTY`` is the default; 0: off).

The difference within a draw is the decoding's alone; the spread across draws is the noise's.

    python bench/writer_decoding.py --work W [--dataset clinic] [--draws 2] [--epsilon 10] [--json-out F]
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's core/, not an installed one

import core.methods.dp_synrag.algorithm as algorithm
import core.methods.dp_synrag.write.realisation as realisation
from core.evaluation import runs
from core.evaluation.config import make_config
from core.evaluation.coverage import common_content_words, content_word_share, content_words
from core.evaluation.data import prepare_data
from core.evaluation.quality import distinct_n, junk_rate, mmd_rbf
from core.evaluation.retrieval import VectorIndex
from core.evaluation.utility import hit_rate, retrieval_hits
from core.methods.dp_synrag.write.dedup import drop_near_duplicates
from core.methods.dp_synrag.write.drafts import fit_length
from core.methods.dp_synrag.write.public_decoding import ECHO_PENALTY, Decoding, public_decode, writer_generator
from core.methods.dp_synrag.write.realisation import WriterSettings, realise
from core.methods.dp_synrag.shape.examples import form_reference, form_words
from core.methods.dp_synrag.write.roles import RoleSources
from core.methods.dp_synrag.shape.corpus_shape import sampled_shape
from core.evaluation.roles import CONDITION, clinic_truth, role_accuracy
from core.methods.private_prediction.self_filter import self_filter
from core.models.registry import load_embedder, load_language_model


@dataclass(frozen=True)
class Arm:
    name: str
    temperature: float
    top_p: float
    repetition_penalty: float
    tokens: int  # 0: the spec's realisation_tokens
    per_unit: bool = False  # documents about the corpus's size (``documents = -1``), allocated by released count
    echo: float = 0.0  # the echo rule's penalty (0: off)


ARMS = {
    "current": Arm("current", 0.8, 0.95, 1.3, 0),
    "calm": Arm("calm", 0.5, 0.9, 1.15, 0),  # the constants of 2026-12-04, without the echo
    "echo": Arm("echo", 0.5, 0.9, 1.15, 0, echo=ECHO_PENALTY),
    "echo_half": Arm("echo_half", 0.5, 0.9, 1.15, 0, echo=ECHO_PENALTY / 2),
    "calm_short": Arm("calm_short", 0.5, 0.9, 1.15, 56),
    "calm_size": Arm("calm_size", 0.5, 0.9, 1.15, 0, per_unit=True),
    "current_size": Arm("current_size", 0.8, 0.95, 1.3, 0, per_unit=True),
}


def _writer_arms(arms: list[Arm], found: dict[str, list[str]]):
    """A ``write_texts`` that writes the released shape once per arm and hands the pipeline the first arm's."""

    def write(units, shape, selected, noisy_counts, spec, plan, ctx, form) -> dict[int, str]:
        topics = list(shape.documents)
        example = form.example
        reference = form_reference(example)
        texts_of: dict[str, dict[int, str]] = {}
        original = realisation.public_greedy
        for arm in arms:
            topics = list((sampled_shape(shape.topics, len(units), ctx) if arm.per_unit else shape).documents)
            realisation.public_greedy = functools.partial(  # type: ignore[assignment]
                public_decode, decoding=Decoding(arm.temperature, arm.top_p), repetition_penalty=arm.repetition_penalty)
            started = time.monotonic()
            try:
                drafts = realise(topics, ctx.task, example, ctx.llm, ctx.reporter, WriterSettings(
                    arm.tokens or spec.realisation_tokens, max_prompt_tokens=ctx.max_prompt_tokens,
                    generator=writer_generator(ctx.llm.device, None), roles=RoleSources.of(spec.domain_lists),
                    echo_penalty=arm.echo, target_words=shape.words_per_document))
            finally:
                realisation.public_greedy = original  # type: ignore[assignment]
            texts = {r: fit_length(d.text, topics[r].words, shape.words_per_document)
                     for r, d in enumerate(drafts) if d.written}
            kept = self_filter(drop_near_duplicates(texts), ctx, spec.self_filter, spec.self_filter_mode, reference)
            found[arm.name] = [kept[r] for r in sorted(kept)]
            found[arm.name + "_seconds"] = [str(round(time.monotonic() - started, 1)), str(len(topics))]
            texts_of[arm.name] = texts
        found["_released"] = sorted({w for t in topics for w in t.words})
        found["_form"] = sorted(form_words(example))
        return texts_of[arms[0].name]

    return write


def unsupported_share(texts: list[str], real_words: set[str], allowed: set[str]) -> float:
    """The share of the texts' content words (with repeats) found in no real document and not allowed."""
    words = [w for t in texts for w in content_words(t)]
    if not words:
        return 0.0
    return sum(1 for w in words if w not in real_words and w not in allowed) / len(words)


def topic_share_tv(texts: list[str], real: list[str], conditions: list[str]) -> float:
    """Total variation between the shares of documents naming each condition (first named; "none" when no
    condition is named) in ``texts`` and in the real ``real`` documents."""
    def shares(docs: list[str]) -> dict[str, float]:
        out: dict[str, float] = {}
        for d in docs:
            low = d.lower()
            hit = min(((low.find(c), c) for c in conditions if c in low), default=(0, "none"))[1]
            out[hit] = out.get(hit, 0.0) + 1.0 / len(docs)
        return out
    p, q = shares(texts), shares(real)
    return 0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in set(p) | set(q))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--dataset", default="clinic")
    ap.add_argument("--draws", type=int, default=2)
    ap.add_argument("--epsilon", type=float, default=10.0)
    ap.add_argument("--arms", default=",".join(ARMS))
    ap.add_argument("--members", type=int, default=0, help="members (0: the demo scale's)")
    ap.add_argument("--json-out", type=Path)
    args = ap.parse_args()
    arms = [ARMS[a] for a in args.arms.split(",")]

    work = args.work / time.strftime("%Y%m%dT%H%M%S")
    work.mkdir(parents=True)
    config = make_config(args.dataset, work, "demo", (args.epsilon,), ("dp_synrag",), domain_list=False,
                         **({"members": args.members} if args.members else {}))
    scale = config.scale
    data = prepare_data(config.dataset, scale.max_members, scale.canaries, scale.benign_questions, 0, work)
    llm = runs.GreedyCache(load_language_model(scale.llm))
    embedder = load_embedder(scale.embedder)
    real_words = {w for r in (*data.members, *data.non_members) for w in content_words(r.text)}
    held = embedder.embed([r.text for r in data.non_members[:200]])
    questions = embedder.embed([q.question for q in data.benign]) if data.benign else None
    golds = [q.answers for q in data.benign]
    truth_file = config.dataset.folder / "diseases.json" if hasattr(config.dataset, "folder") else None
    truth = clinic_truth(truth_file) if truth_file is not None and truth_file.exists() else {}
    conditions = [w.lower() for w, r in truth.items() if r == CONDITION]
    common = common_content_words([r.text for r in data.non_members])

    def scores(texts: list[str], allowed: set[str]) -> dict[str, float | int | None]:
        emb = embedder.embed(texts) if texts else None
        retrieval = (hit_rate(retrieval_hits(VectorIndex.build(texts, embedder).retrieve(questions, scale.top_k), golds))
                     if texts and questions is not None else None)
        return {"documents": len(texts), "retrieval": None if retrieval is None else round(retrieval, 3),
                "unsupported": round(unsupported_share(texts, real_words, allowed), 3),
                "mmd2": None if emb is None else round(mmd_rbf(emb, held), 4),
                "junk": round(junk_rate(texts), 3) if texts else None,
                "words": round(sum(len(t.split()) for t in texts) / max(len(texts), 1), 1),
                "distinct2": round(distinct_n(texts, 2), 3) if texts else None,
                "content_words": round(content_word_share(texts, common), 3),
                "role_accuracy": role_accuracy(texts, truth).accuracy if truth else None,
                "key_terms": round(sum("Key terms:" in t for t in texts) / max(len(texts), 1), 3),
                "topic_tv": round(topic_share_tv(texts, [r.text for r in data.non_members], conditions), 3)
                if texts and conditions else None}

    rows = []
    for draw in range(args.draws):
        found: dict[str, list[str]] = {}
        algorithm.write_texts = _writer_arms(arms, found)  # type: ignore[assignment]
        spec = runs.run_spec(config, data.members_csv, "dp_synrag", args.epsilon)
        started = time.monotonic()
        runs.run_method(spec, work / f"draw{draw}", work / f"draw{draw}" / "run", llm, embedder)
        allowed = {w for x in (*found["_released"], *found["_form"]) for w in content_words(x)}
        row = {"draw": draw, "seconds": round(time.monotonic() - started, 1),
               "arms": {arm.name: {**scores(found[arm.name], allowed), "written": int(found[arm.name + "_seconds"][1]),
                                   "write_seconds": float(found[arm.name + "_seconds"][0])} for arm in arms},
               "samples": {arm.name: found[arm.name][:3] for arm in arms},
               "texts": {arm.name: found[arm.name] for arm in arms}}
        rows.append(row)
        print(json.dumps({"draw": draw, "seconds": row["seconds"], "arms": row["arms"]}), flush=True)
    for arm in arms:
        for key in ("retrieval", "unsupported", "mmd2", "junk", "words", "distinct2", "content_words", "role_accuracy",
                    "topic_tv", "key_terms", "documents", "write_seconds"):
            values = [r["arms"][arm.name][key] for r in rows if r["arms"][arm.name][key] is not None]
            if values:
                print(f"{arm.name:12s} {key:12s} mean {sum(values) / len(values):.3f} {values}")
    if args.json_out:
        args.json_out.write_text(json.dumps({"command": " ".join(sys.argv), "dataset": args.dataset,
                                             "epsilon": args.epsilon, "arms": [a.__dict__ for a in arms],
                                             "draws": rows}, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
