"""Teacher-forced NLL of a text as the model's reply to a prompt (for the membership attacks).

Works on any backend through the ``LogitsSession`` protocol: the chat prompt is prefilled,
then the text's own tokens are appended one step at a time, rows of a batch in lock-step.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from core.models.base import LanguageModel
from core.models.scoring import forced_nll, split_message


def message_tokens(llm: LanguageModel, texts: Sequence[str]) -> list[list[int]]:
    """The tokens of each text itself, without the chat template around it."""
    empty = llm.chat_prompt_ids([""])[0]
    return [split_message(empty, full)[1] for full in llm.chat_prompt_ids(list(texts))]


def reply_nll(
    llm: LanguageModel,
    prompts: Sequence[str],
    texts: Sequence[str],
    max_tokens: int = 64,
    max_prompt_tokens: int = 512,
    batch: int = 16,
) -> np.ndarray:
    """Mean per-token NLL of ``texts[i]`` as the reply to ``prompts[i]`` (0 for an empty text)."""
    if len(prompts) != len(texts):
        raise ValueError("one prompt per text")
    targets = [t[:max_tokens] for t in message_tokens(llm, texts)]
    prefixes = llm.chat_prompt_ids(list(prompts), max_prompt_tokens)
    scores = np.zeros(len(texts), dtype=np.float64)
    order = [i for i in range(len(texts)) if targets[i]]
    for start in range(0, len(order), batch):
        rows = order[start : start + batch]
        scores[rows] = forced_nll(llm, [prefixes[i] for i in rows], [targets[i] for i in rows])
    return scores
