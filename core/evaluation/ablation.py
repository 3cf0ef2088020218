"""`privet evaluate --ablation`: what each DP-SynRAG generation setting adds, at one ε.

The rows switch the settings on one after another, starting from round 1's demo configuration
(the SPEC clip with an empty-document public row, LLM keywords, the most frequent words as
topics, retrieval refinement, a greedy YES/NO self-filter, no co-keywords). Every row is a full DP-SynRAG run
at the same ε, charged to the evaluation's own ledger, and scored on the same held-out
questions: retrieval proxy, RAG accuracy, number of documents, mean words and one sample text.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from core.evaluation import runs
from core.evaluation.config import EvaluationConfig
from core.evaluation.data import prepare_data
from core.evaluation.retrieval import VectorIndex
from core.evaluation.utility import score_utility
from core.progress import NULL_REPORTER, Reporter

ROUND_ONE: dict[str, Any] = {
    "keywords": "llm",
    "topic_words": "frequent",
    "hist_fraction": 0.0,
    "cluster_keywords": 0,
    "cluster_keywords_fraction": 0.0,
    "refine": True,
    "clip": "spec",
    "public_prompt": "empty",
    "answer_start": "none",
    "public_weight": 1.0,
    "top_k_plus": 0,
    "self_filter": True,
    "self_filter_mode": "answer",
}

# (row label, settings switched on by this row; cumulative)
STEPS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("SPEC clip, empty public row (round 1)", {}),
    ("+ DClip", {"clip": "dclip"}),
    ("+ keyword public row", {"public_prompt": "keyword"}),
    (
        "+ topic words (vocabulary keywords, significant & specific words, histogram share 0.5)",
        {"keywords": "vocabulary", "topic_words": "specific", "hist_fraction": 0.5},
    ),
    ("+ answer starts with the topic, λ = 2, no refinement", {"answer_start": "keyword", "public_weight": 2.0,
                                                             "refine": False}),
    ("+ Top-k+ (k = 50)", {"top_k_plus": 50}),
    ("+ self-filter (similarity to the task)", {"self_filter_mode": "similarity"}),
    (
        "+ co-keywords of each cluster (M = 5, K = 8, histogram and co-keyword shares 0.4 each)",
        {"cluster_keywords": 5, "K": 8, "hist_fraction": 0.4, "cluster_keywords_fraction": 0.4},
    ),
)


@dataclass
class AblationRow:
    label: str
    settings: dict[str, Any]
    retrieval_proxy: float | None
    rag_accuracy: float
    documents: int
    mean_words: float
    sample: str
    seconds: float


def ablation_settings() -> list[tuple[str, dict[str, Any]]]:
    """The cumulative settings of every row."""
    rows, current = [], dict(ROUND_ONE)
    for label, change in STEPS:
        current = {**current, **change}
        rows.append((label, dict(current)))
    return rows


def run_ablation(config: EvaluationConfig, work: Path, reporter: Reporter = NULL_REPORTER) -> dict:
    """Run every ablation row at the configuration's largest ε and score its utility."""
    from core.models.registry import load_embedder, load_language_model

    scale = config.scale
    data = prepare_data(config.dataset, scale.max_members, scale.canaries, scale.benign_questions, 0, work)
    llm = runs.GreedyCache(load_language_model(scale.llm))
    embedder = load_embedder(scale.embedder)
    questions = [q.question for q in data.benign]
    golds = [q.answers for q in data.benign]
    q_emb = embedder.embed(questions)
    eps = config.max_epsilon
    rows: list[AblationRow] = []
    for i, (label, settings) in enumerate(ablation_settings()):
        ablated = replace(config, scale=replace(scale, dp_synrag=replace(scale.dp_synrag, **settings)))
        started = time.monotonic()
        corpus = runs.generate(ablated, data.members_csv, "dp_synrag", eps, work / f"ablation-{i}", llm, embedder,
                               reporter)
        index = VectorIndex.build(corpus.texts, embedder)
        score, _, _ = score_utility(label, index, q_emb, questions, golds, llm, scale.top_k, scale.answer_tokens)
        words = [len(t.split()) for t in corpus.texts]
        rows.append(AblationRow(
            label=label,
            settings=settings,
            retrieval_proxy=score.retrieval_hit_rate,
            rag_accuracy=score.answer_accuracy,
            documents=len(corpus.texts),
            mean_words=round(sum(words) / len(words), 1) if words else 0.0,
            sample=max(corpus.texts, key=len) if corpus.texts else "",
            seconds=round(time.monotonic() - started, 1),
        ))
    return {"dataset": config.dataset.name, "scale": scale.name, "epsilon": eps,
            "questions": len(questions), "rows": [r.__dict__ for r in rows]}


def ablation_markdown(result: dict) -> str:
    """The ablation table (samples quoted verbatim, one line each)."""
    lines = [
        f"Ablation at ε = {result['epsilon']:g} ({result['dataset']}, scale {result['scale']}, "
        f"{result['questions']} questions). Rows are cumulative.",
        "",
        "| settings | retrieval proxy | RAG accuracy | documents | mean words | sample (verbatim) |",
        "|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        sample = r["sample"].replace("|", "\\|").replace("\n", " ⏎ ")
        proxy = "—" if r["retrieval_proxy"] is None else f"{r['retrieval_proxy']:.2f}"
        lines.append(f"| {r['label']} | {proxy} | {r['rag_accuracy']:.2f} | {r['documents']} | "
                     f"{r['mean_words']} | {sample} |")
    return "\n".join(lines) + "\n"
