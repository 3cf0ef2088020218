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
    """Each document's topic (its word, the released words it drew) with its symptoms of two words written whole; the
    pairs are chosen among the words of all the documents of that topic word, so a document that drew "skin" without
    "rash" writes "skin rash" too (as the shipped form's writer does, ``realisation.topic_placements``). Each pair is
    scored once per run. Unchanged unless a released word of the run is typed as a symptom (a clinical corpus)."""
    if SYMPTOM not in roles.values():
        return [(word, tuple(related)) for word, related in topics]
    scorer = JoinScorer(llm, HEAD)
    pools: dict[str, dict[str, None]] = {}  # per topic word, the listable words of all its documents, in order
    for word, related in topics:
        pools.setdefault(word, {}).update(dict.fromkeys(w for w in related if listable(w, roles)))
    phrase_of = {word: phrases_of(scorer, list(pool)) for word, pool in pools.items()}
    return [(word, tuple(joined(list(related), phrase_of[word]))) for word, related in topics]
