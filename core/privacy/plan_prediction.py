"""Private prediction's cost, one for the plan and the charge (DP-SynRAG step 4, DP-Synth), and
DP-Synth's plan (docs/method.md §4): the whole budget on one prediction over disjoint batches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.privacy.accountant import Accountant
from core.privacy.conversion import eps_to_rho
from core.privacy.plan_base import STAGE_TOKENS
from core.privacy.plan_dp_synrag import DPSynRAGPlan
from core.privacy.release import BOUNDED_RANGE, Release, accountant_of
from core.runspec import DPSynRAGSpec

def prediction_charge(per_group_rho: float, L: int, n_redrawn: int, resumed: bool) -> float:
    """ρ to charge when private prediction (re)draws ``n_redrawn`` groups; ``per_group_rho`` is one group's cost.

    A fresh run charges the plan's L · per-group cost. A resumed run redraws only the groups that did
    not finish (their first, unfinished draw was charged and is thrown away). Groups overlap — a unit
    lies in at most L of them — so the redrawn groups cost min(L, number redrawn) · per-group cost by
    overlapping parallel composition. For disjoint groups (DP-Synth, L = 1) that is one group's cost.
    """
    return (min(int(L), int(n_redrawn)) if resumed else int(L)) * per_group_rho



@dataclass(frozen=True)
class PredictionCost:
    """The private-prediction stage as a plan fixes it: each group draws ``T`` tokens with logits clipped
    to ``c`` at temperature ``tau`` (each draw an exponential mechanism with ε = 2c/τ, ρ = ε²/8 =
    (c/τ)²/2), and a unit lies in at most ``overlap`` groups (L for DP-SynRAG, 1 for DP-Synth's disjoint
    batches). The plan's record and the stage's charge both come from here, so they cannot disagree.
    """

    T: int
    c: float
    tau: float
    overlap: int

    @property
    def token_epsilon(self) -> float:
        return 2.0 * self.c / self.tau

    @property
    def rho_per_group(self) -> float:
        acc = Accountant()
        acc.bounded_range(STAGE_TOKENS, self.token_epsilon, count=self.T)
        return acc.total_rho()

    def charge(self, n_redrawn: int, resumed: bool) -> float:
        """ρ to charge when the stage starts (``prediction_charge``: on a resume only the redrawn groups)."""
        return prediction_charge(self.rho_per_group, self.overlap, n_redrawn, resumed)



def dp_synrag_prediction_cost(plan: DPSynRAGPlan) -> PredictionCost:
    """DP-SynRAG's step 4: T tokens per cluster at the plan's c, each unit in at most L clusters."""
    return PredictionCost(T=plan.T, c=plan.c, tau=plan.tau, overlap=plan.L)



@dataclass(frozen=True)
class DPSynthPlan:
    """DP-Synth (docs/method.md §4): the whole budget goes to one private prediction over disjoint batches."""

    rho_total: float
    c_over_tau: float
    T: int
    tau: float

    def prediction_cost(self) -> PredictionCost:
        return PredictionCost(T=self.T, c=self.c_over_tau * self.tau, tau=self.tau, overlap=1)

    def releases(self) -> list[Release]:
        """One stage: private prediction over disjoint batches (each unit in one group)."""
        cost = self.prediction_cost()
        return [
            Release(
                STAGE_TOKENS, BOUNDED_RANGE,
                "Private prediction: one exponential-mechanism token draw per step, T steps",
                f"Private prediction: {cost.T} tokens per group, c/tau={cost.c / cost.tau:.4g}",
                epsilon=cost.token_epsilon, count=cost.T, parallel=cost.overlap,
            )
        ]

    def accountant(self) -> Accountant:
        return accountant_of(self.releases())



def plan_dp_synth(spec: DPSynRAGSpec, epsilon: float, delta: float, conversion: str = "tight") -> DPSynthPlan:
    """Each unit is in one batch, so the run costs one group's budget: ρ = (T/2)(c/τ)², i.e. c/τ = √(2ρ/T)."""
    rho = eps_to_rho(epsilon, delta, conversion)
    return DPSynthPlan(rho_total=rho, c_over_tau=math.sqrt(2.0 * rho / spec.T), T=int(spec.T), tau=float(spec.tau))
