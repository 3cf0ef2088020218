"""Aug-PE's public language-model calls (DPSDA's ``llm`` part), batched over one KV cache.

Aug-PE never shows private text to the model: every prompt holds only the public task
description or a candidate text the model itself wrote. This is therefore ordinary *public*
generation, and ordinary temperature / top-p sampling is allowed here (unlike private
prediction, where any data-dependent truncation breaks the guarantee).

Texts are written in batches over the same ``LogitsSession`` the private-prediction engine
uses (``LanguageModel.start_logits``): one left-padded prefill, then one token per row per
step; rows that emit EOS leave the batch. Tokens are drawn with a generator keyed by OS
entropy, or the seeded generator of the explicit test mode; never a fixed seed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from core.models.base import LanguageModel


@dataclass(frozen=True)
class Sampling:
    """How the public model samples: length, temperature, nucleus (top-p), rows per batch."""

    max_new_tokens: int
    temperature: float = 1.0
    top_p: float = 1.0
    batch_size: int = 32


NUCLEUS_CANDIDATES = 256  # tokens ranked first; the full vocabulary is sorted only when they hold < top_p


def sample_next(logits: torch.Tensor, sampling: Sampling, generator: torch.Generator) -> torch.Tensor:
    """One token per row from softmax(logits / temperature), restricted to the top-p nucleus.

    The nucleus is the smallest set of most likely tokens whose mass reaches top_p. Sampled on the
    CPU with ``generator``; temperature 0 is greedy.
    """
    x = logits.detach().to("cpu", torch.float32)
    if sampling.temperature <= 0:
        return x.argmax(dim=-1)
    log_p = torch.log_softmax(x / sampling.temperature, dim=-1)
    if sampling.top_p >= 1.0:
        return torch.multinomial(log_p.exp(), 1, generator=generator).squeeze(1)
    ranked, order = log_p.topk(min(NUCLEUS_CANDIDATES, log_p.shape[-1]), dim=-1)
    if bool((ranked.exp().sum(dim=-1) < sampling.top_p).any()):
        ranked, order = log_p.sort(dim=-1, descending=True)
    p = ranked.exp()
    before = p.cumsum(dim=-1) - p  # mass of the tokens ranked above each token
    p = torch.where(before < sampling.top_p, p, torch.zeros_like(p))
    choice = torch.multinomial(p, 1, generator=generator)
    return order.gather(-1, choice).squeeze(1)


def write_texts(
    llm: LanguageModel,
    messages: Sequence[str],
    sampling: Sampling,
    generator: torch.Generator,
    max_prompt_tokens: int | None = None,
    on_batch: Callable[[int], None] = lambda n: None,
) -> list[str]:
    """One completion per message, ``sampling.batch_size`` messages at a time over one KV cache."""
    texts: list[str] = []
    for start in range(0, len(messages), max(1, sampling.batch_size)):
        batch = list(messages[start : start + max(1, sampling.batch_size)])
        texts.extend(_write_batch(llm, batch, sampling, generator, max_prompt_tokens))
        on_batch(len(batch))
    return texts


def _write_batch(
    llm: LanguageModel, messages: list[str], sampling: Sampling, generator: torch.Generator, max_prompt_tokens: int | None
) -> list[str]:
    session = llm.start_logits(llm.chat_prompt_ids(messages, max_prompt_tokens))
    outputs: list[list[int]] = [[] for _ in messages]
    active = list(range(len(messages)))
    for step in range(sampling.max_new_tokens):
        tokens = sample_next(session.logits(), sampling, generator)
        keep = [pos for pos, tok in enumerate(tokens.tolist()) if tok not in llm.eos_token_ids]
        for pos in keep:
            outputs[active[pos]].append(int(tokens[pos]))
        if not keep or step == sampling.max_new_tokens - 1:
            break
        if len(keep) < len(active):
            session.keep(torch.tensor(keep, dtype=torch.long))
            tokens = tokens[keep]
            active = [active[pos] for pos in keep]
        session.append(tokens)
    return [llm.decode(ids).strip() for ids in outputs]
