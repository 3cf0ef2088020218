"""The privacy guarantee in words: one voice for every screen, the command line and the certificate.

``guarantee_words(epsilon, delta, unit)`` returns the band an ε falls in (strong ≤ 1, moderate ≤ 5,
weak ≤ 20, none above: the usual reading of the literature and OpenDP's warnings), a headline, what
to do at that level, and a plain sentence on what the figure means for one person or document. Only
the strong band says that the corpus "reveals little"; from the weak band up the words say plainly
that the protection is weak or absent. δ has one sentence (``delta_words``).

What a release may be used for (``PERMITTED_USES``: internal only, approved researchers, public) is the
custodian's choice, printed on the certificate's first page next to the advice for its ε band
(``permitted_use_words``); a use wider than the band supports is said to be so in plain words.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

STRONG_MAX = 1.0
MODERATE_MAX = 5.0
WEAK_MAX = 20.0  # core.specs.runspec.WEAK_EPSILON: above it the spec warns loudly
BANDS = ("strong", "moderate", "weak", "none")


@dataclass(frozen=True)
class GuaranteeWords:
    """How one ε reads. ``band`` is one of ``BANDS``; every other field is a full sentence or phrase."""

    band: str
    headline: str  # "Strong protection"
    advice: str  # what the custodian should do at this level
    factor: str  # "at most about 55 times"
    meaning: str  # what the guarantee means for one unit, in one or two sentences
    delta: str  # δ in one sentence

    @property
    def reassuring(self) -> bool:
        """True only in the bands where calling the release protective is fair (strong, moderate)."""
        return self.band in ("strong", "moderate")


def band_of(epsilon: float) -> str:
    if epsilon <= STRONG_MAX:
        return "strong"
    if epsilon <= MODERATE_MAX:
        return "moderate"
    if epsilon <= WEAK_MAX:
        return "weak"
    return "none"


HEADLINES = {
    "strong": "Strong protection",
    "moderate": "Moderate protection",
    "weak": "Weak protection",
    "none": "No meaningful protection",
}
ADVICE = {
    "strong": "Expect the synthetic text to be more generic than the private documents.",
    "moderate": "A common choice for synthetic data in practice. Record why this budget was chosen.",
    "weak": f"The formal guarantee is weak above ε = {MODERATE_MAX:g} (common guidance warns at this level). Use it only "
            "with a recorded reason, e.g. to reproduce a published setting, and keep the release internal.",
    "none": f"Above ε = {WEAK_MAX:g} the guarantee gives no meaningful protection to any one person or document. "
            "Do not release the result; lower ε.",
}


PERMITTED_USES = ("internal", "approved_researchers", "public")
PERMITTED_USE_NAMES = {
    "internal": "Internal only",
    "approved_researchers": "Approved researchers",
    "public": "Public",
}
PERMITTED_USE_MEANINGS = {
    "internal": "The release stays inside the custodian's organisation.",
    "approved_researchers": "The release may be given to named researchers under a data use agreement approved by "
                            "the custodian or the IRB.",
    "public": "The release may be published for anyone to read.",
}
# The widest use each ε band supports (None: the result should not be released at all).
WIDEST_USE = {"strong": "public", "moderate": "approved_researchers", "weak": "internal", "none": None}


def permitted_use_words(use: str, epsilon: float) -> tuple[str, str, str]:
    """(name, meaning, advice) of a permitted use at ``epsilon``: the band's advice, and a plain warning when
    the chosen use is wider than that band supports."""
    band = band_of(epsilon)
    name = PERMITTED_USE_NAMES.get(use, use)
    advice = f"{HEADLINES[band]} (ε = {epsilon:.3g}): {ADVICE[band]}"
    widest = WIDEST_USE[band]
    if widest is None:
        advice += f" The custodian chose '{name}' nonetheless."
    elif PERMITTED_USES.index(use if use in PERMITTED_USES else "public") > PERMITTED_USES.index(widest):
        advice += (f" This is wider than common guidance supports at this ε (at most "
                   f"'{PERMITTED_USE_NAMES[widest].lower()}'); the custodian chose it nonetheless.")
    return name, PERMITTED_USE_MEANINGS.get(use, ""), advice


def factor_words(epsilon: float) -> str:
    """e^ε in words: 'at most about 55 times'; never 'inf'."""
    if epsilon >= 14:  # e^14 is about 1.2 million: the number in words ("about 490 million times")
        return f"at most {large_number_words(epsilon)} times"
    factor = math.exp(epsilon)
    if factor < 10:
        amount = f"{factor:.1f}"
    else:
        digits = len(str(int(factor))) - 2
        amount = f"{round(factor, -digits):,.0f}"
    return f"at most about {amount} times"


LARGE_NUMBER_NAMES = ((1e18, "quintillion"), (1e15, "quadrillion"), (1e12, "trillion"), (1e9, "billion"),
                      (1e6, "million"))


def large_number_words(epsilon: float) -> str:
    """e^ε of a large ε in words, two figures: 'about 490 million', 'about 4.9 billion'; from a thousand
    quintillion on, its number of digits: 'a 22-digit number of' (never a symbol such as e^ε, never 'inf')."""
    exponent = epsilon / math.log(10)  # e^ε = 10^exponent
    if not math.isfinite(exponent):
        return "an unlimited number of"
    if exponent >= 21:
        return f"a {math.floor(exponent) + 1:,}-digit number of"
    factor = 10.0**exponent
    scale, name = next(((v, n) for v, n in LARGE_NUMBER_NAMES if factor >= v), (1.0, ""))
    value = factor / scale
    figure = f"{value:.1f}" if value < 10 else f"{round(value, -(len(str(int(value))) - 2)):,.0f}"
    return f"about {figure.removesuffix('.0')} {name}"


def delta_words(delta: float) -> str:
    """δ in one sentence."""
    return (f"δ = {delta:.2g} is the small chance that the ε bound does not hold at all; it should be far smaller "
            "than one divided by the number of people or documents (Privet warns when it is not).")


def _meaning(band: str, factor: str, unit: str) -> str:
    bound = (f"Whether or not any one {unit} is in the private data, any result is {factor} as likely either "
             "way")
    if band == "strong":
        return f"{bound}: the corpus reveals little about any one {unit}."
    if band == "moderate":
        return (f"{bound}: this limits what can be learnt about any one {unit}, but someone who already knows "
                f"a lot about a {unit} may still learn something more.")
    if band == "weak":
        who = "who" if unit == "person" else "that"
        return (f"{bound}. That bound is loose: it does not stop someone from learning about a {unit} {who} stands "
                "out. Do not describe this release as protecting individuals.")
    return (f"{bound}. That bound is so loose that it gives no meaningful protection to any one {unit}. "
            "Do not rely on it.")


def guarantee_words(epsilon: float, delta: float, unit: str = "person") -> GuaranteeWords:
    """The guarantee of (ε, δ)-DP with ``unit`` ('person' or 'document') as the unit of privacy, in words."""
    band = band_of(epsilon)
    return GuaranteeWords(
        band=band,
        headline=HEADLINES[band],
        advice=ADVICE[band],
        factor=factor_words(epsilon),
        meaning=_meaning(band, factor_words(epsilon), unit),
        delta=delta_words(delta),
    )
