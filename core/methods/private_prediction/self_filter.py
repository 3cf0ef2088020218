"""The self-filter of DP-SynRAG (docs/method.md §2.5): keep synthetic texts useful for the task.

It reads only synthetic text and public text, so it is post-processing and costs no budget.
Three ways to judge a text, chosen by ``[dp_synrag] self_filter_mode``:

* ``"score"`` (default): one teacher-forced forward pass of the YES/NO question; the text's
  score is log P(yes) − log P(no) at the answer's first token. A small model's *greedy* answer
  is near chance, but the margin still orders texts. The keep threshold is calibrated on
  **public** text only: the same score of shipped off-topic sentences
  (``resources/prompts/self_filter_offtopic.txt``); a text is kept when it scores above
  ``OFFTOPIC_QUANTILE`` of them.
* ``"similarity"``: the embedder's cosine between the text and the public task description,
  with the threshold calibrated the same way on the off-topic sentences.
* ``"answer"``: the greedy YES/NO answer (docs/method.md §2.5; fine for large models).

A filter that cannot tell this task's documents from the off-topic sentences keeps every text. The
check is public: a **reference** (the shipped demonstration of the document form, or the custodian's
invented example without its placeholders) is judged like a synthetic text; when it does not clear the
threshold, the task is too broad for the calibration sentences (a news corpus: "The football match ended in
a draw" is on topic) and filtering would drop real-looking documents at random (measured: the similarity
filter kept 26 % of 300 real news articles, 100 % of real clinic notes and MovieLens profiles).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np
import torch

from core.models.base import Embedder, LanguageModel
from core.common.progress import ProgressEvent, Reporter, StageProgress
from core.common.prompts import render, template

if TYPE_CHECKING:  # an annotation only: the context (core.methods.base) holds the local engine
    from core.methods.base import MethodContext

MODES = ("score", "similarity", "answer")
OFFTOPIC_QUANTILE = 0.9  # keep a text only if it beats 90% of the public off-topic sentences
_YES = ("YES", "Yes", "yes", " YES", " Yes", " yes")
_NO = ("NO", "No", "no", " NO", " No", " no")


@dataclass(frozen=True)
class FilterDecision:
    """The kept texts and the public threshold they were compared with (for the record)."""

    kept: dict[int, str]
    threshold: float | None
    mode: str
    judged: bool = True  # False: the public reference did not clear the threshold, so every text was kept


def offtopic_sentences() -> list[str]:
    """The shipped public calibration sentences."""
    lines = template("self_filter_offtopic").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def public_threshold(offtopic_scores: Sequence[float], quantile: float = OFFTOPIC_QUANTILE) -> float:
    """The keep threshold: the ``quantile`` of the off-topic sentences' scores (public)."""
    return float(np.quantile(np.asarray(offtopic_scores, dtype=np.float64), quantile))


def answer_token_ids(llm: LanguageModel, variants: Sequence[str]) -> list[int]:
    """First token ids of the answer variants (e.g. "YES", " Yes"), de-duplicated."""
    ids: set[int] = set()
    for word in variants:
        tokens = llm.chat.tokenizer.encode(word, add_special_tokens=False)
        if tokens:
            ids.add(int(tokens[0]))
    return sorted(ids)


def yes_no_margins(llm: LanguageModel, task: str, texts: Sequence[str], batch: int = 16) -> np.ndarray:
    """log P(yes) − log P(no) at the first answer token, teacher-forced, one pass per text."""
    yes, no = answer_token_ids(llm, _YES), answer_token_ids(llm, _NO)
    out: list[float] = []
    for start in range(0, len(texts), batch):
        messages = [render("self_filter", task=task, text=t) for t in texts[start : start + batch]]
        session = llm.start_logits(llm.chat_prompt_ids(messages))
        with torch.inference_mode():
            logp = torch.log_softmax(session.logits().double().cpu(), dim=-1)
        margin = torch.logsumexp(logp[:, yes], dim=-1) - torch.logsumexp(logp[:, no], dim=-1)
        out.extend(margin.tolist())
    return np.asarray(out, dtype=np.float64)


def task_similarities(embedder: Embedder, task: str, texts: Sequence[str]) -> np.ndarray:
    """Cosine between each text and the public task description (L2-normalised embeddings)."""
    vectors = embedder.embed([task, *texts])
    return vectors[1:] @ vectors[0]


def run_self_filter(
    texts: dict[int, str],
    task: str,
    llm: LanguageModel,
    embedder: Embedder,
    reporter: Reporter,
    mode: str = "score",
    reference: str = "",
) -> FilterDecision:
    """Keep the texts judged useful for the public task; empty texts are always dropped. With a public
    ``reference`` document of the task's form that the filter itself would drop, every text is kept."""
    if mode not in MODES:
        raise ValueError(f"unknown self-filter mode {mode!r}; use one of {MODES}")
    items = [(gid, t) for gid, t in sorted(texts.items()) if t.strip()]
    progress = StageProgress(reporter, "self_filter", len(items)).start("Checking the documents against the task")
    if not items:
        progress.finish()
        return FilterDecision({}, None, mode)
    bodies = [t for _, t in items]
    threshold: float | None
    if mode == "answer":
        judged = ["yes" in a.lower() for a in llm.generate(
            [render("self_filter", task=task, text=t) for t in [*bodies, reference] if t], 3, temperature=0.0)]
        keep, threshold = judged[: len(bodies)], None
        can_judge = judged[-1] if reference else True
    else:
        score = (
            (lambda ts: yes_no_margins(llm, task, ts))
            if mode == "score"
            else (lambda ts: task_similarities(embedder, task, ts))
        )
        threshold = public_threshold(score(offtopic_sentences()))
        scores = score([*bodies, reference] if reference else bodies)
        keep = list(scores[: len(bodies)] > threshold)
        can_judge = bool(scores[-1] > threshold) if reference else True
    progress.advance(len(items))
    progress.finish()
    if not can_judge:
        reporter.emit(ProgressEvent("self_filter", "log", message="The self-filter cannot tell this task's documents "
                                    "from off-topic text (the public example of the form does not pass it): every "
                                    "document is kept."))
        return FilterDecision(dict(items), threshold, mode, judged=False)
    kept = {gid: text for (gid, text), k in zip(items, keep) if k}
    return FilterDecision(kept, threshold, mode)


def self_filter(
    texts: dict[int, str], ctx: MethodContext, enabled: bool = True, mode: str = "score", reference: str = ""
) -> dict[int, str]:
    """Step 5: the texts judged useful for the public task (post-processing: free); with the filter off,
    every non-empty text. ``reference``: a public document of the form (see :func:`run_self_filter`)."""
    if not enabled:
        return {g: t for g, t in texts.items() if t.strip()}
    return run_self_filter(texts, ctx.task, ctx.llm, ctx.embedder, ctx.reporter, mode, reference).kept
