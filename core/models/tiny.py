"""Tiny stand-in models for tests only (source "tiny-random"). Never used for real runs.

* :func:`build_tiny_language_model` — a 2-layer, 64-wide Llama with the SmolLM2 tokenizer
  (so prompts and vocabulary are the real ones) and deterministic weights. The weights are
  drawn from a fixed-seed generator: they are public model parameters, not privacy noise,
  and fixing them makes the tests reproducible. Builds in well under a second.
* :class:`HashingEmbedder` — a deterministic hashing bag-of-words embedder (dim 64, rows of
  L2 norm 1), so tests need no embedding model.
* :func:`end_quickly` — in the explicit test mode only (``RunSpec.test_mode_seed``; ``core.run.pipeline`` calls
  it), the tiny model's sampled texts end after ``TEST_MODE_TOKENS`` new tokens: random weights almost never
  choose the end of text, so every document ran to its token limit and a tiny run took minutes, not seconds.
"""

from __future__ import annotations

import hashlib
import re
from typing import Sequence

import numpy as np
import torch

from core.models.transformers_backend import TransformersLanguageModel

TINY_NAME = "tiny-random"
_WEIGHT_SEED = 20240601  # public test weights, not privacy noise
_WORD = re.compile(r"\w+")
# In test mode the tiny model's sampled texts end after this many new tokens (where their rules let them end):
# random weights almost never choose the end of text, so every text ran to its token limit (80 for the writer).
TEST_MODE_TOKENS = 16


def tiny_llama(vocab_size: int, special_ids: dict[str, int | None]):
    """A 2-layer Llama (hidden 64) with deterministic, unit-scale weights."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
        **special_ids,
    )
    model = LlamaForCausalLM(config).to(torch.float32)
    generator = torch.Generator().manual_seed(_WEIGHT_SEED)
    with torch.no_grad():
        for _, param in sorted(model.named_parameters()):
            if param.dim() == 1:
                param.fill_(1.0)  # RMSNorm weights
            else:  # ~unit-variance activations, so logits differ clearly between contexts
                param.copy_(torch.randn(param.shape, generator=generator) / param.shape[-1] ** 0.5)
    return model.eval()


def build_tiny_language_model(tokenizer, device: str = "cpu") -> TransformersLanguageModel:
    """The tiny random chat model on ``device``, using ``tokenizer`` (the SmolLM2 one)."""
    special = {
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
    }
    model = tiny_llama(len(tokenizer), special)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return TransformersLanguageModel(model.to(device), tokenizer, TINY_NAME, device)


def end_quickly(llm: TransformersLanguageModel, after: int = TEST_MODE_TOKENS) -> TransformersLanguageModel:
    """The tiny model whose sampled texts end after ``after`` new tokens wherever they may end: each session it
    starts carries ``ends_after`` and ``core.models.generation.decode_rows`` then makes the end of text the only
    choice of every row whose rules allow it (a writer's row still missing a released word goes on). Teacher-forced
    scoring and private prediction read the logits as they are. Test mode only (``core.run.pipeline``)."""
    if getattr(llm, "ends_after", None) is not None:
        return llm  # once only
    start = llm.start_logits

    def start_logits(prompt_ids, shared_prefix: int = 0):
        session = start(prompt_ids, shared_prefix=shared_prefix)
        session.ends_after = after  # type: ignore[attr-defined]
        return session

    llm.start_logits = start_logits  # type: ignore[method-assign]
    llm.ends_after = after  # type: ignore[attr-defined]
    return llm


def tiny_weights_sha256(model) -> str:
    """sha256 over the tiny model's parameters (name order), for fingerprints."""
    digest = hashlib.sha256()
    for name, param in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(param.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


class HashingEmbedder:
    """Bag-of-words feature hashing: each lower-cased word adds ±1 to one of ``dim`` slots."""

    name = "tiny-random-hashing"

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float64)
        for word in _WORD.findall(text.lower()):
            h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
            vec[h % self.dim] += 1.0 if (h >> 32) & 1 else -1.0
        norm = np.linalg.norm(vec)
        if norm == 0.0:  # no words (or they cancelled): a fixed unit vector keeps the norm-1 contract
            vec[0], norm = 1.0, 1.0
        return vec / norm

    def embed(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        rows = [self._vector(t) for t in texts]
        return np.asarray(rows, dtype=np.float32).reshape(len(rows), self.dim)
