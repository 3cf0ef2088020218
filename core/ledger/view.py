"""What the ledger holds, as people read it: what a dataset and a run have spent, what a run would add.

Every figure the desktop application and the command line show about spent or planned budget comes from
here, so both say the same thing. Charges are kept in ρ-zCDP in the ledger (``core.ledger.store``), with the
δ that (ε, δ) stages spend outright; a total is always ``core.ledger.total``'s one (ε, δ) statement. The
functions read any object with the ledger's reading methods (``LedgerReader``), so this view does not import
the store.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.ledger.schema import RELEASE_STAGE
from core.ledger.total import FALLBACK_DELTA, dataset_total, run_deltas, stated

__all__ = ["FALLBACK_DELTA", "CumulativeSpend", "DatasetSpend", "RunSpend", "after_run_words", "all_datasets",
           "charged_summary", "cumulative_after", "dataset_spend", "run_spend", "runs_words", "spent_words"]


class LedgerReader(Protocol):
    """The reading side of ``core.ledger.Ledger`` this view needs."""

    def entries(self, dataset_fp: str | None = None) -> list[dict[str, Any]]: ...

    def cap(self, dataset_fp: str) -> tuple[float, float] | None: ...

    def spent_rho(self, dataset_fp: str, exclude_run: str | None = None) -> float: ...

    def dataset_name(self, dataset: str) -> str | None: ...

    def datasets(self) -> list[str]: ...


@dataclass(frozen=True)
class DatasetSpend:
    """What the ledger holds for one dataset. ε is the total at ``delta`` (the cap's δ, else the sum of its
    runs' δ), with ``spent_delta_part`` (phrase discovery's δ_p, summed) included (``core.ledger.total``)."""

    fingerprint: str
    name: str | None
    spent_rho: float
    spent_epsilon: float
    delta: float
    cap_epsilon: float | None
    cap_delta: float | None
    n_runs: int
    n_charges: int
    n_releases: int
    spent_delta_part: float = 0.0


def dataset_spend(ledger: LedgerReader, fingerprint: str, delta: float | None = None) -> DatasetSpend:
    """Spent budget, cap and counts of one dataset (the total stated at ``delta`` when given)."""
    rows = ledger.entries(fingerprint)
    cap = ledger.cap(fingerprint)
    total = dataset_total(rows, cap)
    if delta is not None and delta > 0:
        total = stated(total.rho, total.delta_part, delta)
    charges = [r for r in rows if r["kind"] == "charge"]
    return DatasetSpend(
        fingerprint=fingerprint,
        name=ledger.dataset_name(fingerprint),
        spent_rho=total.rho,
        spent_epsilon=total.epsilon,
        delta=total.delta,
        spent_delta_part=total.delta_part,
        cap_epsilon=float(cap[0]) if cap else None,
        cap_delta=float(cap[1]) if cap else None,
        n_runs=len({r["run_id"] for r in charges}),
        n_charges=len(charges),
        n_releases=sum(1 for r in rows if r["kind"] == "release" and r["stage"] == RELEASE_STAGE),
    )


def all_datasets(ledger: LedgerReader) -> list[DatasetSpend]:
    return [dataset_spend(ledger, fp) for fp in ledger.datasets()]


@dataclass(frozen=True)
class RunSpend:
    """What one run has been charged so far, from the ledger (nothing charged: ``rho == 0``)."""

    run_id: str
    rho: float
    epsilon: float
    delta: float
    stages: list[tuple[str, float]] = field(default_factory=list)  # (stage, ρ) in charge order
    delta_part: float = 0.0  # δ spent outright by its (ε, δ) stages (phrase discovery)

    @property
    def charged(self) -> bool:
        return self.rho > 0.0


def run_spend(ledger: LedgerReader, run_id: str, delta: float | None = None) -> RunSpend:
    """The charges of one run (any dataset); ε at ``delta`` or at the δ its certificate states (the δ its charges
    recorded, plus any δ_p drawn again after a resume), δ_p included: the same ε its certificate shows."""
    rows = [r for r in ledger.entries() if r["kind"] == "charge" and r["run_id"] == run_id]
    at = delta if delta and delta > 0 else run_deltas(rows).get(run_id, FALLBACK_DELTA) or FALLBACK_DELTA
    total = stated(sum(float(r["rho"]) for r in rows), sum(float(r.get("delta_part", 0.0) or 0.0) for r in rows), at)
    return RunSpend(run_id, total.rho, total.epsilon, at, [(str(r["stage"]), float(r["rho"])) for r in rows],
                    total.delta_part)


@dataclass(frozen=True)
class CumulativeSpend:
    """A dataset's total before and after a planned run, at one δ (the cap's when a cap is set). ``spent_epsilon``
    at ``spent_delta`` is the total before the run as the ledger states it (``dataset_spend``: the figure every page
    shows as spent); ``before_epsilon`` is the same total restated at the δ of the total after the run."""

    delta: float
    before_epsilon: float
    after_epsilon: float
    cap_epsilon: float | None
    spent_epsilon: float = 0.0
    spent_delta: float = 0.0
    n_runs: int = 0

    @property
    def restated(self) -> bool:
        """Whether the total after the run is stated at another δ than the total spent so far (no cap: a dataset's
        total is stated at the sum of its runs' δ, so each run moves it)."""
        return self.n_runs > 0 and not math.isclose(self.delta, self.spent_delta, rel_tol=1e-9)

    @property
    def within_cap(self) -> bool:
        return self.cap_epsilon is None or self.after_epsilon <= self.cap_epsilon * (1 + 1e-9)


def cumulative_after(ledger: LedgerReader, fingerprint: str, planned_rho: float, delta: float,
                     planned_delta_part: float = 0.0) -> CumulativeSpend:
    """What the dataset will have spent after a run of ``planned_rho`` and ``planned_delta_part`` at ``delta``
    (``core.ledger.total``: ρ and δ_p add up across runs). Both totals are stated at the δ of the total after
    the run: the cap's, else the runs' δ summed with this one's."""
    rows, cap = ledger.entries(fingerprint), ledger.cap(fingerprint)
    after = dataset_total(rows, cap, planned_rho, planned_delta_part, delta)
    before = dataset_total(rows, cap)
    runs = len({r["run_id"] for r in rows if r["kind"] == "charge"})
    return CumulativeSpend(after.delta, stated(before.rho, before.delta_part, after.delta).epsilon, after.epsilon,
                           float(cap[0]) if cap else None, before.epsilon, before.delta, runs)


def runs_words(n_runs: int) -> str:
    """'1 run', '2 runs': the ledger's runs, never its charges (a run is charged once per stage)."""
    return f"{n_runs} run{'' if n_runs == 1 else 's'}"


def spent_words(epsilon: float, delta: float, n_runs: int) -> str:
    """What a dataset has spent, as every page states it: 'ε = 4 at δ = 1e-06 in 1 run' ('nothing yet')."""
    if n_runs <= 0:
        return "nothing yet"
    return f"ε = {epsilon:.3g} at δ = {delta:.2g} in {runs_words(n_runs)}"


AFTER_RUN_LEAD = "After this run, this dataset's total will be"


def after_run_words(after: CumulativeSpend, lead: str = AFTER_RUN_LEAD) -> str:
    """The dataset's total after a planned run, with the total spent so far as every page states it; when the total
    after is stated at another δ, why, in words, and what the runs so far come to at that δ."""
    text = (f"{lead} ε ≈ {after.after_epsilon:.3g} at δ = {after.delta:.2g}. "
            f"Spent so far: {spent_words(after.spent_epsilon, after.spent_delta, after.n_runs)}.")
    if after.restated:
        text += (f" Why the δ changes: with no cap, a dataset's total is stated at the sum of its runs' δ, so this "
                 f"run's δ moves it from {after.spent_delta:.2g} to {after.delta:.2g}; at that larger δ the runs so far "
                 f"come to ε ≈ {after.before_epsilon:.3g}, the same privacy loss stated another way.")
    return text


def charged_summary(spend: RunSpend, labels: dict[str, str] | None = None) -> str:
    """One sentence on what a stopped run cost, for the person who stopped it."""
    if not spend.charged:
        return "Nothing was charged to the privacy budget: the run stopped before any private step started."
    names = labels or {}
    stages = ", ".join(dict.fromkeys(names.get(s, s) for s, _ in spend.stages))
    return (f"The ledger records ε = {spend.epsilon:.3g} (at δ = {spend.delta:.2g}) charged for this run "
            f"({stages}). This stays spent.")
