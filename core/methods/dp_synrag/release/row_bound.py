"""Bounded private prediction: Poisson subsampling of each cluster to about k rows (docs/method.md §2.4.8).

Without refinement every member of C_r is a row of its group, so private prediction costs
O(n·L·T) row-tokens: it grows with the corpus. ``row_bound = "poisson"`` keeps each member of C_r
as a row independently with probability

    q_r = min(1, k / h'(w_r))

where h'(w_r) is w_r's count in the *released* noisy histogram and k the public target cluster
size. q_r is a function of released and public values only, and every unit's coin is its own
(one independent uniform per unit and cluster, from OS entropy). Adding or removing one unit then
adds or removes at most its own row in each of its at most L groups, exactly as without the
subsample, so every token still costs (c/tau)^2/2 and the charges are those of the plan. No
amplification by subsampling is claimed. Since |C_r| <= h(w_r) ~ h'(w_r), a group has about k
rows (at most about k + a few sqrt(k)) whatever the corpus size; clusters whose noisy count is at
most k keep all their members, so small corpora run as before.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

ROW_BOUNDS = ("poisson", "none")


def subsample_rates(noisy_counts: Sequence[float], k: int) -> np.ndarray:
    """q_r = min(1, k / h'(w_r)) for each cluster, from the released counts h'(w_r) only.

    A count at or below k (negative noisy counts included) gives q_r = 1: the cluster keeps all
    its members."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    counts = np.asarray(noisy_counts, dtype=np.float64)
    rates = np.ones(counts.shape, dtype=np.float64)
    large = counts > k
    rates[large] = k / counts[large]
    return rates


def poisson_subsample(
    clusters: Sequence[Sequence[int]], rates: Sequence[float], rng: np.random.Generator
) -> list[list[int]]:
    """Each member u of C_r kept independently with probability q_r (one uniform per member).

    ``rng`` must be keyed by OS entropy (``secure_rng``) in a private run; only the explicit test
    mode passes a seeded one. A cluster with q_r = 1 draws nothing and keeps every member."""
    if len(rates) != len(clusters):
        raise ValueError(f"{len(rates)} rates for {len(clusters)} clusters")
    kept: list[list[int]] = []
    for members, q in zip(clusters, rates):
        if q >= 1.0:
            kept.append(list(members))
            continue
        array = np.asarray(members, dtype=np.int64)
        coins = rng.random(array.shape[0]) < q
        kept.append(array[coins].tolist())
    return kept


def cluster_counts(noisy_hist: np.ndarray, vocab_index: dict[str, int], W: Sequence[str]) -> list[float]:
    """h'(w_r) for each cluster word, read from the released histogram (post-processing)."""
    return [float(noisy_hist[vocab_index[w]]) for w in W]
