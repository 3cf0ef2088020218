"""Query-time DP-RAG baseline (docs/method.md §4): every query spends privacy budget.

For each question the top-k *private* documents are retrieved and the answer is written by
private prediction over them (``PrivatePredictionEngine``): one row per retrieved document
(the RAG prompt with that document), summed clipped logits, one token per step sampled over
the whole vocabulary, anchored on the public row (the same prompt without documents).

Accounting, for a fixed total budget rho_total spread over Q queries (sequential
composition: any unit may be retrieved by every query): rho_q = rho_total / Q, and
rho_token = rho_q / T for T answer tokens. Top-k retrieval is not itself private: adding a
unit can also *evict* another retrieved document, so one unit moves each aggregated logit
by up to 2c (not c). The exponential mechanism then costs rho_token = (2c/tau)^2 / 2, i.e.
c/tau = sqrt(rho_token / 2). (Using (c/tau)^2 / 2 would flatter the baseline.)
"""

from __future__ import annotations

import math
from typing import Sequence

from core.evaluation.utility import rag_prompt
from core.methods.private_prediction import EngineConfig, PredictionGroup, PrivatePredictionEngine
from core.models.base import LanguageModel
from core.privacy.mechanisms import TokenSampler


def per_query_clip(rho_total: float, n_queries: int, answer_tokens: int, tau: float = 1.0) -> float:
    """The clip c for one query when ``n_queries`` share ``rho_total`` (top-k: sensitivity 2c)."""
    if rho_total <= 0 or n_queries < 1 or answer_tokens < 1:
        raise ValueError("need rho_total > 0, n_queries >= 1, answer_tokens >= 1")
    rho_token = rho_total / n_queries / answer_tokens
    return tau * math.sqrt(rho_token / 2.0)


def dp_rag_answers(
    llm: LanguageModel,
    questions: Sequence[str],
    retrieved: Sequence[Sequence[str]],
    clip: float,
    answer_tokens: int,
    tau: float = 1.0,
    max_prompt_tokens: int = 384,
    max_rows: int = 64,
) -> list[str]:
    """One privately predicted answer per question (token draws from OS entropy)."""
    groups = []
    for gid, (question, docs) in enumerate(zip(questions, retrieved)):
        rows = llm.chat_prompt_ids([rag_prompt(question, [d]) for d in docs], max_prompt_tokens) if docs else []
        public = llm.chat_prompt_ids([rag_prompt(question, [])], max_prompt_tokens)[0]
        groups.append(PredictionGroup(gid, tuple(tuple(r) for r in rows), tuple(public)))
    config = EngineConfig(answer_tokens, clip, tau, max_rows=max_rows, public_anchor=True)
    engine = PrivatePredictionEngine(llm, config, TokenSampler(tau))
    outputs = engine.run(groups)
    return [llm.decode(outputs[g].token_ids).strip() for g in range(len(groups))]
