"""Teacher-forced NLL of a text as the model's reply to a prompt (for the membership attacks).

Works on any backend through the ``LogitsSession`` protocol: the chat prompt is prefilled,
then the text's own tokens are appended one step at a time, rows of a batch in lock-step.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from core.models.base import LanguageModel


def message_tokens(llm: LanguageModel, texts: Sequence[str]) -> list[list[int]]:
    """The tokens of each text itself, without the chat template around it.

    Found by comparing each templated prompt with the prompt of an empty message: what they
    share at the start and at the end is template.
    """
    empty = llm.chat_prompt_ids([""])[0]
    out = []
    for full in llm.chat_prompt_ids(list(texts)):
        limit = min(len(empty), len(full))
        p = 0
        while p < limit and empty[p] == full[p]:
            p += 1
        s = 0
        while s < limit - p and empty[-1 - s] == full[-1 - s]:
            s += 1
        out.append(list(full[p : len(full) - s]))
    return out


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
        scores[rows] = _forced([prefixes[i] for i in rows], [targets[i] for i in rows], llm)
    return scores


def _forced(prefixes: list[list[int]], targets: list[list[int]], llm: LanguageModel) -> np.ndarray:
    session = llm.start_logits(prefixes)
    length = max(len(t) for t in targets)
    lengths = torch.tensor([len(t) for t in targets])
    padded = torch.zeros((len(targets), length), dtype=torch.long)
    for r, t in enumerate(targets):
        padded[r, : len(t)] = torch.tensor(t, dtype=torch.long)
    total = torch.zeros(len(targets), dtype=torch.float64)
    with torch.inference_mode():
        for step in range(length):
            logp = torch.log_softmax(session.logits().double().cpu(), dim=-1)
            picked = logp.gather(1, padded[:, step : step + 1]).squeeze(1)
            total -= torch.where(step < lengths, picked, torch.zeros_like(picked))
            if step + 1 < length:
                session.append(padded[:, step].to(llm.device))
    return (total / lengths.double()).numpy()
