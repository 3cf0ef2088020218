"""Budget figures as people read them: ε from ρ, what a dataset and a run have spent, what a run would add.

Every figure the desktop application and the command line show about spent or planned budget comes
from here, so both say the same thing. Charges are kept in ρ-zCDP in the ledger (``core.ledger``);
ε is always the tight conversion at a stated δ.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.privacy.conversion import rho_to_eps
from core.privacy.planner import public_delta

if TYPE_CHECKING:
    from core.ledger import Ledger
    from core.runspec import RunSpec

# A moderate default for new runs: the middle of the range the literature calls moderate (1 < ε ≤ 5).
RECOMMENDED_EPSILON = 4.0
EPSILON_TRADE_OFF = (
    "A smaller ε protects each person or document more strongly but makes the synthetic text more generic; "
    f"ε = {RECOMMENDED_EPSILON:g} is a common middle ground."
)
FALLBACK_DELTA = 1e-5  # for a dataset whose ledger rows carry no δ at all


def resolve_delta(spec: RunSpec) -> float:
    """The run's δ: the spec's, else the public default (1e-6, or 1/(10·N) for a stated bound N). Never from n."""
    return spec.privacy.delta if spec.privacy.delta > 0 else public_delta(spec.privacy.max_units)


def epsilon_of(rho: float, delta: float) -> float:
    """ε of a ρ-zCDP total at δ (tight conversion); 0 when nothing was spent."""
    if rho <= 0.0:
        return 0.0
    return float(rho_to_eps(rho, delta, "tight"))


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


def dataset_spend(ledger: Ledger, fingerprint: str, delta: float | None = None) -> DatasetSpend:
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


def all_datasets(ledger: Ledger) -> list[DatasetSpend]:
    return [ledger.summary(fp) for fp in ledger.datasets()]


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


def run_spend(ledger: Ledger, run_id: str, delta: float | None = None) -> RunSpend:
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


def cumulative_after(ledger: Ledger, fingerprint: str, planned_rho: float, delta: float) -> CumulativeSpend:
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
