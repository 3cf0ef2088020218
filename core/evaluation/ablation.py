"""`privet evaluate --ablation`: what each DP-SynRAG stage and generation setting adds, at one ε.

Two tables. ``--ablation-rows text`` (the default): how the documents are written
(``[dp_synrag] text``: the topic line only / private prediction / public realisation /
realisation + private prediction), each with and without co-keywords, from the scale's settings; per
row the retrieval proxy, RAG accuracy, junk rate, MMD² to the held-out non-members next to a
same-size real sample's, distinct-2, mean words and two verbatim samples.

``--ablation-rows settings`` (round 2): the rows switch the settings on one after another, starting from round 1's demo configuration
(the SPEC clip with an empty-document public row, LLM keywords, the most frequent words as
topics, retrieval refinement, a greedy YES/NO self-filter, no co-keywords). Every row is a full DP-SynRAG run
at the same ε, charged to the evaluation's own ledger, and scored on the same held-out
questions: retrieval proxy, RAG accuracy, number of documents, mean words and one sample text.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from core.common.errors import PrivetError
from core.evaluation import quality, runs
from core.evaluation.config import EvaluationConfig
from core.evaluation.data import prepare_data
from core.evaluation.retrieval import VectorIndex
from core.evaluation.utility import score_utility
from core.common.progress import NULL_REPORTER, Reporter

ROUND_ONE: dict[str, Any] = {
    "text": "private",  # the settings table is about private prediction's settings
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


# How the documents are written, each with and without co-keywords.
TEXT_MODES: tuple[tuple[str, str], ...] = (
    ("topic line only", "topic_line"),
    ("private prediction", "private"),
    ("public realisation", "realised"),
    ("realisation + private prediction", "realised+private"),
)
NO_CO_KEYWORDS: dict[str, Any] = {"cluster_keywords": 0, "cluster_keywords_fraction": 0.0}
ROW_KINDS = ("text", "settings")
REFERENCE_DRAWS = 5  # same-size real samples averaged for the reference MMD²


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
    junk_rate: float = float("nan")
    mmd2_to_non_members: float = float("nan")
    real_sample_mmd2: float = float("nan")  # a same-size sample of real member texts, to the same non-members
    distinct_2: float = float("nan")
    samples: list[str] = field(default_factory=list)
    rho_total: float = 0.0


def text_settings() -> list[tuple[str, dict[str, Any]]]:
    """The rows of the text table: every way of writing, with co-keywords, then without."""
    rows = []
    for label, mode in TEXT_MODES:
        rows.append((f"{label}, with co-keywords", {"text": mode}))
        rows.append((f"{label}, no co-keywords", {"text": mode, **NO_CO_KEYWORDS}))
    return rows


def two_samples(texts: Sequence[str]) -> list[str]:
    """Two verbatim samples: the first document and the middle one (no choosing by quality)."""
    if not texts:
        return []
    picks = sorted({0, len(texts) // 2})
    return [texts[i] for i in picks]


def real_sample_mmd2(real_embeddings: np.ndarray, reference: np.ndarray, size: int, draws: int = REFERENCE_DRAWS) -> float:
    """Mean MMD² to ``reference`` of ``draws`` disjoint, evenly spaced samples of ``size`` real texts."""
    if size < 1 or len(real_embeddings) < size:
        return float("nan")
    step = max(1, len(real_embeddings) // size)
    values = [quality.mmd_rbf(real_embeddings[offset::step][:size], reference) for offset in range(min(draws, step))]
    return float(np.mean(values))


def ablation_settings() -> list[tuple[str, dict[str, Any]]]:
    """The cumulative settings of every row."""
    rows, current = [], dict(ROUND_ONE)
    for label, change in STEPS:
        current = {**current, **change}
        rows.append((label, dict(current)))
    return rows


def run_ablation(
    config: EvaluationConfig, work: Path, reporter: Reporter = NULL_REPORTER, rows: str = "text", only: str = "",
    on_row: Callable[[dict], None] | None = None,
) -> dict:
    """Run every ablation row (or those whose label contains ``only``) at the configuration's largest ε.

    ``on_row`` receives the table so far after every row (the CLI saves it, so a long run keeps what it measured)."""
    if rows not in ROW_KINDS:
        raise PrivetError(f"Unknown ablation table {rows!r}.", f"Use one of: {', '.join(ROW_KINDS)}.")
    from core.models.registry import load_embedder, load_language_model

    scale = config.scale
    data = prepare_data(config.dataset, scale.max_members, scale.canaries, scale.benign_questions, 0, work)
    llm = runs.GreedyCache(load_language_model(scale.llm))
    embedder = load_embedder(scale.embedder)
    questions = [q.question for q in data.benign]
    golds = [q.answers for q in data.benign]
    q_emb = embedder.embed(questions)
    eps = config.max_epsilon
    held_emb = embedder.embed([r.text for r in data.non_members])
    member_emb = embedder.embed([r.text for r in data.members])
    table = [(label, settings) for label, settings in (text_settings() if rows == "text" else ablation_settings())
             if only in label]
    if not table:
        raise PrivetError(f"No ablation row matches {only!r}.", "Leave --ablation-only out, or give part of a row's label.")
    instructions = [config.dataset.task]
    out: list[AblationRow] = []
    for i, (label, settings) in enumerate(table):
        ablated = replace(config, scale=replace(scale, dp_synrag=replace(scale.dp_synrag, **settings)))
        started = time.monotonic()
        corpus = runs.generate(ablated, data.members_csv, "dp_synrag", eps, work / f"ablation-{rows}-{i}", llm,
                               embedder, reporter)
        index = VectorIndex.build(corpus.texts, embedder)
        score, _, _ = score_utility(label, index, q_emb, questions, golds, llm, scale.top_k, scale.answer_tokens)
        words = [len(t.split()) for t in corpus.texts]
        synthetic_emb = embedder.embed(corpus.texts) if corpus.texts else np.zeros((0, held_emb.shape[1]))
        out.append(AblationRow(
            label=label,
            settings=settings,
            retrieval_proxy=score.retrieval_hit_rate,
            rag_accuracy=score.answer_accuracy,
            documents=len(corpus.texts),
            mean_words=round(sum(words) / len(words), 1) if words else 0.0,
            sample=max(corpus.texts, key=len) if corpus.texts else "",
            seconds=round(time.monotonic() - started, 1),
            junk_rate=quality.junk_rate(corpus.texts, instructions),
            mmd2_to_non_members=quality.mmd_rbf(synthetic_emb, held_emb),
            real_sample_mmd2=real_sample_mmd2(member_emb, held_emb, len(corpus.texts)),
            distinct_2=quality.distinct_n(corpus.texts, 2),
            samples=two_samples(corpus.texts),
            rho_total=corpus.rho_total,
        ))
        if on_row is not None:
            on_row(_result(config, rows, len(questions), len(data.non_members), out))
    return _result(config, rows, len(questions), len(data.non_members), out)


def _result(config: EvaluationConfig, table: str, questions: int, non_members: int, rows: list[AblationRow]) -> dict:
    return {"dataset": config.dataset.name, "scale": config.scale.name, "epsilon": config.max_epsilon, "table": table,
            "questions": questions, "non_members": non_members, "rows": [r.__dict__ for r in rows]}


def _quote(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ⏎ ")


def _num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None or value != value else f"{value:.{digits}f}"


def ablation_markdown(result: dict) -> str:
    """The ablation table, then every row's two samples (verbatim, one line each)."""
    if result.get("table", "settings") == "text":
        return _text_markdown(result)
    return _settings_markdown(result)


def _text_markdown(result: dict) -> str:
    lines = [
        f"Ablation at ε = {result['epsilon']:g} ({result['dataset']}, scale {result['scale']}, "
        f"{result['questions']} questions, MMD² to {result['non_members']} held-out non-members).",
        "",
        "| how the documents are written | retrieval proxy | RAG accuracy | junk rate | MMD² (same-size real sample) "
        "| distinct-2 | documents | mean words |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['label']} | {_num(r['retrieval_proxy'])} | {r['rag_accuracy']:.2f} | {_num(r['junk_rate'])} | "
            f"{_num(r['mmd2_to_non_members'], 3)} ({_num(r['real_sample_mmd2'], 3)}) | {_num(r['distinct_2'])} | "
            f"{r['documents']} | {r['mean_words']} |"
        )
    lines += ["", "Two verbatim samples per row (the first document and the middle one):", ""]
    for r in result["rows"]:
        for sample in r["samples"] or ["(no documents)"]:
            lines.append(f"- *{r['label']}*: {_quote(sample)}")
    return "\n".join(lines) + "\n"


def _settings_markdown(result: dict) -> str:
    """The round-2 cumulative table (samples quoted verbatim, one line each)."""
    lines = [
        f"Ablation at ε = {result['epsilon']:g} ({result['dataset']}, scale {result['scale']}, "
        f"{result['questions']} questions). Rows are cumulative.",
        "",
        "| settings | retrieval proxy | RAG accuracy | documents | mean words | sample (verbatim) |",
        "|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        sample = _quote(r["sample"])
        proxy = "—" if r["retrieval_proxy"] is None else f"{r['retrieval_proxy']:.2f}"
        lines.append(f"| {r['label']} | {proxy} | {r['rag_accuracy']:.2f} | {r['documents']} | "
                     f"{r['mean_words']} | {sample} |")
    return "\n".join(lines) + "\n"
