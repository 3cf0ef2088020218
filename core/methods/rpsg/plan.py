"""RPSG's plan (SPEC §3): the noise of its private choice among m candidate abstractions.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from core.privacy.accountant import Accountant
from core.privacy.conversion import eps_to_rho, rho_to_eps
from core.privacy.plan_base import STAGE_RPSG_SELECTION, _check_privacy_target, _reject
from core.privacy.release import GAUSSIAN, Release, accountant_of
from core.specs.rpsg import RPSGSpec
from core.specs.rules import check_value

@dataclass(frozen=True)
class RPSGPlan:
    """Noise for RPSG's private choice among m candidate abstractions of one seed, honestly accounted.

    The seed calibrates σ = √(2 ln(1.25/δ))/ε (Dwork & Roth, Thm A.1) as if the utility vector had
    sensitivity 1. It does not: the m utilities cosine(seed, candidate_j) all depend on the seed, so
    replacing the seed can move every one of them anywhere in [0, 1]; the L2 sensitivity of the vector
    is √m. The classic formula is moreover only proved for ε < 1. We therefore use
    σ = max(seed σ, σ_target) where σ_target = √(m / (2 ρ_target)) and ρ_target = eps_to_rho(ε, δ):
    never less noise than SPEC §3's formula, and enough that the selection, recorded as a Gaussian
    mechanism with Δ = √m (ρ = m/(2σ²), valid for every ε), meets the requested ε at δ.
    ``epsilon_guaranteed`` is the (ε, δ) actually achieved (≤ the requested ε); the index choice is
    post-processing of the noisy utilities (report-noisy-max).

    Scope, to be stated in plain words: this covers only *which* candidate is chosen for a seed,
    holding its candidate set fixed. The candidates are themselves computed from the private seed, each
    seed yields its own output, and the filters read private seeds, so RPSG has no end-to-end DP
    guarantee. Each seed is in exactly one selection (disjoint), so the per-seed cost is the total.
    """

    epsilon: float  # the ε requested
    delta: float
    m: int
    sigma: float
    sensitivity: float  # √m
    rho: float  # m / (2σ²)
    epsilon_guaranteed: float  # tight conversion of rho at delta
    epsilon_loose: float
    scope: str

    def releases(self) -> list[Release]:
        """One stage: the noisy utilities of every seed's candidates (disjoint per seed)."""
        return [
            Release(
                STAGE_RPSG_SELECTION, GAUSSIAN,
                "noisy utilities of the m candidate abstractions of each seed (disjoint per seed)",
                "noisy utilities of the m candidate abstractions of each seed (disjoint per seed)",  # RPSG charges the event
                sensitivity=self.sensitivity, sigma=self.sigma,
            )
        ]

    def accountant(self) -> Accountant:
        return accountant_of(self.releases())

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)



RPSG_SCOPE = (
    "The formal guarantee covers only which of the candidate abstractions is chosen for each seed. "
    "The candidates are computed from the private text and the filters read it, so the synthetic "
    "corpus as a whole has no differential-privacy guarantee; rely on the empirical audit."
)



def plan_rpsg(epsilon: float, delta: float, m: int = 5, conversion: str = "tight") -> RPSGPlan:
    """σ for RPSG's selection (at least SPEC §3's √(2 ln(1.25/δ))/ε, enough to meet ε at δ; see RPSGPlan)."""
    _check_privacy_target(epsilon, delta, conversion)
    _, problem = check_value(RPSGSpec.RULES["m"], m)  # the rule of [rpsg] m, the one statement of it
    if problem:
        raise _reject(f"The number of candidates m ({RPSGSpec.RULES['m'].meaning}) {problem}.", "Use m = 5.")
    seed_sigma = math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon
    target_sigma = math.sqrt(m / (2.0 * eps_to_rho(epsilon, delta, conversion)))
    sigma = max(seed_sigma, target_sigma)
    rho = m / (2.0 * sigma**2)
    return RPSGPlan(
        epsilon=float(epsilon),
        delta=float(delta),
        m=int(m),
        sigma=sigma,
        sensitivity=math.sqrt(m),
        rho=rho,
        epsilon_guaranteed=rho_to_eps(rho, delta, conversion),
        epsilon_loose=rho_to_eps(rho, delta, "loose"),
        scope=RPSG_SCOPE,
    )
