"""The one small model interface every method uses.

Three capabilities, each behind a Protocol so that the transformers and llama.cpp
backends (and the tiny random test model) are interchangeable:

* ``LanguageModel.start_logits`` — batched next-token logits for N rows with a KV cache:
  prefill a batch of prompts (left padding), then ``append`` one token per row per step.
  Used by the private-prediction engine; it aggregates the rows itself.
* ``LanguageModel.generate`` — plain text generation for the *non-private* steps
  (keyword extraction, self-filter, abstraction, rewriting).
* ``Embedder.embed`` — L2-normalised sentence embeddings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, Sequence

import numpy as np
import torch

if TYPE_CHECKING:
    from core.models.chat import ChatTokenizer


class LogitsSession(Protocol):
    """N rows decoding in lock-step over a shared KV cache."""

    @property
    def n_rows(self) -> int: ...

    def logits(self) -> torch.Tensor:
        """Next-token logits of every row, shape [n_rows, vocab_size], float32, on the model's device."""
        ...

    def append(self, tokens: torch.Tensor) -> None:
        """Append one token per row (LongTensor [n_rows]) and advance the cache one step."""
        ...

    def keep(self, rows: torch.Tensor) -> None:
        """Keep only these rows (LongTensor of row indices, in this order); frees the rest."""
        ...


class LanguageModel(Protocol):
    name: str
    device: str  # a torch device string: "cpu", "cuda", "cuda:0"
    vocab_size: int  # width of the logits rows (may exceed the tokenizer's vocabulary)
    eos_token_ids: frozenset[int]
    chat: "ChatTokenizer"  # the model's Hugging Face tokenizer with its chat template

    def chat_prompt_ids(self, user_messages: Sequence[str], max_prompt_tokens: int | None = None) -> list[list[int]]:
        """Token ids of each message wrapped in the chat template with the generation prompt.

        When ``max_prompt_tokens`` is set, the *message* is truncated (never the template)
        so the prompt fits.
        """
        ...

    def decode(self, token_ids: Sequence[int]) -> str: ...

    def start_logits(self, prompt_ids: Sequence[Sequence[int]], shared_prefix: int = 0) -> LogitsSession:
        """Prefill the prompts (left-padded) and return a session positioned after them.

        ``shared_prefix``: how many first tokens every prompt takes from a public template; a backend
        may compute them once for all rows (each row's logits stay its own prompt's). 0 = none."""
        ...

    def generate(
        self,
        user_messages: Sequence[str],
        max_new_tokens: int,
        temperature: float = 0.7,
    ) -> list[str]:
        """Sampled chat completions for non-private steps (one per message)."""
        ...


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """float32 array [len(texts), dim], every row of L2 norm 1."""
        ...


