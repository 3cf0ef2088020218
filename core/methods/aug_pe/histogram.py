"""The DP nearest-neighbour vote histogram (DPSDA's ``histogram`` and ``dp`` parts).

Each private unit casts one vote, for the candidate nearest to it in embedding space. The vote
vector of one unit is a one-hot vector (L2 norm 1), so adding or removing a unit changes the
histogram by exactly one vote in one bin: L2 sensitivity 1. The released histogram is
h + N(0, σ² I) drawn by OpenDP's exact sampler (``gaussian_noise``), charged to the ledger as
ρ = 1/(2σ²) *before* the noise is drawn. Thresholding at H, ranking and drawing winners read
only the released noisy histogram: post-processing.
"""

from __future__ import annotations

import numpy as np



def nearest_neighbour_votes(private: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """h[j] = number of units whose nearest candidate (L2 distance; ties to the lowest j) is j."""
    n_candidates = len(candidates)
    if len(private) == 0 or n_candidates == 0:
        return np.zeros(n_candidates, dtype=np.float64)
    p = np.asarray(private, dtype=np.float64)
    c = np.asarray(candidates, dtype=np.float64)
    # ‖p − c‖² = ‖p‖² − 2 p·c + ‖c‖²; ‖p‖² is the same for every candidate of a unit.
    distances = (c * c).sum(axis=1)[None, :] - 2.0 * p @ c.T
    nearest = np.argmin(distances, axis=1)
    return np.bincount(nearest, minlength=n_candidates).astype(np.float64)


def threshold_counts(noisy: np.ndarray, threshold: float) -> np.ndarray:
    """Noisy counts below H become 0 (DPSDA's ``count_threshold``)."""
    noisy = np.asarray(noisy, dtype=np.float64)
    return np.where(noisy >= threshold, noisy, 0.0)


def winners(noisy: np.ndarray, kept: np.ndarray, fallback: int) -> tuple[list[int], bool]:
    """Candidates that passed H, most votes first; if none did, the ``fallback`` with the largest noisy counts.

    The second value says whether the fallback was used (no candidate passed the threshold).
    """
    order = np.argsort(-np.asarray(noisy, dtype=np.float64), kind="stable")
    passed = [int(i) for i in order if kept[i] > 0]
    if passed:
        return passed, False
    return [int(i) for i in order[: max(1, fallback)]], True
