"""Conversion between ρ-zCDP and (ε, δ)-differential privacy.

Two conversions are offered (docs/method.md §1):

* ``"tight"`` — Canonne, Kamath & Steinke (2020, "The Discrete Gaussian for Differential Privacy",
  Prop. 12), obtained through Rényi DP: a ρ-zCDP mechanism is (α, ρα)-RDP for every α > 1, hence
  (ε, δ)-DP with

      ε(δ) = inf_{α>1}  ρα + log((α−1)/α) − (log δ + log α)/(α−1).

  This is what Privet reports.
* ``"loose"`` — the classical bound of Bun & Steinke (2016), ε = ρ + 2√(ρ log(1/δ)), which the seed
  write-up uses. Shown for comparison; it is never smaller than the tight value.

The infimum is taken numerically over x = log(α−1) (so α−1 ranges over many orders of magnitude):
a coarse grid locates the basin and a bounded Brent search refines it. Any α > 1 gives a *valid*
bound, so an imperfect minimiser can only over-state ε, never under-state it.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from core.common.errors import PrivetError

METHODS = ("tight", "loose")

# x = log(α − 1). α − 1 from e^-12 (≈6e-6) to e^45 (≈3.5e19) covers every ρ ≥ 1e-15 and δ ≥ 1e-300.
_X_LOW, _X_HIGH, _X_GRID = -12.0, 45.0, 1141


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise PrivetError(
            f"Unknown zCDP conversion {method!r}.", f"Use one of {', '.join(METHODS)} (privacy.conversion)."
        )


def _check_delta(delta: float) -> None:
    if not (0.0 < delta < 1.0) or math.isnan(delta):
        raise PrivetError(f"δ must lie strictly between 0 and 1 (got {delta}).", "Choose e.g. δ = 1/(10·n).")


def _tight_objective(x: np.ndarray | float, rho: float, log_delta: float) -> np.ndarray:
    """ρα + log((α−1)/α) − (log δ + log α)/(α−1) with α = 1 + e^x, computed without overflow."""
    x = np.asarray(x, dtype=np.float64)
    log_alpha = np.logaddexp(0.0, x)  # log(1 + e^x)
    alpha_minus_1 = np.exp(x)
    return np.asarray(rho * (1.0 + alpha_minus_1) + (x - log_alpha) - (log_delta + log_alpha) * np.exp(-x))


def _tight_eps(rho: float, delta: float) -> float:
    log_delta = math.log(delta)
    grid = np.linspace(_X_LOW, _X_HIGH, _X_GRID)
    values = _tight_objective(grid, rho, log_delta)
    i = int(np.nanargmin(values))
    best = float(values[i])
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    result = minimize_scalar(
        lambda x: float(_tight_objective(x, rho, log_delta)),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-12},
    )
    if result.success and math.isfinite(result.fun):
        # Any α gives a valid bound; keep the smallest one actually evaluated.
        best = min(best, float(_tight_objective(result.x, rho, log_delta)))
    return max(best, 0.0)


def rho_to_eps(rho: float, delta: float, method: str = "tight") -> float:
    """The ε for which a ρ-zCDP mechanism is (ε, δ)-DP.

    ``method="tight"`` uses the Canonne–Kamath–Steinke conversion, ``"loose"`` uses
    ε = ρ + 2√(ρ log(1/δ)). ρ = 0 gives ε = 0.
    """
    _check_method(method)
    _check_delta(delta)
    if not rho >= 0.0 or math.isinf(rho):
        raise PrivetError(f"ρ must be a finite number ≥ 0 (got {rho}).", "This is a bug in the caller.")
    if rho == 0.0:
        return 0.0
    if method == "loose":
        return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
    return _tight_eps(rho, delta)


def eps_to_rho(eps: float, delta: float, method: str = "tight") -> float:
    """The largest ρ whose (ε, δ) conversion satisfies ``rho_to_eps(ρ, δ, method) ≤ eps``.

    The conversions are increasing in ρ, so the answer is found by root bracketing (closed form for
    ``"loose"``); the returned ρ is checked to satisfy the inequality and sits a relative 1e-10 below
    the exact root (the small, safe side).
    """
    _check_method(method)
    _check_delta(delta)
    if not eps > 0.0 or math.isinf(eps):
        raise PrivetError(f"ε must be a finite number > 0 (got {eps}).", "Choose e.g. ε between 0.5 and 50.")
    if method == "loose":
        log_inv_delta = math.log(1.0 / delta)
        rho = (math.sqrt(log_inv_delta + eps) - math.sqrt(log_inv_delta)) ** 2
    else:
        hi = eps
        while rho_to_eps(hi, delta, method) <= eps:
            hi *= 2.0
        rho = brentq(lambda r: rho_to_eps(r, delta, method) - eps, 0.0, hi, xtol=1e-14, rtol=1e-14)
    # Leave a relative 1e-10 of headroom, so that a ledger which re-derives ρ from σ (rounding in the
    # last bits) still stays within ε, then step down until the bound provably holds.
    rho *= 1.0 - 1e-10
    while rho_to_eps(rho, delta, method) > eps:
        rho *= 1.0 - 1e-10
    return rho


# --- stages that are (ε, δ) rather than zCDP (docs/method.md §2.0) -------------------------------------


def _check_spent(delta: float, delta_spent: float) -> None:
    if not (0.0 <= delta_spent < delta):
        raise PrivetError(
            f"The δ spent by threshold stages ({delta_spent:g}) must be ≥ 0 and below the run's δ ({delta:g}).",
            "Lower the phrase stage's share of δ (phrases_delta_fraction).",
        )


REDRAWN_SUFFIX = " (redrawn after resume)"  # a record stage drawn again after a resume (core.run.pipeline)


def redrawn_delta(stages: list[dict]) -> float:
    """The δ spent again by (ε, δ) stages (phrase discovery) that a resume drew a second time: the
    record's δ is the run's planned δ plus this, and the ledger's rows hold the planned δ."""
    return math.fsum(float(s.get("delta", 0.0)) for s in stages if str(s.get("stage", "")).endswith(REDRAWN_SUFFIX))


def approx_rho_to_eps(rho: float, delta: float, delta_spent: float = 0.0, method: str = "tight") -> float:
    """The ε of a run that is ``delta_spent``-approximately ρ-zCDP, at the run's total ``delta``.

    Such a run (Bun & Steinke 2016, Def. 8.1: outside an event of probability ≤ ``delta_spent`` it is
    ρ-zCDP; DP phrase discovery is one) is (ε, δ)-DP with the zCDP part converted at δ − δ_spent and
    ε raised by log(1/(1 − δ_spent)), which covers conditioning on that event in the removal direction
    (docs/method.md §2.0). With ``delta_spent = 0`` this is :func:`rho_to_eps`.
    """
    _check_spent(delta, delta_spent)
    if delta_spent == 0.0:
        return rho_to_eps(rho, delta, method)
    return rho_to_eps(rho, delta - delta_spent, method) - math.log1p(-delta_spent)


def approx_eps_to_rho(eps: float, delta: float, delta_spent: float = 0.0, method: str = "tight") -> float:
    """The largest ρ with ``approx_rho_to_eps(ρ, δ, δ_spent) ≤ eps`` (the inverse the planner uses)."""
    _check_spent(delta, delta_spent)
    if delta_spent == 0.0:
        return eps_to_rho(eps, delta, method)
    return eps_to_rho(eps + math.log1p(-delta_spent), delta - delta_spent, method)
