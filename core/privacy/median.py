"""A DP median over a public range (docs/method.md §6.2): the exponential mechanism on intervals.

Values are clipped to a public range [low, high] and sorted; [low, high] is cut at the sorted values into
n + 1 intervals. Every x in interval j (j values below it, n − j at or above) has utility
u(x) = −|j − (n − j)|. Adding or removing one unit moves j or n − j by one, so u changes by at most 1 for
every x, and the base measure (uniform on [low, high]) does not depend on the data: sampling x with density
∝ exp(ε·u(x)/2) is ε-bounded-range, ρ = ε²/8 (Cesar & Rogers 2021), as the threshold mechanism of §2.3.
Sampled the same way: an interval by Gumbel-max over log(width) + ε·u/2 in float64, then x uniform in it,
from a generator keyed by OS entropy (the test mode's seeded one only in the test mode).
"""

from __future__ import annotations

import math

import numpy as np

from core.privacy.randomness import secure_rng


def median_intervals(values: np.ndarray, low: float, high: float, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """The interval boundaries [low, v_(1), …, v_(n), high] and each interval's unnormalised log-probability."""
    if not (epsilon > 0.0) or math.isinf(epsilon):
        raise ValueError(f"the median's epsilon must be a finite number > 0, got {epsilon}")
    if not low < high:
        raise ValueError(f"the public range must have low < high, got [{low}, {high}]")
    clipped = np.clip(np.asarray(values, dtype=np.float64).ravel(), low, high)
    if np.any(np.isnan(clipped)):
        raise ValueError("a value is NaN")
    n = clipped.size
    bounds = np.concatenate(([low], np.sort(clipped), [high]))
    widths = np.diff(bounds)
    below = np.arange(n + 1)
    utility = -np.abs(below - (n - below)).astype(np.float64)
    with np.errstate(divide="ignore"):
        log_weight = np.where(widths > 0.0, np.log(np.where(widths > 0.0, widths, 1.0)), -np.inf)
    return bounds, log_weight + 0.5 * float(epsilon) * utility


def dp_median(values: np.ndarray, low: float, high: float, epsilon: float,
              rng: np.random.Generator | None = None) -> float:
    """A median of ``values`` clipped to [low, high], ε-bounded-range (ρ = ε²/8; the caller charges it)."""
    rng = rng if rng is not None else secure_rng()
    bounds, log_p = median_intervals(values, low, high, epsilon)
    index = int(np.argmax(log_p + rng.gumbel(size=log_p.shape)))
    lo, hi = bounds[index], bounds[index + 1]
    return float(min(lo + rng.random() * (hi - lo), hi))
