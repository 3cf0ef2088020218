"""The on-screen-only leakage check: private identifiers that appear in the synthetic text.

It looks for the person-column values and for rare capitalised name-like word pairs of
the private corpus inside the synthetic corpus (whole words, case-insensitive: the evaluation's
``NameMatcher``). The desktop shows it; the matching over private text happens here, in core. The result contains private names, so it
is shown to the custodian on screen and never written to a file or an export.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from core.evaluation.leakage import NameMatcher

NAME_PAIR = re.compile(r"\b([A-Z][a-z]{1,30} [A-Z][a-z]{1,30})\b")
MAX_UNITS_FOR_RARE = 3  # a name-like pair in at most this many units counts as identifying


@dataclass(frozen=True)
class InternalCheck:
    """How many private identifiers were looked for and which were found (on screen only)."""

    n_identifiers: int
    found: list[tuple[str, int]] = field(default_factory=list)  # (identifier, synthetic docs containing it)

    @property
    def n_found(self) -> int:
        return len(self.found)


def private_identifiers(unit_texts: Sequence[str], person_values: Iterable[str] = ()) -> set[str]:
    """Person values (at least 4 characters) plus name-like pairs that occur in few units."""
    ids = {p.strip() for p in person_values if len(p.strip()) >= 4}
    counts: Counter[str] = Counter()
    for text in unit_texts:
        counts.update(set(NAME_PAIR.findall(text)))
    ids.update(name for name, c in counts.items() if c <= MAX_UNITS_FOR_RARE)
    return ids


def find_identifiers(identifiers: Iterable[str], synthetic_texts: Sequence[str]) -> InternalCheck:
    """Count, for every identifier, the synthetic documents that contain it (case-insensitive, whole words)."""
    ids = sorted(set(identifiers))
    found = []
    for ident in ids:  # one matcher per identifier, so overlapping names are all counted
        matcher = NameMatcher([ident])
        n = sum(1 for t in synthetic_texts if matcher.find(t))
        if n:
            found.append((ident, n))
    found.sort(key=lambda pair: (-pair[1], pair[0]))
    return InternalCheck(n_identifiers=len(ids), found=found)
