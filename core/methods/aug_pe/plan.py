"""Aug-PE's plan (SPEC §4): T Gaussian vote histograms, the budget split equally over them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from core.privacy.accountant import Accountant
from core.privacy.conversion import eps_to_rho, rho_to_eps
from core.privacy.plan_base import STAGE_AUG_PE, _check_privacy_target
from core.privacy.release import GAUSSIAN, Release, accountant_of
from core.specs.runspec import AugPESpec
from core.specs.rules import check_section

def aug_pe_stage(iteration: int) -> str:
    """The ledger stage of iteration t (1-based): one charge per vote histogram."""
    return f"{STAGE_AUG_PE}_{iteration}"



@dataclass(frozen=True)
class AugPEPlan:
    """Noise of Aug-PE's vote histograms: T Gaussian mechanisms with Δ = 1, composed sequentially.

    Each unit casts one vote per iteration (for its nearest candidate), so adding or removing a unit
    changes one count by 1: L2 sensitivity Δ = 1 and ρ_t = 1/(2σ²). The target ρ is split equally
    over the T iterations: ρ_t = ρ/T, σ = √(T/(2ρ)). ``threshold`` is H in votes (the spec's value, or
    2σ when the spec says 0); it is post-processing of the noisy counts and costs nothing.
    """

    epsilon: float
    delta: float
    conversion: str
    iterations: int
    rho_total: float
    rho_per_iteration: float
    sigma: float
    threshold: float
    epsilon_tight: float
    epsilon_loose: float

    def releases(self) -> list[Release]:
        """One Gaussian vote histogram per iteration (Δ = 1), composed sequentially."""
        return [
            Release(
                aug_pe_stage(t), GAUSSIAN,
                f"noisy nearest-neighbour vote histogram, iteration {t} of {self.iterations}",
                f"Aug-PE vote histogram, iteration {t} of {self.iterations}: Gaussian noise sigma={self.sigma:.4g}, "
                "one vote per unit (L2 sensitivity 1)",
                sensitivity=1.0, sigma=self.sigma,
            )
            for t in range(1, self.iterations + 1)
        ]

    def release(self, iteration: int) -> Release:
        """The vote histogram of iteration t (1-based)."""
        return self.releases()[iteration - 1]

    def accountant(self) -> Accountant:
        return accountant_of(self.releases())

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)



def plan_aug_pe(spec: AugPESpec, epsilon: float, delta: float, conversion: str = "tight") -> AugPEPlan:
    """Split (ε, δ) equally over Aug-PE's T vote histograms and derive σ and H."""
    _check_privacy_target(epsilon, delta, conversion)
    check_section(spec, "aug_pe")  # AugPESpec.RULES: iterations, population, variations, the threshold H, ...
    iterations = int(spec.iterations)
    rho_total = eps_to_rho(epsilon, delta, conversion)
    rho_t = rho_total / iterations
    sigma = math.sqrt(1.0 / (2.0 * rho_t))
    return AugPEPlan(
        epsilon=float(epsilon),
        delta=float(delta),
        conversion=conversion,
        iterations=iterations,
        rho_total=rho_total,
        rho_per_iteration=rho_t,
        sigma=sigma,
        threshold=float(spec.threshold) if spec.threshold > 0 else 2.0 * sigma,
        epsilon_tight=rho_to_eps(rho_total, delta, "tight"),
        epsilon_loose=rho_to_eps(rho_total, delta, "loose"),
    )
