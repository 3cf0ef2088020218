"""Budget figures as people read them: ε from ρ at a stated δ, the run's δ, the suggested ε.

The desktop application and the command line take these from here, so both say the same thing. What a
dataset or a run has spent is read from the ledger by ``core.ledger.view``, which converts with
``epsilon_of``: ε is always the tight conversion at a stated δ.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.privacy.conversion import rho_to_eps
from core.privacy.planner import public_delta

if TYPE_CHECKING:
    from core.specs.runspec import RunSpec

# A moderate default for new runs: the middle of the range the literature calls moderate (1 < ε ≤ 5).
RECOMMENDED_EPSILON = 4.0
EPSILON_TRADE_OFF = (
    "A smaller ε protects each person or document more strongly but makes the synthetic text more generic; "
    f"ε = {RECOMMENDED_EPSILON:g} is a common middle ground."
)


def resolve_delta(spec: RunSpec) -> float:
    """The run's δ: the spec's, else the public default (1e-6, or 1/(10·N) for a stated bound N). Never from n."""
    return spec.privacy.delta if spec.privacy.delta > 0 else public_delta(spec.privacy.max_units)


def epsilon_of(rho: float, delta: float) -> float:
    """ε of a ρ-zCDP total at δ (tight conversion); 0 when nothing was spent."""
    if rho <= 0.0:
        return 0.0
    return float(rho_to_eps(rho, delta, "tight"))
