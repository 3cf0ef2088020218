"""Aug-PE's public language-model calls (DPSDA's ``llm`` part), batched over one KV cache.

Aug-PE never shows private text to the model: every prompt holds only the public task
description or a candidate text the model itself wrote. This is therefore ordinary *public*
generation, and ordinary temperature / top-p sampling is allowed here (unlike private
prediction, where any data-dependent truncation breaks the guarantee).

Texts are written in batches with the one public decoding loop (``core.models.generation``) over
the same ``LogitsSession`` the private-prediction engine uses. Tokens are drawn with a generator
keyed by OS entropy, or the seeded generator of the explicit test mode; never a fixed seed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from core.models.base import LanguageModel
from core.models.generation import Sampling, decode_rows

__all__ = ["Sampling", "write_texts"]


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
        session = llm.start_logits(llm.chat_prompt_ids(batch, max_prompt_tokens))
        rows = decode_rows(
            session, llm.eos_token_ids, sampling.max_new_tokens, sampling.temperature, sampling.top_p, generator
        )
        texts.extend(llm.decode(ids).strip() for ids in rows)
        on_batch(len(batch))
    return texts
