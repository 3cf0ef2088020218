"""The budget of labelled synthesis (docs/method.md §6.3): the run's ρ split between the class counts, the topic label
counts (label_mode "topic_labels") and the method, and the charge each class's run is given (parallel composition
across disjoint classes: the stages are charged once for all classes).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from core.common.errors import PrivetError
from core.methods.base import Method, PlanSummary
from core.privacy.class_counts import LABEL_SHARE, ClassCountsPlan, labels_delta, plan_class_counts
from core.privacy.conversion import approx_eps_to_rho, approx_rho_to_eps
from core.privacy.release import Charge
from core.specs.runspec import RunSpec


@dataclass(frozen=True)
class BudgetSplit:
    """The run's budget between the class counts, the topic label counts (label_mode "topic_labels") and the
    method (docs/method.md §6.3)."""

    counts: ClassCountsPlan
    inner_spec: RunSpec  # the spec the method plans and runs with: ε lowered to leave the counts their share
    inner_delta: float  # the run's δ less the label set union's δ_c
    inner: PlanSummary
    topic_rho: float = 0.0  # ρ_t of the topic label counts (0: per class, no such stage)


def split_budget(method: Method, spec: RunSpec, delta: float, n_units: int, topic_share: float = 0.0) -> BudgetSplit:
    """ρ_all = the run's zCDP budget at (ε, δ) less every δ spent outright; the class counts get
    ``LABEL_SHARE`` of it, the topic label counts ``topic_share`` and the method the rest (its ε lowered to
    match; checked, never rounded up)."""
    epsilon, conversion = spec.privacy.epsilon, spec.privacy.conversion
    delta_c = labels_delta(delta, spec.data.labels)
    inner_delta = delta - delta_c
    full = method.plan_summary(spec, inner_delta, n_units)
    spent = full.delta_spent + delta_c
    rho_all = approx_eps_to_rho(epsilon, delta, spent, conversion)
    counts = plan_class_counts(LABEL_SHARE * rho_all, delta_c, spec.data.labels)
    topic_rho = topic_share * rho_all
    inner_epsilon = approx_rho_to_eps(rho_all - counts.rho - topic_rho, inner_delta, full.delta_spent, conversion)
    for _ in range(60):  # the method's own inversion rounds down; step down further only if it did not
        inner_spec = replace(spec, privacy=replace(spec.privacy, epsilon=inner_epsilon))
        inner = method.plan_summary(inner_spec, inner_delta, n_units)
        total = approx_rho_to_eps(inner.rho_total + counts.rho + topic_rho, delta, inner.delta_spent + delta_c,
                                  conversion)
        if total <= epsilon * (1 + 1e-12):
            return BudgetSplit(counts, inner_spec, inner_delta, inner, topic_rho)
        inner_epsilon *= 1 - 1e-6 * 2 ** (_ / 4)
    raise PrivetError("The class-conditional budget split did not fit within ε.", "This is a bug; please report it.")


@dataclass
class ParallelCharge:
    """The charge each class's run is given: the k-th charge of a stage is charged only by as much as it
    exceeds the k-th charge of that stage in an earlier class (parallel composition across disjoint
    classes: their total is the largest class's, docs/method.md §6.3)."""

    charge: Charge
    charged: dict[tuple[str, int], tuple[float, float]] = field(default_factory=dict)  # (stage, k) -> (ρ, δ_p)
    _seen: dict[str, int] = field(default_factory=dict)  # this class's charges so far, per stage

    def next_class(self) -> None:
        self._seen = {}

    def __call__(self, stage: str, rho: float, description: str, delta_part: float = 0.0) -> None:
        k = self._seen.get(stage, 0)
        self._seen[stage] = k + 1
        before_rho, before_part = self.charged.get((stage, k), (0.0, 0.0))
        more_rho, more_part = max(0.0, rho - before_rho), max(0.0, delta_part - before_part)
        if (stage, k) in self.charged and more_rho <= 1e-15 and more_part <= 1e-18:
            return  # covered by the same stage of an earlier class
        first = (stage, k) not in self.charged
        self.charged[(stage, k)] = (max(rho, before_rho), max(delta_part, before_part))
        words = description if first else f"{description} (the part above what an earlier class was charged)"
        self.charge(stage, more_rho, words, delta_part=more_part)
