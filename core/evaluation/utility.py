"""Utility (docs/method.md §5): does retrieval surface the gold answer, and does the RAG answer contain it?

Both are scored on the same questions for every corpus: a synthetic one, the non-private
member corpus, and no retrieval at all (an empty corpus: the LLM answers from its weights).
A hit is a case-insensitive substring match of any gold string, as in the seeds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

from core.evaluation.retrieval import VectorIndex
from core.models.base import LanguageModel
from core.common.prompts import render

NO_DOCUMENTS = "(no documents)"
MAX_DOC_CHARS = 600  # per retrieved document in the prompt


def contains_any(text: str, golds: Sequence[str]) -> bool:
    lowered = text.lower()
    return any(g.lower() in lowered for g in golds if g)


def hit_rate(hits: Sequence[bool]) -> float:
    return sum(map(bool, hits)) / len(hits) if hits else 0.0


def retrieval_hits(retrieved: Sequence[Sequence[str]], golds: Sequence[Sequence[str]]) -> list[bool]:
    """Per question: does any retrieved document contain any gold string?"""
    return [any(contains_any(doc, g) for doc in docs) for docs, g in zip(retrieved, golds)]


def rag_prompt(question: str, documents: Sequence[str]) -> str:
    context = "\n".join(f"- {d[:MAX_DOC_CHARS]}" for d in documents) if documents else NO_DOCUMENTS
    return render("rag_answer", context=context, question=question)


def rag_answers(
    llm: LanguageModel, questions: Sequence[str], retrieved: Sequence[Sequence[str]], max_new_tokens: int,
    batch: int = 8,
) -> list[str]:
    """Greedy answers of the local LLM from the retrieved documents."""
    prompts = [rag_prompt(q, docs) for q, docs in zip(questions, retrieved)]
    answers: list[str] = []
    for start in range(0, len(prompts), batch):
        answers.extend(llm.generate(prompts[start : start + batch], max_new_tokens=max_new_tokens, temperature=0.0))
    return answers


@dataclass
class UtilityScore:
    corpus: str
    n_documents: int
    n_questions: int
    retrieval_hit_rate: float | None  # None for "no retrieval"
    answer_accuracy: float

    def to_dict(self) -> dict:
        return asdict(self)


def score_utility(
    name: str,
    index: VectorIndex | None,
    question_embeddings,
    questions: Sequence[str],
    golds: Sequence[Sequence[str]],
    llm: LanguageModel,
    k: int,
    max_new_tokens: int,
) -> tuple[UtilityScore, list[str], list[list[str]]]:
    """Retrieval proxy and RAG accuracy of one corpus; also returns the answers and retrieved docs."""
    retrieved = index.retrieve(question_embeddings, k) if index is not None else [[] for _ in questions]
    answers = rag_answers(llm, questions, retrieved, max_new_tokens)
    proxy = hit_rate(retrieval_hits(retrieved, golds)) if index is not None else None
    accuracy = hit_rate([contains_any(a, g) for a, g in zip(answers, golds)])
    n_docs = len(index) if index is not None else 0
    return UtilityScore(name, n_docs, len(questions), proxy, accuracy), answers, retrieved
