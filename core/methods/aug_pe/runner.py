"""The Aug-PE loop (DPSDA's ``runner``), with a checkpoint after every charged iteration.

    S_0 = RANDOM_API(N)                                   public prompts only
    for t = 1 .. T:
        h_t  = one vote per unit for its nearest candidate in S_{t-1}      (L2 sensitivity 1)
        h~_t = h_t + N(0, σ² I)        charged ρ = 1/(2σ²) before the draw; checkpointed
        kept = h~_t with counts below H set to 0
        if t < T: S_t = winners drawn ∝ kept  +  VARIATION_API(winners)
    output: the candidates of S_{T-1} that passed H in h~_T, most votes first

Checkpoints (run folder, never exported): ``aug_pe_population_0`` (S_0), ``aug_pe_histogram_t``
(h~_t together with the population it voted on) and ``aug_pe_population_t`` (S_t). A resumed run
reloads every released histogram and never redraws a charged iteration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from core.corpus import Unit
from core.methods.aug_pe.histogram import (
    nearest_neighbour_votes,
    threshold_counts,
    winners,
)
from core.methods.aug_pe.llm import Sampling
from core.methods.aug_pe.population import (
    initial_population,
    next_population,
    parents_per_iteration,
    select_parents,
    variation_count,
)
from core.methods.base import MethodContext, SyntheticDoc
from core.methods.aug_pe.plan import AugPEPlan
from core.privacy.release import run_release
from core.privacy.randomness import secure_torch_generator, test_mode_torch_generator
from core.common.progress import ProgressEvent, StageProgress
from core.specs.runspec import AugPESpec

STAGE_GENERATION = "aug_pe_generation"


@dataclass
class AugPEResult:
    documents: list[SyntheticDoc]
    # On-screen diagnostics for the custodian only (never exported).
    private_diagnostics: dict[str, int] = field(default_factory=dict)


def sampling_of(spec: AugPESpec) -> Sampling:
    return Sampling(spec.max_new_tokens, spec.temperature, spec.top_p, spec.batch_size)


def public_generator(ctx: MethodContext) -> torch.Generator:
    """OS entropy, or the seeded generator of the explicit (non-exportable) test mode."""
    if ctx.test_seed is not None:
        return test_mode_torch_generator(ctx.test_seed + 1)
    return secure_torch_generator("cpu")


def texts_to_write(spec: AugPESpec) -> int:
    """Every text the public model writes in a run: the initial population and T−1 rounds of variations."""
    return spec.population + (spec.iterations - 1) * variation_count(spec.population, spec.variations)


def run_aug_pe(units: Sequence[Unit], spec: AugPESpec, plan: AugPEPlan, ctx: MethodContext) -> AugPEResult:
    cp = ctx.checkpoints
    sampling = sampling_of(spec)
    generator = public_generator(ctx)
    prompt_limit = max(ctx.max_prompt_tokens, spec.max_new_tokens + 96)
    writing = StageProgress(ctx.reporter, STAGE_GENERATION, texts_to_write(spec)).start(
        "Writing candidate texts with the public model"
    )

    if cp.has("aug_pe_population_0"):
        population = cp.load("aug_pe_population_0")
        writing.done = spec.population
    else:
        population = initial_population(ctx.llm, ctx.task, spec.population, sampling, generator, writing.advance)
        cp.save("aug_pe_population_0", population)

    embedding = StageProgress(ctx.reporter, "embedding", len(units)).start("Embedding documents")
    private = ctx.embedder.embed([u.text for u in units])
    embedding.advance(len(units))
    embedding.finish()

    n_parents = parents_per_iteration(spec.population, spec.variations)
    used_fallback = 0
    for t in range(1, plan.iterations + 1):
        noisy, population = _histogram(t, population, private, plan, ctx)
        kept = threshold_counts(noisy, plan.threshold)
        used_fallback += int(not kept.any())
        if t == plan.iterations:
            break
        key = f"aug_pe_population_{t}"
        if cp.has(key):
            population = cp.load(key)
            writing.done += variation_count(spec.population, spec.variations)
        else:
            parents = select_parents(kept, n_parents, ctx.rng())
            population = next_population(
                population, parents, spec.variations, ctx.llm, sampling, generator, prompt_limit, writing.advance
            )
            cp.save(key, population)
    writing.finish()

    chosen, _ = winners(noisy, kept, n_parents)
    texts = list(dict.fromkeys(population[i] for i in chosen if population[i].strip()))
    documents = [SyntheticDoc(id=f"syn-{i:04d}", text=text, group=i) for i, text in enumerate(texts)]
    for doc in documents:
        ctx.reporter.emit(ProgressEvent(STAGE_GENERATION, "preview", message=doc.text))
    diagnostics = {
        "iterations": plan.iterations,
        "candidates_last_iteration": len(population),
        "winners_last_iteration": int((kept > 0).sum()),
        "iterations_without_winners": used_fallback,
        "synthetic_documents": len(documents),
    }
    return AugPEResult(documents, diagnostics)


def _histogram(
    t: int, population: list[str], private: np.ndarray, plan: AugPEPlan, ctx: MethodContext
) -> tuple[np.ndarray, list[str]]:
    """The released h~_t and the population it voted on (``run_release``: checkpoint, or charge → vote → noise)."""
    stage = plan.release(t)
    started: list[StageProgress] = []

    def vote() -> np.ndarray:
        started.append(StageProgress(ctx.reporter, stage.stage, 1).start(f"Private vote, iteration {t} of {plan.iterations}"))
        return nearest_neighbour_votes(private, ctx.embedder.embed(population))

    released = run_release(
        stage, ctx, vote,
        noise=lambda votes: (stage.noise(votes, ctx.test_rng()), population),
        dump=lambda out: {"population": out[1], "noisy_votes": out[0].tolist()},
        load=lambda saved: (np.asarray(saved["noisy_votes"], dtype=np.float64), list(saved["population"])),
    )
    for progress in started:  # drawn now (not reloaded): the stage ends after its checkpoint is saved
        progress.advance()
        progress.finish()
    return released
