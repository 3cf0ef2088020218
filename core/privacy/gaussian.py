"""The vector Gaussian mechanism (docs/method.md §1): OpenDP's exact sampler, NumPy's only in test mode.

Torch-free, so the accounting modules and the release object (``core.privacy.release``) may use it;
``core.privacy.mechanisms`` re-exports :func:`gaussian_noise` with the other mechanisms.
"""

from __future__ import annotations

import math

import numpy as np

from core.common.errors import PrivetError

_OPENDP_GRID_EXPONENT = -40  # noise granularity 2^-40 ≈ 9e-13
_SCALE_SLACK = 1e-6  # σ is raised by this relative amount so the grid rounding never costs extra ρ


def _opendp_gaussian(flat: np.ndarray, sigma: float, sensitivity: float, max_slack: float = 1.5) -> np.ndarray:
    import opendp.prelude as dp

    dp.enable_features("contrib")
    charged_rho = sensitivity**2 / (2.0 * sigma**2)
    slack = _SCALE_SLACK
    while slack <= max_slack:
        measurement = dp.m.make_gaussian(
            dp.vector_domain(dp.atom_domain(T=float, nan=False), size=int(flat.size)),
            dp.l2_distance(T=float),
            scale=sigma * (1.0 + slack),
            k=_OPENDP_GRID_EXPONENT,
        )
        if measurement.map(float(sensitivity)) <= charged_rho:
            return np.asarray(measurement(flat.tolist()), dtype=np.float64)
        slack *= 100.0
    raise PrivetError(
        f"OpenDP's Gaussian sampler cannot meet the charged ρ for sensitivity {sensitivity} and σ {sigma}.",
        "This is a bug; please report it.",
    )


def gaussian_noise(
    values: np.ndarray,
    sigma: float,
    rng: np.random.Generator | None = None,
    *,
    sensitivity: float = 1.0,
    max_slack: float = 1.5,
) -> np.ndarray:
    """``values`` + N(0, σ²) on every coordinate, same shape, float64.

    With ``rng=None`` (every private run) the noise is OpenDP's exact sampler, whose privacy map at
    ``sensitivity`` (the L2 sensitivity the caller charges, Δ²/(2σ²)) is checked before drawing. Passing
    ``rng`` switches to NumPy's floating-point sampler — only for the non-private test mode.
    ``max_slack`` bounds the relative raise of σ (a caller whose threshold assumes σ·(1 + max_slack)
    at most, e.g. :mod:`core.privacy.set_union`, lowers it; the draw is refused beyond it).
    """
    if not (sigma > 0.0) or math.isinf(sigma):
        raise PrivetError(f"The noise σ must be a finite number > 0 (got {sigma}).", "This is a bug in the caller.")
    array = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(array)):
        raise PrivetError("A statistic to be released contains NaN or infinite values.", "This is a bug; please report it.")
    if array.size == 0:
        return array.copy()
    if rng is not None:
        return array + rng.normal(0.0, sigma, size=array.shape)
    return _opendp_gaussian(array.ravel(), float(sigma), float(sensitivity), max_slack).reshape(array.shape)
