"""Membership inference (docs/method.md §5): can an attacker tell the generator's members from non-members?

Members and non-members are real rows of the same demo corpus, split before anything was
generated (``core.evaluation.data``). Given only the released synthetic corpus, three scores
are computed for every candidate record x (higher = "more likely a member"):

* ``nearest_similarity`` — the largest cosine between E(x) and any synthetic document;
* ``loss`` — minus the mean per-token NLL of x under the *target* model: the local LLM with
  the synthetic documents nearest to x in its context (how a released corpus is used: RAG).
  This stands in for "a model adapted on the synthetic corpus" without fine-tuning on a CPU;
* ``reference`` — NLL_ref(x) − NLL_target(x), where the reference is the same LLM with no
  synthetic context: the loss attack calibrated per record (the reference-model attack).

AUC 0.5 = the attacker does no better than chance. Each AUC comes with a percentile
bootstrap 95% confidence interval over the scored records.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np
from sklearn.metrics import roc_auc_score

from core.evaluation.retrieval import VectorIndex
from core.evaluation.scoring import reply_nll
from core.models.base import Embedder, LanguageModel
from core.privacy.randomness import secure_rng

TARGET_PROMPT = "Write one more document in the style of these examples.\n\nExamples:\n{context}"
DOC_CHARS = 500


def roc_auc(labels: Sequence[int], scores: Sequence[float]) -> float:
    """ROC AUC of ``scores`` for labels 1 (member) vs 0 (non-member)."""
    return float(roc_auc_score(np.asarray(labels), np.asarray(scores, dtype=np.float64)))


def bootstrap_auc_ci(
    labels: Sequence[int], scores: Sequence[float], n_boot: int = 1000, level: float = 0.95,
    rng: np.random.Generator | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap CI of the AUC (resamples with both classes present)."""
    y = np.asarray(labels)
    s = np.asarray(scores, dtype=np.float64)
    rng = rng or secure_rng()
    aucs = []
    for _ in range(n_boot):
        idx = rng.integers(0, len(y), size=len(y))
        if y[idx].min() == y[idx].max():
            continue
        aucs.append(roc_auc_score(y[idx], s[idx]))
    alpha = (1.0 - level) / 2.0
    return float(np.quantile(aucs, alpha)), float(np.quantile(aucs, 1.0 - alpha))


@dataclass
class AttackResult:
    attack: str
    auc: float
    ci_low: float
    ci_high: float
    n_members: int
    n_non_members: int

    def to_dict(self) -> dict:
        return asdict(self)


def attack_result(name: str, labels: Sequence[int], scores: Sequence[float]) -> AttackResult:
    lo, hi = bootstrap_auc_ci(labels, scores)
    n_members = int(np.sum(np.asarray(labels) == 1))
    return AttackResult(name, roc_auc(labels, scores), lo, hi, n_members, len(labels) - n_members)


def target_prompts(index: VectorIndex, candidate_embeddings: np.ndarray, k: int) -> list[str]:
    """The target model's prompt for each candidate: its k nearest synthetic documents."""
    prompts = []
    for docs in index.retrieve(candidate_embeddings, k):
        context = "\n".join(f"- {d[:DOC_CHARS]}" for d in docs) if docs else "(none)"
        prompts.append(TARGET_PROMPT.format(context=context))
    return prompts


def reference_nll(llm: LanguageModel, texts: Sequence[str], max_tokens: int = 64) -> np.ndarray:
    """NLL of each text under the reference model (the LLM without any synthetic context)."""
    return reply_nll(llm, [TARGET_PROMPT.format(context="(none)")] * len(texts), texts, max_tokens)


def run_attacks(
    candidates: Sequence[str],
    labels: Sequence[int],
    candidate_embeddings: np.ndarray,
    index: VectorIndex,
    llm: LanguageModel | None,
    ref_nll: np.ndarray | None,
    context_docs: int,
    max_tokens: int = 64,
) -> list[AttackResult]:
    """All attacks against one released corpus (the NLL attacks only when an LLM is given)."""
    results = [attack_result("nearest_similarity", labels, index.nearest_similarity(candidate_embeddings))]
    if llm is not None and ref_nll is not None:
        target = reply_nll(llm, target_prompts(index, candidate_embeddings, context_docs), candidates, max_tokens)
        results.append(attack_result("loss", labels, -target))
        results.append(attack_result("reference", labels, ref_nll - target))
    return results


def embed_candidates(embedder: Embedder, members: Sequence[str], non_members: Sequence[str]):
    texts = list(members) + list(non_members)
    labels = [1] * len(members) + [0] * len(non_members)
    return texts, labels, embedder.embed(texts)
