"""The local compute backend: private prediction, greedy per-unit generation and embedding in this process.

``[compute] backend = "local"`` (the default) gets these; ``"ray"`` gets the Ray engine and unit work
with the same call signatures and the same results (``ray_engine.py``, ``ray_units.py``). A method is
handed one or the other through ``MethodContext`` and never needs to ask which.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.methods.private_prediction import EngineConfig, PrivatePredictionEngine
from core.models.base import Embedder, LanguageModel
from core.privacy.mechanisms import TokenSampler
from core.progress import StageProgress


def local_engine(llm: LanguageModel, config: EngineConfig, sampler: TokenSampler) -> PrivatePredictionEngine:
    """The single-process private-prediction engine (an ``EngineFactory``)."""
    return PrivatePredictionEngine(llm, config, sampler)


class LocalUnitWork:
    """Keyword generation and embedding with the models loaded in this process (a ``UnitWork``)."""

    def __init__(self, llm: LanguageModel, embedder: Embedder) -> None:
        self.llm = llm
        self.embedder = embedder

    def generate(
        self, messages: Sequence[str], max_new_tokens: int, batch: int, progress: StageProgress | None = None
    ) -> list[str]:
        """Greedy answers, ``batch`` messages per model call, in order."""
        answers: list[str] = []
        for start in range(0, len(messages), batch):
            chunk = list(messages[start : start + batch])
            answers.extend(self.llm.generate(chunk, max_new_tokens=max_new_tokens, temperature=0.0))
            if progress is not None:
                progress.advance(len(chunk))
        return answers

    def embed(self, texts: Sequence[str], batch_size: int = 64, progress: StageProgress | None = None) -> np.ndarray:
        """Embeddings, one row per text, in order."""
        vectors = self.embedder.embed(list(texts), batch_size=batch_size)
        if progress is not None:
            progress.advance(len(texts))
        return vectors
