"""Dense top-k retrieval over a small corpus (cosine on L2-normalised embeddings)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from core.models.base import Embedder


@dataclass
class VectorIndex:
    texts: list[str]
    embeddings: np.ndarray  # [n, dim], rows of norm 1

    @classmethod
    def build(cls, texts: Sequence[str], embedder: Embedder) -> "VectorIndex":
        texts = list(texts)
        if not texts:
            return cls([], np.zeros((0, embedder.dim), dtype=np.float32))
        return cls(texts, embedder.embed(texts))

    def __len__(self) -> int:
        return len(self.texts)

    def search(self, queries: np.ndarray, k: int) -> list[list[int]]:
        """Indices of the top-k documents for each query row, best first (empty when no documents)."""
        if len(self.texts) == 0 or k <= 0:
            return [[] for _ in range(len(queries))]
        sims = queries.astype(np.float64) @ self.embeddings.astype(np.float64).T
        k = min(k, len(self.texts))
        top = np.argsort(-sims, axis=1, kind="stable")[:, :k]
        return [list(map(int, row)) for row in top]

    def retrieve(self, queries: np.ndarray, k: int) -> list[list[str]]:
        return [[self.texts[i] for i in row] for row in self.search(queries, k)]

    def nearest_similarity(self, queries: np.ndarray) -> np.ndarray:
        """Largest cosine of each query row to any document (-1 when there are none)."""
        if len(self.texts) == 0:
            return np.full(len(queries), -1.0)
        return (queries.astype(np.float64) @ self.embeddings.astype(np.float64).T).max(axis=1)
