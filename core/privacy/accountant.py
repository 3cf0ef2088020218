"""The ρ-zCDP ledger of one run (docs/method.md §1).

Every private step is recorded as a :class:`PrivacyEvent`:

* Gaussian mechanism with L2 sensitivity Δ and noise σ: ρ = Δ²/(2σ²).
* ε-bounded-range mechanism (the exponential mechanism sampling ∝ exp(ε·u/(2Δ)) where each
  neighbour's utility change lies in an interval of width 2Δ; Cesar & Rogers 2021): ρ = ε²/8.
* Gaussian sparse histogram / DP set union (``core.privacy.set_union``): each unit holds ≤ K items,
  noise σ on the non-zero counts, release above a threshold: ρ = K/(2σ²) *and* a δ (the chance that
  an item of one unit alone is released). Its ``delta`` adds to the run's δ: the zCDP total is
  converted at δ − Σ event δ (``core.privacy.conversion.approx_rho_to_eps``).

Composition:

* Sequential composition adds ρ: ``count`` applications of the same mechanism cost ``count``·ρ.
* Overlapping parallel composition: a mechanism run once on each of R subsets costs
  ``parallel``·ρ in total (not R·ρ) **provided** (a) whether a unit belongs to a subset depends only
  on that unit and on outputs already released under DP, and (b) every unit lies in at most
  ``parallel`` (= L) subsets. Then a neighbouring corpus changes at most L of the per-subset runs,
  and each run is charged once. For disjoint subsets (L = 1) this is ordinary parallel composition.
  The caller is responsible for the membership condition; the accountant records the multiplier.

An event's total cost is ``rho * count * parallel_multiplier``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from core.common.errors import PrivetError
from core.privacy.conversion import approx_rho_to_eps

MECHANISMS = ("gaussian", "bounded_range", "gaussian_sparse_histogram")


@dataclass(frozen=True)
class PrivacyEvent:
    """One charged step: ``count`` sequential applications, each ρ-zCDP, on ≤ L overlapping subsets."""

    stage: str
    mechanism: str  # "gaussian" | "bounded_range"
    rho: float  # ρ of one application
    count: int = 1
    parallel_multiplier: int = 1  # L for overlapping parallel composition, 1 otherwise
    parameters: dict[str, float] = field(default_factory=dict)
    description: str = ""
    delta: float = 0.0  # the δ this step adds to the run's δ (0 for pure zCDP mechanisms)

    @property
    def total_rho(self) -> float:
        return self.rho * self.count * self.parallel_multiplier

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["total_rho"] = self.total_rho
        return d


def _positive(name: str, value: float) -> None:
    if not (value > 0.0) or math.isinf(value):
        raise PrivetError(f"{name} must be a finite number > 0 (got {value}).", "This is a bug in the caller.")


def _at_least_one(name: str, value: int) -> None:
    if int(value) != value or value < 1:
        raise PrivetError(f"{name} must be a whole number ≥ 1 (got {value}).", "This is a bug in the caller.")


# -- the privacy maps: each mechanism's event (its ρ) from its parameters, the one statement of each formula --


def _event(
    stage: str, mechanism: str, rho: float, count: int, parallel: int, params: dict[str, float], description: str,
    delta: float = 0.0,
) -> PrivacyEvent:
    _at_least_one("The count", count)
    _at_least_one("The parallel multiplier", parallel)
    return PrivacyEvent(stage, mechanism, rho, int(count), int(parallel), params, description, delta)


def gaussian_event(
    stage: str, sensitivity: float, sigma: float, count: int = 1, parallel: int = 1, description: str = ""
) -> PrivacyEvent:
    """A Gaussian mechanism with L2 ``sensitivity`` and noise ``sigma``: ρ = Δ²/(2σ²)."""
    _positive("The sensitivity", sensitivity)
    _positive("The noise σ", sigma)
    rho = sensitivity**2 / (2.0 * sigma**2)
    params = {"sensitivity": float(sensitivity), "sigma": float(sigma)}
    return _event(stage, "gaussian", rho, count, parallel, params, description)


def bounded_range_event(
    stage: str, epsilon: float, count: int = 1, parallel: int = 1, description: str = ""
) -> PrivacyEvent:
    """An ε-bounded-range mechanism (e.g. the exponential mechanism): ρ = ε²/8."""
    _positive("The exponential-mechanism ε", epsilon)
    return _event(stage, "bounded_range", epsilon**2 / 8.0, count, parallel, {"epsilon": float(epsilon)}, description)


def sparse_histogram_event(
    stage: str, max_items: int, sigma: float, delta: float, threshold: float, description: str = ""
) -> PrivacyEvent:
    """A Gaussian sparse histogram (DP set union): ≤ ``max_items`` items per unit, noise ``sigma``, release above
    ``threshold``; ρ = K/(2σ²) on the common support, plus ``delta`` (docs/method.md §2.0)."""
    _at_least_one("The items per unit", max_items)
    _positive("The noise σ", sigma)
    if not (0.0 < delta < 1.0):
        raise PrivetError(f"The set-union δ must lie strictly between 0 and 1 (got {delta}).", "This is a bug.")
    rho = max_items / (2.0 * sigma**2)
    params = {
        "sensitivity": math.sqrt(max_items),
        "sigma": float(sigma),
        "threshold": float(threshold),
        "delta": float(delta),
        "items_per_unit": float(max_items),
    }
    return _event(stage, "gaussian_sparse_histogram", rho, 1, 1, params, description, float(delta))


class Accountant:
    """Collects the privacy events of one run and converts their sum to (ε, δ)."""

    def __init__(self) -> None:
        self._events: list[PrivacyEvent] = []

    @property
    def events(self) -> list[PrivacyEvent]:
        return list(self._events)

    def record(self, event: PrivacyEvent) -> PrivacyEvent:
        """Record ``event`` (a plan's stage records the event of its own privacy map, ``Release.event``)."""
        self._events.append(event)
        return event

    def gaussian(
        self, stage: str, sensitivity: float, sigma: float, count: int = 1, parallel: int = 1, description: str = ""
    ) -> PrivacyEvent:
        """Record a Gaussian mechanism (``gaussian_event``: ρ = Δ²/(2σ²))."""
        return self.record(gaussian_event(stage, sensitivity, sigma, count, parallel, description))

    def bounded_range(
        self, stage: str, epsilon: float, count: int = 1, parallel: int = 1, description: str = ""
    ) -> PrivacyEvent:
        """Record an ε-bounded-range mechanism (``bounded_range_event``: ρ = ε²/8)."""
        return self.record(bounded_range_event(stage, epsilon, count, parallel, description))

    def total_rho(self) -> float:
        """Sequential composition of all events."""
        return math.fsum(e.total_rho for e in self._events)

    def per_stage(self) -> dict[str, float]:
        """Total ρ per stage, in the order stages were first recorded."""
        out: dict[str, float] = {}
        for e in self._events:
            out[e.stage] = out.get(e.stage, 0.0) + e.total_rho
        return out

    def delta_spent(self) -> float:
        """The δ the recorded (ε, δ) steps add (sequential composition adds δ)."""
        return math.fsum(e.delta for e in self._events)

    def epsilon(self, delta: float, method: str = "tight") -> float:
        """The (ε, δ) guarantee of everything recorded so far (δ = the run's total δ)."""
        return approx_rho_to_eps(self.total_rho(), delta, self.delta_spent(), method)

    def to_dicts(self) -> list[dict[str, Any]]:
        return [e.to_dict() for e in self._events]
