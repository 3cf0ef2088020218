"""The models a run loads: its language model and embedder, on the threads it may use, and their fingerprints.

Each model is resolved once (``core.models.registry.resolve_model``), so the files, backend and device that load are
the ones the privacy record and the certificate name. A model that fails to load stops the run before anything is
charged or any run folder is made.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from core.common.progress import Reporter, StageProgress
from core.models import threads
from core.models.registry import load_embedder, load_language_model, model_fingerprint, resolve_model
from core.specs.runspec import RunSpec

log = logging.getLogger(__name__)


@dataclass
class LoadedModels:
    llm: object
    embedder: object
    fingerprints: list[dict]


def load_models(spec: RunSpec, reporter: Reporter) -> LoadedModels:
    progress = StageProgress(reporter, "models", 2).start("Loading models")
    # Resolved once: the files, backend and device that load are the ones the certificate names.
    llm_model, embedder_model = resolve_model(spec.llm, "llm"), resolve_model(spec.embedder, "embedder")
    threads.configure(spec.compute.threads)  # torch and llama.cpp on the free cores (or [compute] threads)
    log.info("Models run on %s.", threads.match_free_cores().words())
    llm = load_language_model(llm_model)
    threads.follow(llm)  # a llama.cpp model's threads follow the count chosen again at each charged stage
    if spec.test_mode_seed is not None and llm_model.source == "tiny-random":
        from core.models.tiny import end_quickly

        end_quickly(llm)  # type: ignore[arg-type]  # test mode: random weights end their texts after a few tokens
    progress.advance()
    embedder = load_embedder(embedder_model)
    progress.advance()
    progress.finish()
    fingerprints = [
        {"role": "language model", **model_fingerprint(llm_model)},
        {"role": "embedder", **model_fingerprint(embedder_model)},
    ]
    return LoadedModels(llm, embedder, fingerprints)
