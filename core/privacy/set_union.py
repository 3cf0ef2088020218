"""DP set union by the Gaussian sparse histogram (SPEC §2.0; docs/method.md §2.0).

Each unit contributes a set of at most ``K`` distinct items (DP-SynRAG: phrases of its own text,
chosen from that unit alone). The items' counts over units are computed; every *non-zero* count gets
N(0, σ²); an item is released (with its noisy count) only when the noisy count exceeds the threshold τ.

Privacy (add/remove one unit u). On the items both neighbours hold, the count vectors differ by at most
1 in at most K coordinates: L2 sensitivity √K, a Gaussian mechanism with ρ = K/(2σ²) (thresholding is
post-processing). An item held by u alone has count 1 on one side and is absent on the other; it is
released with probability P(1 + N(0, σ²) > τ) = Φ̄((τ − 1)/σ), so by the union bound over u's at most K
items no item of u alone is released except with probability δ_set = K·Φ̄((τ − 1)/σ). The mechanism is
therefore δ_set-approximately ρ-zCDP (Bun & Steinke 2016, Def. 8.1): composed with the zCDP stages it
adds δ_set to the run's δ (:func:`core.privacy.conversion.approx_rho_to_eps`). Gopi et al. (ICML 2020,
"Differentially Private Set Union") and Wilkins, Kifer, Zhang & Karrer (2024, exact analysis of the
Gaussian sparse histogram mechanism) analyse the same mechanism, the latter exactly; this module uses
the simple union bound and the conditioning argument written out in docs/method.md §2.0, which is
conservative (never smaller than the exact δ), not tight.

This module holds the planning arithmetic (no torch: the planner imports it); the release itself is
:func:`core.privacy.mechanisms.gaussian_sparse_histogram`.

Sampling: the noise is OpenDP's exact discrete Gaussian (``core.privacy.mechanisms.gaussian_noise``) on
the grid 2^-40, whose σ may be raised by a relative ``SCALE_SLACK`` at most; τ is computed for
σ·(1 + SCALE_SLACK) plus one grid step, so the bound holds for the noise actually drawn.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from scipy.stats import norm

from core.common.errors import PrivetError

SCALE_SLACK = 1e-4  # the largest relative raise of σ the sampler may make for this mechanism
_GRID = 2.0**-40  # OpenDP's noise granularity (core.privacy.mechanisms)


def check_items(sigma: float, max_items: int) -> None:
    if not (sigma > 0.0) or math.isinf(sigma):
        raise PrivetError(f"The set-union noise σ must be a finite number > 0 (got {sigma}).", "This is a bug.")
    if int(max_items) != max_items or max_items < 1:
        raise PrivetError(f"Items per unit must be a whole number ≥ 1 (got {max_items}).", "This is a bug.")


def release_threshold(sigma: float, max_items: int, delta: float) -> float:
    """τ such that a unit's items held by no other unit are released with probability ≤ ``delta``
    in total: K·Φ̄((τ − 1)/σ') ≤ δ with σ' = σ·(1 + SCALE_SLACK), plus one grid step."""
    check_items(sigma, max_items)
    if not (0.0 < delta < 1.0):
        raise PrivetError(f"The set-union δ must lie strictly between 0 and 1 (got {delta}).", "This is a bug.")
    covering = sigma * (1.0 + SCALE_SLACK)
    return 1.0 + covering * float(norm.isf(delta / max_items)) + _GRID


def single_unit_release_bound(sigma: float, max_items: int, tau: float) -> float:
    """K·Φ̄((τ − 1)/σ): the union bound on releasing any item that only one unit holds (δ_set)."""
    check_items(sigma, max_items)
    return float(min(1.0, max_items * norm.sf((tau - 1.0) / sigma)))


def expected_releases(count: float, sigma: float, tau: float) -> float:
    """P(count + N(0, σ²) > τ): how likely an item held by ``count`` units is released (public planning)."""
    return float(norm.sf((tau - count) / sigma))


def item_counts(proposals: Sequence[Sequence[str]], max_items: int) -> Counter[str]:
    """How many units propose each item. Refuses a unit with repeated or more than ``max_items`` items:
    the sensitivity argument needs at most K distinct items per unit."""
    counts: Counter[str] = Counter()
    for items in proposals:
        distinct = set(items)
        if len(distinct) != len(items) or len(distinct) > max_items:
            raise PrivetError(
                f"A unit proposed {len(items)} items ({len(distinct)} distinct) where at most {max_items} distinct "
                "are allowed.",
                "This is a bug in the proposal step; please report it.",
            )
        counts.update(distinct)
    return counts
