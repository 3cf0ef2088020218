"""Where a method's model work runs: :class:`ComputeBackend`, never None, and the local one, :data:`LOCAL`.

A method asks its context's backend (``MethodContext.compute``) for a private-prediction engine
(``engine_factory``) and for per-unit greedy answers and embeddings (``unit_work``), handing it the models
this process loaded. The local backend, every context's default, uses them here. ``[compute] backend =
"ray"`` gives ``core.compute``'s Ray engine and unit work instead, whose workers load their own copies of
the same models: the same call signatures and the same results. A method never asks which it has.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from core.methods.private_prediction import EngineConfig, PrivatePredictionEngine
from core.models.base import Embedder, LanguageModel
from core.privacy.mechanisms import TokenSampler
from core.common.progress import StageProgress

EngineFactory = Callable[[LanguageModel, EngineConfig, TokenSampler], Any]
"""factory(llm, EngineConfig, TokenSampler) -> an object with the engine's ``run`` method."""


class UnitWork(Protocol):
    """Per-unit model work: greedy answers and embeddings, here or on compute workers, with the same results."""

    def generate(
        self, llm: LanguageModel, messages: Sequence[str], max_new_tokens: int, batch: int,
        progress: StageProgress | None = None,
    ) -> list[str]:
        """Greedy answers, ``batch`` messages per model call, in order."""
        ...

    def embed(
        self, embedder: Embedder, texts: Sequence[str], batch_size: int = 64, progress: StageProgress | None = None
    ) -> np.ndarray:
        """Embeddings, one row per text, in order."""
        ...


def local_engine(llm: LanguageModel, config: EngineConfig, sampler: TokenSampler) -> PrivatePredictionEngine:
    """The single-process private-prediction engine (an ``EngineFactory``)."""
    return PrivatePredictionEngine(llm, config, sampler)


class LocalUnitWork:
    """Greedy answers and embeddings with the models loaded in this process (a ``UnitWork``)."""

    def generate(
        self, llm: LanguageModel, messages: Sequence[str], max_new_tokens: int, batch: int,
        progress: StageProgress | None = None,
    ) -> list[str]:
        """Greedy answers, ``batch`` messages per model call, in order."""
        answers: list[str] = []
        for start in range(0, len(messages), batch):
            chunk = list(messages[start : start + batch])
            answers.extend(llm.generate(chunk, max_new_tokens=max_new_tokens, temperature=0.0))
            if progress is not None:
                progress.advance(len(chunk))
        return answers

    def embed(
        self, embedder: Embedder, texts: Sequence[str], batch_size: int = 64, progress: StageProgress | None = None
    ) -> np.ndarray:
        """Embeddings, one row per text, in order."""
        vectors = embedder.embed(list(texts), batch_size=batch_size)
        if progress is not None:
            progress.advance(len(texts))
        return vectors


@dataclass(frozen=True)
class ComputeBackend:
    """Where a run's model work goes: never None, so a method never asks which backend it has."""

    engine_factory: EngineFactory  # factory(llm, EngineConfig, TokenSampler) -> a private-prediction engine
    unit_work: UnitWork  # greedy answers and embeddings


LOCAL = ComputeBackend(local_engine, LocalUnitWork())
"""This process's engine and unit work: the default backend of every ``MethodContext``."""
