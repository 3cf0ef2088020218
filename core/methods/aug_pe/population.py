"""The candidate population (DPSDA's ``population`` part): RANDOM_API and VARIATION_API.

* ``initial_population`` — RANDOM_API: the public model writes N candidates from a prompt built
  from the public task description only.
* ``next_population`` — VARIATION_API: the winners selected from a released noisy histogram are
  kept, and the public model writes ``variations`` rewrites of each selected winner.

Both read only public text (the task, and candidates the model wrote itself), so they are
post-processing of the released histograms and cost no privacy budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from core.methods.aug_pe.llm import Sampling, write_texts
from core.models.base import LanguageModel
from core.common.prompts import render


def initial_population(
    llm: LanguageModel,
    task: str,
    size: int,
    sampling: Sampling,
    generator: torch.Generator,
    on_batch: Callable[[int], None] = lambda n: None,
) -> list[str]:
    """S_0 = RANDOM_API(N): ``size`` candidates written from the public task description."""
    prompt = render("aug_pe_random", task=task)
    return write_texts(llm, [prompt] * size, sampling, generator, on_batch=on_batch)


def parents_per_iteration(population: int, variations: int) -> int:
    """How many winners are drawn each iteration so that winners + variations ≈ the population size."""
    return max(1, population // (1 + variations))


def select_parents(kept_counts: np.ndarray, n_parents: int, rng: np.random.Generator) -> list[int]:
    """Draw ``n_parents`` candidate indices with replacement, ∝ the thresholded noisy counts.

    When no candidate passed the threshold the histogram says nothing and the draw is uniform.
    Reads only the released histogram: post-processing.
    """
    counts = np.clip(np.asarray(kept_counts, dtype=np.float64), 0.0, None)
    total = counts.sum()
    p = counts / total if total > 0 else np.full(len(counts), 1.0 / len(counts))
    return [int(i) for i in rng.choice(len(counts), size=n_parents, replace=True, p=p)]


def next_population(
    candidates: Sequence[str],
    parents: Sequence[int],
    variations: int,
    llm: LanguageModel,
    sampling: Sampling,
    generator: torch.Generator,
    max_prompt_tokens: int | None = None,
    on_batch: Callable[[int], None] = lambda n: None,
) -> list[str]:
    """S_t = the distinct selected winners + VARIATION_API(winners): ``variations`` rewrites per draw."""
    distinct = list(dict.fromkeys(parents))
    prompts = [render("aug_pe_variation", document=candidates[i]) for i in parents for _ in range(variations)]
    rewrites = write_texts(llm, prompts, sampling, generator, max_prompt_tokens, on_batch)
    return [candidates[i] for i in distinct] + rewrites


def variation_count(population: int, variations: int) -> int:
    """Texts VARIATION_API writes per iteration (for progress and estimates)."""
    return parents_per_iteration(population, variations) * variations
