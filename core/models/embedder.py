"""Sentence embeddings with sentence-transformers (the packaged all-MiniLM-L6-v2 or a local folder)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from core.common.errors import ModelError
from core.models.hf_loading import quiet_loading


class SentenceTransformerEmbedder:
    """L2-normalised float32 embeddings from a local sentence-transformers folder."""

    def __init__(self, folder: Path, device: str, name: str) -> None:
        with quiet_loading():
            from sentence_transformers import SentenceTransformer

            try:
                self._model = SentenceTransformer(str(folder), device=device, local_files_only=True)
            except (OSError, ValueError, KeyError, RuntimeError) as exc:
                raise ModelError(
                    f"Could not load an embedding model from {folder}: {exc}",
                    "Point at a sentence-transformers folder (with modules.json or config.json).",
                ) from exc
        self.name = name
        self.device = device
        self.dim = int(self._model.get_embedding_dimension())

    def embed(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            list(texts),
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)
