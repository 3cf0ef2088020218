"""DP-Synth's plan (docs/method.md §4): the whole budget on one private prediction over disjoint batches."""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.privacy.accountant import Accountant
from core.privacy.conversion import eps_to_rho
from core.privacy.plan_base import STAGE_TOKENS
from core.privacy.release import BOUNDED_RANGE, Release, accountant_of
from core.specs.dp_synth import DPSynthSpec


@dataclass(frozen=True)
class DPSynthPlan:
    """DP-Synth (docs/method.md §4): the whole budget goes to one private prediction over disjoint batches."""

    rho_total: float
    c_over_tau: float
    T: int
    tau: float

    def releases(self) -> list[Release]:
        """One stage: private prediction over disjoint batches (each unit in one group), T tokens per group
        with logits clipped to c = (c/τ)·τ, each token (2c/τ)-bounded-range."""
        c = self.c_over_tau * self.tau
        return [
            Release(
                STAGE_TOKENS, BOUNDED_RANGE,
                "Private prediction: one exponential-mechanism token draw per step, T steps",
                f"Private prediction: {self.T} tokens per group, c/tau={c / self.tau:.4g}",
                epsilon=2.0 * c / self.tau, count=self.T, parallel=1, clip=c,
            )
        ]

    def accountant(self) -> Accountant:
        return accountant_of(self.releases())


def plan_dp_synth(spec: DPSynthSpec, epsilon: float, delta: float, conversion: str = "tight") -> DPSynthPlan:
    """Each unit is in one batch, so the run costs one group's budget: ρ = (T/2)(c/τ)², i.e. c/τ = √(2ρ/T)."""
    rho = eps_to_rho(epsilon, delta, conversion)
    return DPSynthPlan(rho_total=rho, c_over_tau=math.sqrt(2.0 * rho / spec.T), T=int(spec.T), tau=float(spec.tau))
