"""A symptom the corpus writes in two words, written whole in the released forms (docs/method.md §2.6b).

A note's symptoms are often two words ("brittle nails", "facial swelling", "loss of appetite"); the keyword histogram
releases them as single words, so a topic's words hold "brittle" and "nails", and a symptom list wrote "nails, brittle
and itchy". The shipped form's writer joins such words with the public model (``lead_phrases.py``, round 4); the
writer in the corpus's own forms now asks the same scorer, after the public lead "Symptoms:", once per topic. The
phrase stands where its first word stood. It reads released words and the public model only: post-processing, no cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from core.methods.dp_synrag.write.lead_phrases import JoinScorer, joined, phrases_of
from core.methods.dp_synrag.write.roles import SYMPTOM
from core.models.base import LanguageModel

HEAD = "Symptoms:"  # the public lead the scorer continues: a list of what a patient reports


def listable(word: str, roles: Mapping[str, str | None]) -> bool:
    """A single released word a symptom list may hold (typed as a symptom or untyped)."""
    return word.isalpha() and roles.get(word) in (None, SYMPTOM)


def compound_topics(llm: LanguageModel, topics: Sequence[tuple[str, Sequence[str]]],
                    roles: Mapping[str, str | None]) -> list[tuple[str, tuple[str, ...]]]:
    """Each topic (its word, its other released words) with the other words' symptoms of two words joined (each pair
    scored once per run); unchanged unless a released word of the run is typed as a symptom (a clinical corpus)."""
    if SYMPTOM not in roles.values():
        return [(word, tuple(related)) for word, related in topics]
    scorer = JoinScorer(llm, HEAD)
    return [(word, tuple(joined(list(related), phrases_of(scorer, [w for w in related if listable(w, roles)]))))
            for word, related in topics]
