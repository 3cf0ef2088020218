"""Per-unit model work sharded over Ray actors: keyword extraction and embedding.

Both are functions of one unit at a time with no noise (greedy keyword decoding, embeddings), so
the units can be cut into chunks and handed to a pool of actors (``core.compute.ray_pool``), one
per GPU. A chunk is a whole number of the single-process path's batches, in the same order, so the
results equal the single-process path's, whoever computes them; a chunk whose actor died is simply
computed again elsewhere (nothing is released and nothing is charged by these steps).

Each actor loads only the model its stage needs (the language model for keywords, the embedder for
embeddings), from the same local files as the driver.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from core.compute.ray_pool import RayPool
from core.common.progress import StageProgress
from core.specs.runspec import ComputeSpec, ModelChoice

BATCHES_PER_CHUNK = 4  # a chunk handed to one actor = this many of the single-process batches


@dataclass(frozen=True)
class UnitWorkerSetup:
    llm: ModelChoice
    embedder: ModelChoice
    uses_gpu: bool


class UnitWorker:
    """Body of one Ray actor: loads the language model or the embedder on first use."""

    def __init__(self, setup: UnitWorkerSetup) -> None:
        self.setup = setup
        self.llm: Any = None
        self.embedder: Any = None

    def _device(self, choice: ModelChoice) -> ModelChoice:
        # Ray shows each GPU actor exactly one GPU, as device 0.
        return replace(choice, device="cuda" if self.setup.uses_gpu else "cpu")

    def generate(self, batches: Sequence[Sequence[str]], max_new_tokens: int) -> list[str]:
        if self.llm is None:
            from core.models.registry import load_language_model

            self.llm = load_language_model(self._device(self.setup.llm))
        answers: list[str] = []
        for batch in batches:
            answers.extend(self.llm.generate(list(batch), max_new_tokens=max_new_tokens, temperature=0.0))
        return answers

    def embed(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        if self.embedder is None:
            from core.models.registry import load_embedder

            self.embedder = load_embedder(self._device(self.setup.embedder))
        return self.embedder.embed(list(texts), batch_size=batch_size)


def chunked(items: Sequence[Any], size: int) -> list[list[Any]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


class RayUnitWork:
    """Keyword generation and embedding over a pool of Ray actors (a ``core.methods.compute_backend.UnitWork``)."""

    def __init__(
        self, compute: ComputeSpec, llm: ModelChoice, embedder: ModelChoice, spill_dir: Path | None = None
    ) -> None:
        self.llm_choice = llm
        self.embedder_choice = embedder
        # One pool per model, so that each actor is placed (GPU or CPU) as its model's device says.
        self.pools = {
            kind: RayPool(compute, UnitWorker, self._setup, choice.device, spill_dir)
            for kind, choice in (("llm", llm), ("embedder", embedder))
        }

    @property
    def workers(self) -> list:
        """The live actors while a stage runs (exposed for tests)."""
        return [w for pool in self.pools.values() for w in pool.workers]

    def _setup(self, uses_gpu: bool) -> UnitWorkerSetup:
        return UnitWorkerSetup(self.llm_choice, self.embedder_choice, uses_gpu)

    def _run(self, kind: str, payloads: list, submit, progress: StageProgress | None, count) -> list:
        results: list = [None] * len(payloads)

        def finished(index: int, result) -> None:
            results[index] = result
            if progress:
                progress.advance(count(payloads[index]))

        self.pools[kind].map(payloads, submit, finished, progress)
        return results

    def generate(
        self, llm: Any, messages: Sequence[str], max_new_tokens: int, batch: int, progress: StageProgress | None = None
    ) -> list[str]:
        """Greedy answers to ``messages``, computed ``batch`` messages at a time as ``llm.generate``
        would be called by the single-process path (each worker loads its own copy of ``llm``)."""
        chunks = chunked(chunked(messages, batch), BATCHES_PER_CHUNK)
        results = self._run(
            "llm",
            chunks,
            lambda worker, chunk: worker.generate.remote(chunk, max_new_tokens),
            progress,
            lambda chunk: sum(len(b) for b in chunk),
        )
        return [answer for answers in results for answer in answers]

    def embed(
        self, embedder: Any, texts: Sequence[str], batch_size: int = 64, progress: StageProgress | None = None
    ) -> np.ndarray:
        """Embeddings of ``texts`` (rows in order), ``batch_size`` texts per model call (each worker loads its
        own copy of ``embedder``)."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        chunks = chunked(texts, batch_size * BATCHES_PER_CHUNK)
        results = self._run(
            "embedder",
            chunks,
            lambda worker, chunk: worker.embed.remote(chunk, batch_size),
            progress,
            len,
        )
        return np.concatenate(results, axis=0)
