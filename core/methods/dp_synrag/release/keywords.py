"""Step 1a (docs/method.md §2.1): each unit's keyword set, at most K entries of the public vocabulary V.
"""

from __future__ import annotations

from typing import Sequence

from core.corpus import Unit
from core.methods.base import MethodContext
from core.methods.compute_backend import UnitWork
from core.common.links import without_links
from core.methods.dp_synrag.vocab.vocabulary import Vocabulary, postprocess_keywords, specific_entries
from core.models.base import LanguageModel
from core.common.progress import StageProgress
from core.common.prompts import render


def extract_keywords(
    units: Sequence[Unit], llm: LanguageModel, vocab: Vocabulary, K: int, ctx: MethodContext, extractor: str = "llm",
    form: frozenset[str] = frozenset(),
) -> list[list[str]]:
    """Per-unit keyword sets: at most K entries of the public V, each from its own unit only.

    ``"llm"`` (the paper): the LLM lists K keywords (greedy decoding, so a resumed run recomputes
    the same sets), post-processed against V. ``"vocabulary"``: the K entries of V in the unit's
    text with the highest TF-IDF, IDF from public English frequencies
    (:func:`core.methods.dp_synrag.vocab.vocabulary.specific_entries`); no model call, and robust with small models,
    which tend to echo the document instead of listing keywords. Either way the document form's public words
    (``form``) are never keywords.
    """
    if extractor not in ("vocabulary", "llm"):
        raise ValueError(f"unknown keyword extractor {extractor!r}")
    progress = StageProgress(ctx.reporter, "keywords", len(units)).start("Finding each document's keywords")
    keywords: list[list[str]] = []
    if extractor == "vocabulary":
        for unit in units:
            keywords.append(specific_entries(unit.text, vocab, K, form))
            progress.advance(1)
    else:
        prompts = [render("keywords", K=K, document=_truncate(without_links(u.text))) for u in units]
        answers = generate_greedy(prompts, llm, ctx.compute.unit_work, 6 * K + 4, progress)
        keywords = [postprocess_keywords(a, vocab, K, form) for a in answers]
    progress.finish()
    return keywords


def generate_greedy(
    messages: Sequence[str],
    llm: LanguageModel,
    unit_work: UnitWork,
    max_new_tokens: int,
    progress: StageProgress,
    batch: int = 16,  # decoding is memory-bound: wider batches cost little more per step
) -> list[str]:
    """Greedy answers, ``batch`` messages per model call: here, or sharded over compute workers
    (``core.compute``) in the same batches, so with the same answers."""
    return unit_work.generate(llm, messages, max_new_tokens, batch, progress)


def _truncate(text: str, limit: int = 2000) -> str:
    return text[:limit]
