"""A dataset's total spend as one valid (ε, δ) statement, from the ledger's charge rows.

Every charge row holds ρ (zCDP) and ``delta_part``: the δ that an (ε, δ) stage spends outright (phrase
discovery's δ_p; 0 for a Gaussian stage). A run that is δ_p-approximately ρ-zCDP composes with another
such run into a (Σδ_p)-approximately (Σρ)-zCDP history (Bun & Steinke 2016, §8, approximate zCDP), so a
dataset's total is

    ε(δ) = ε_zCDP(Σρ at δ − Σδ_p) + log(1 / (1 − Σδ_p)),   valid only for δ > Σδ_p

(``core.privacy.conversion.approx_rho_to_eps``; docs/method.md §2.0). The δ it is stated at is the cap's δ
when the dataset has a cap; otherwise the sum of its runs' δ (each run's certificate states its own δ, and
a run drawn again after a resume states the δ_p it spent again too), so a dataset of one run states exactly
its certificate's (ε, δ). A total whose Σδ_p has reached the δ it is stated at has no finite ε: the cap
refuses any run that would get there (``core.ledger.store``).

This is the one computation of a dataset total: the ledger listing, the cap check, the certificate's
cumulative figure, the resume quote and the desktop all read it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.privacy.conversion import approx_rho_to_eps

FALLBACK_DELTA = 1e-5  # the δ of a dataset whose ledger rows carry none (nothing charged yet)


@dataclass(frozen=True)
class Total:
    """Σρ and Σδ_p of some charges, stated as ε at ``delta`` (``math.inf`` when Σδ_p ≥ δ)."""

    rho: float
    delta_part: float
    delta: float
    epsilon: float

    @property
    def finite(self) -> bool:
        """Whether the statement holds at all (the δ spent outright is below the δ it is stated at)."""
        return math.isfinite(self.epsilon)


def stated(rho: float, delta_part: float, delta: float) -> Total:
    """Σρ and Σδ_p stated at ``delta`` (tight conversion); ε is 0 when nothing was spent."""
    if rho <= 0.0 and delta_part <= 0.0:
        return Total(0.0, 0.0, delta, 0.0)
    if not delta_part < delta:
        return Total(rho, delta_part, delta, math.inf)
    return Total(rho, delta_part, delta, approx_rho_to_eps(max(rho, 0.0), delta, delta_part, "tight"))


def run_deltas(charges: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Each run's δ as its certificate states it: the δ its charges were made at, plus the δ_p of any
    (ε, δ) stage it drew again after a resume (the same stage charged twice)."""
    planned: dict[str, float] = {}
    first_part: dict[tuple[str, str], float] = {}
    again: dict[str, float] = {}
    for row in charges:
        run = str(row["run_id"])
        planned[run] = max(planned.get(run, 0.0), float(row["delta"]))
        part = float(row.get("delta_part", 0.0) or 0.0)
        stage = (run, str(row["stage"]))
        if stage in first_part:
            again[run] = again.get(run, 0.0) + part
        else:
            first_part[stage] = part
    return {run: delta + again.get(run, 0.0) for run, delta in planned.items()}


def dataset_total(
    charges: Sequence[Mapping[str, Any]], cap: tuple[float, float] | None, plus_rho: float = 0.0,
    plus_delta_part: float = 0.0, plus_run_delta: float = 0.0,
) -> Total:
    """The dataset's total from its charge rows, and (``plus_*``) with what a planned run would add.

    ``plus_run_delta`` is the planned run's own δ: it enters the statement's δ only when there is no cap.
    """
    rows = [r for r in charges if r["kind"] == "charge"]
    rho = math.fsum(float(r["rho"]) for r in rows) + plus_rho
    part = math.fsum(float(r.get("delta_part", 0.0) or 0.0) for r in rows) + plus_delta_part
    if cap is not None:
        at = float(cap[1])
    else:
        at = math.fsum(run_deltas(rows).values()) + plus_run_delta
        at = min(at, 1.0 - 1e-12) if at > 0 else FALLBACK_DELTA
    return stated(rho, part, at)


COMBINING_WORDS = (
    "Privacy losses of several releases of one dataset combine to less than their sum; Privet keeps the exact "
    "total (zero-concentrated DP), and the part of δ that phrase discovery spends adds up run by run."
)
COMBINING_PLAIN = (
    "The privacy losses of several releases of one dataset combine to less than their sum; Privet keeps the "
    "exact total."
)
"""``COMBINING_WORDS`` without symbols, for the main path of the desktop and the certificate's first page."""
