"""Plain-language guidance for a privacy budget ε, in three colour bands.

The bands follow the usual reading of the literature and OpenDP's warnings: ε ≤ 1 is a
strong guarantee, ε ≤ 5 a moderate one, anything above is weak and needs a reason.
"""

from __future__ import annotations

from dataclasses import dataclass

GREEN_MAX = 1.0
AMBER_MAX = 5.0


@dataclass(frozen=True)
class Band:
    """A colour band: ``name`` is 'green', 'amber' or 'red'; ``colour`` a hex RGB string."""

    name: str
    colour: str
    headline: str
    guidance: str


GREEN = Band(
    "green",
    "#2e7d32",
    "Strong protection",
    "An attacker learns very little about any one person or document. Expect the synthetic "
    "text to be more generic.",
)
AMBER = Band(
    "amber",
    "#ef8f00",
    "Moderate protection",
    "A common choice for synthetic data in practice. Record why this budget was chosen.",
)
RED = Band(
    "red",
    "#c62828",
    "Weak protection",
    "The formal guarantee is weak above ε = 5 (OpenDP warns at this level). Use it only with a "
    "documented reason, e.g. to reproduce a published setting, and keep the release internal.",
)


def band_for(epsilon: float) -> Band:
    """The band an ε falls in: green ≤ 1, amber ≤ 5, red above."""
    if epsilon <= GREEN_MAX:
        return GREEN
    if epsilon <= AMBER_MAX:
        return AMBER
    return RED
