"""The colour of a privacy budget ε on screen. The words come from ``core.common.wording`` (one voice for
every screen and the certificate); this module only adds a colour per band.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.common.wording import guarantee_words

COLOURS = {"strong": ("green", "#2e7d32"), "moderate": ("amber", "#ef8f00"), "weak": ("red", "#c62828"),
           "none": ("red", "#c62828")}


@dataclass(frozen=True)
class Band:
    """A colour band: ``name`` is 'green', 'amber' or 'red'; ``colour`` a hex RGB string; the words from core."""

    name: str
    colour: str
    headline: str
    guidance: str
    meaning: str
    delta: str


def band_for(epsilon: float, delta: float = 1e-6, unit: str = "person") -> Band:
    """The band an ε falls in: green ≤ 1, amber ≤ 5, red above (weak, or no meaningful protection above 20)."""
    words = guarantee_words(epsilon, delta, unit)
    name, colour = COLOURS[words.band]
    return Band(name, colour, words.headline, words.advice, words.meaning, words.delta)
