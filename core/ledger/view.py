"""What the ledger holds, as people read it: what a dataset and a run have spent, what a run would add.

Every figure the desktop application and the command line show about spent or planned budget comes from
here, so both say the same thing. Charges are kept in ρ-zCDP in the ledger (``core.ledger.store``); ε is
always the tight conversion at a stated δ (``core.privacy.budget.epsilon_of``). The functions read any
object with the ledger's reading methods (``LedgerReader``), so this view does not import the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from core.privacy.budget import epsilon_of

FALLBACK_DELTA = 1e-5  # for a dataset whose ledger rows carry no δ at all


class LedgerReader(Protocol):
    """The reading side of ``core.ledger.Ledger`` this view needs."""

    def entries(self, dataset_fp: str | None = None) -> list[dict[str, Any]]: ...

    def cap(self, dataset_fp: str) -> tuple[float, float] | None: ...

    def spent_rho(self, dataset_fp: str, exclude_run: str | None = None) -> float: ...

    def dataset_name(self, dataset: str) -> str | None: ...

    def datasets(self) -> list[str]: ...


@dataclass(frozen=True)
class DatasetSpend:
    """What the ledger holds for one dataset. ε is at ``delta`` (the cap's δ, else the latest charge's)."""

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


def _dataset_delta(rows: list[dict[str, Any]], cap: tuple[float, float] | None, delta: float | None) -> float:
    if delta is not None and delta > 0:
        return delta
    if cap is not None:
        return float(cap[1])
    charges = [r for r in rows if r["kind"] == "charge" and float(r["delta"]) > 0]
    return float(charges[-1]["delta"]) if charges else FALLBACK_DELTA


def dataset_spend(ledger: LedgerReader, fingerprint: str, delta: float | None = None) -> DatasetSpend:
    """Spent budget, cap and counts of one dataset (ε at ``delta`` when given)."""
    rows = ledger.entries(fingerprint)
    cap = ledger.cap(fingerprint)
    at = _dataset_delta(rows, cap, delta)
    spent = float(ledger.spent_rho(fingerprint))
    charges = [r for r in rows if r["kind"] == "charge"]
    return DatasetSpend(
        fingerprint=fingerprint,
        name=ledger.dataset_name(fingerprint),
        spent_rho=spent,
        spent_epsilon=epsilon_of(spent, at),
        delta=at,
        cap_epsilon=float(cap[0]) if cap else None,
        cap_delta=float(cap[1]) if cap else None,
        n_runs=len({r["run_id"] for r in charges}),
        n_charges=len(charges),
        n_releases=sum(1 for r in rows if r["kind"] == "release"),
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

    @property
    def charged(self) -> bool:
        return self.rho > 0.0


def run_spend(ledger: LedgerReader, run_id: str, delta: float | None = None) -> RunSpend:
    """The charges of one run (any dataset); ε at ``delta`` or at the δ its charges recorded."""
    rows = [r for r in ledger.entries() if r["kind"] == "charge" and r["run_id"] == run_id]
    rho = sum(float(r["rho"]) for r in rows)
    at = delta if delta and delta > 0 else (float(rows[-1]["delta"]) if rows and rows[-1]["delta"] > 0 else FALLBACK_DELTA)
    return RunSpend(run_id, rho, epsilon_of(rho, at), at, [(str(r["stage"]), float(r["rho"])) for r in rows])


@dataclass(frozen=True)
class CumulativeSpend:
    """A dataset's total before and after a planned run, at one δ (the cap's when a cap is set)."""

    delta: float
    before_epsilon: float
    after_epsilon: float
    cap_epsilon: float | None

    @property
    def within_cap(self) -> bool:
        return self.cap_epsilon is None or self.after_epsilon <= self.cap_epsilon * (1 + 1e-9)


def cumulative_after(ledger: LedgerReader, fingerprint: str, planned_rho: float, delta: float) -> CumulativeSpend:
    """What the dataset will have spent after a run of ``planned_rho`` (ρ adds up across runs)."""
    cap = ledger.cap(fingerprint)
    at = float(cap[1]) if cap else delta
    spent = float(ledger.spent_rho(fingerprint))
    return CumulativeSpend(at, epsilon_of(spent, at), epsilon_of(spent + planned_rho, at),
                           float(cap[0]) if cap else None)


def charged_summary(spend: RunSpend, labels: dict[str, str] | None = None) -> str:
    """One sentence on what a stopped run cost, for the person who stopped it."""
    if not spend.charged:
        return "Nothing was charged to the privacy budget: the run stopped before any private step started."
    names = labels or {}
    stages = ", ".join(dict.fromkeys(names.get(s, s) for s, _ in spend.stages))
    return (f"The ledger records ε = {spend.epsilon:.3g} (at δ = {spend.delta:.2g}) charged for this run "
            f"({stages}). This stays spent.")
