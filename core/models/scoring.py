"""Teacher-forced scoring of given tokens under a language model (any backend).

Used by RPSG's memorisation filter and by the membership-inference attacks: the prompt is
prefilled through the ``LogitsSession`` protocol, then the scored tokens are appended one step
at a time, the rows of a batch in lock-step.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from core.models.base import LanguageModel


def split_message(template_empty: Sequence[int], full: Sequence[int]) -> tuple[tuple[int, ...], list[int]]:
    """Split a chat prompt into (template prefix, the message's own tokens) by comparing it with
    the prompt of an empty message: what they share at the start and the end is template."""
    limit = min(len(template_empty), len(full))
    p = 0
    while p < limit and template_empty[p] == full[p]:
        p += 1
    s = 0
    while s < limit - p and template_empty[-1 - s] == full[-1 - s]:
        s += 1
    return tuple(full[:p]), list(full[p : len(full) - s])


def forced_nll(llm: LanguageModel, prefixes: Sequence[Sequence[int]], targets: Sequence[Sequence[int]]) -> np.ndarray:
    """Mean per-token negative log-likelihood of ``targets[i]`` following ``prefixes[i]``.

    Every target must have at least one token.
    """
    session = llm.start_logits(prefixes)
    length = max(len(t) for t in targets)
    lengths = torch.tensor([len(t) for t in targets])
    padded = torch.zeros((len(targets), length), dtype=torch.long)
    for r, t in enumerate(targets):
        padded[r, : len(t)] = torch.tensor(list(t), dtype=torch.long)
    total = torch.zeros(len(targets), dtype=torch.float64)
    with torch.inference_mode():
        for step in range(length):
            logp = torch.log_softmax(session.logits().double().cpu(), dim=-1)
            picked = logp.gather(1, padded[:, step : step + 1]).squeeze(1)
            total -= torch.where(step < lengths, picked, torch.zeros_like(picked))
            if step + 1 < length:
                session.append(padded[:, step].to(llm.device))
    return (total / lengths.double()).numpy()
