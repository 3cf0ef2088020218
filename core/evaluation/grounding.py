"""Grounding: does each synthetic document state only what was released (issue 56, item 4)?

A document of DP-SynRAG is written from its topic's released words and, when the corpus's own forms were
released, in one of those forms. Whatever *fact* it states beyond them, the writer invented. Two shares:

* ``unsupported_share`` — the share of documents holding at least one **unsupported content term**. A content
  term is a phrase that states a fact a reader would take at its word:

  - a condition, drug or symptom of the corpus's catalogue (the demo generator's truth, ``diseases.json``);
  - an ICD-10-CM condition or symptom name (the shipped public lists, ``resources/vocab/icd10-cm*.txt``) or a
    general disease word (``GENERAL_CONDITIONS``: "cancer", "tumour", …);
  - a word public morphology marks as a drug or a condition (a WHO INN stem or a condition suffix on a word that
    is no common English word; ``core.methods.dp_synrag.write.roles.morphology_role``);
  - an institution (``INSTITUTIONS``: "court", "police", "school", …);
  - a date (a month name beside a number, a weekday, or a numeric date), unless a released form holds a date (a
    month slot, or a numeric date such as "[number]/[number]/[number]").

  A dosage form ("tablets") alone and the generic heads of ``GENERIC`` ("illness", "pain") state no fact.

  A term is *supported* when each of its words is among the released words of the document's topic (the topic
  word, its co-keywords and the words merged into it) or the released forms' fixed wording. The document's topic
  is the released topic whose words it holds most of (the writer puts every released word of a topic in its
  document), read from the run's checkpoints (released values only).
* ``mix_share`` — the share of documents whose catalogue terms belong to no single condition: a document naming
  terms of two conditions where none of the catalogue's conditions holds all of them (a symptom shared by two
  conditions mixes nothing).

Evaluation only: it reads the synthetic documents, the run's released values and public lists, never a private
document, and writes counts and the synthetic corpus's own most frequent unsupported terms.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from core.methods.dp_synrag.write.content_terms import (
    content_terms,
    english_words,
    holds_date,
    public_terms,
    words_of,
)

TOP_TERMS = 15


@dataclass(frozen=True)
class Release:
    """What a run released that a document may state: each topic's words, and the forms' fixed words."""

    topics: tuple[frozenset[str], ...] = ()
    form_words: frozenset[str] = frozenset()
    month_slot: bool = False


@dataclass
class GroundingScore:
    documents: int = 0
    unsupported: int = 0
    mixed: int = 0
    terms: Counter = field(default_factory=Counter)

    def to_dict(self) -> dict:
        n = self.documents
        return {"documents": n, "unsupported_documents": self.unsupported, "mix_documents": self.mixed,
                "unsupported_share": self.unsupported / n if n else None,
                "mix_share": self.mixed / n if n else None,
                "unsupported_terms": dict(self.terms.most_common(TOP_TERMS))}


def catalogue_conditions(path: Path) -> dict[str, frozenset[str]]:
    """The demo catalogue (``diseases.json``): condition -> its terms (its name, drug and symptoms), lower-cased."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return {d["name"].lower(): frozenset([d["name"].lower(), d["drug"].lower(), *(s.lower() for s in d["symptoms"])])
            for d in data["diseases"]}


def read_release(run_dir: Path) -> Release:
    """The released topics and forms of a finished DP-SynRAG run, from its checkpoints (DP outputs only)."""
    root = Path(run_dir) / "checkpoints" / "dp_synrag"
    topics: list[frozenset[str]] = []
    form_words: set[str] = set()
    month = False
    for folder in [root, *sorted(p for p in root.glob("class-*") if p.is_dir())]:
        shape = folder / "corpus-shape.json"
        if shape.is_file():
            for t in json.loads(shape.read_text(encoding="utf-8"))["shape"]["topics"]:
                topics.append(frozenset(w for item in [t["word"], *t.get("co_keywords", ()), *t.get("merged_words", ())]
                                        for w in words_of(item)))
        forms = folder / "form_skeletons.json"
        if forms.is_file():
            for skeleton in json.loads(forms.read_text(encoding="utf-8")).get("items", []):
                month = month or holds_date(skeleton)
                form_words.update(words_of(re.sub(r"\[(name|number|month|text)\]", " ", skeleton)))
    return Release(tuple(topics), frozenset(form_words), month)


def topic_of(document_words: set[str], release: Release) -> frozenset[str]:
    """The released topic whose words, other than the forms' fixed wording, the document holds most of (empty
    when it holds none)."""
    words = document_words - release.form_words
    best = max(release.topics, key=lambda t: len(t & words), default=frozenset())
    return best if best & words else frozenset()


def mixes_conditions(terms: Iterable[str], conditions: Mapping[str, frozenset[str]]) -> bool:
    """Whether catalogue ``terms`` span two conditions with no single condition holding them all."""
    named = {t for t in terms if any(t in c for c in conditions.values())}
    if not named:
        return False
    owners = {name for name, c in conditions.items() if named & c}
    return len(owners) > 1 and not any(named <= c for c in conditions.values())


def grounding(documents: Sequence[str], release: Release, conditions: Mapping[str, frozenset[str]],
              vocabulary: frozenset[str] | None = None, english: frozenset[str] | None = None) -> GroundingScore:
    """Both shares of ``documents`` (module docstring)."""
    english = english_words() if english is None else english
    catalogue = frozenset(t for c in conditions.values() for t in c)
    vocabulary = (public_terms() if vocabulary is None else vocabulary) | catalogue
    score = GroundingScore(documents=len(documents))
    for document in documents:
        terms = content_terms(document, vocabulary, english, release.month_slot)
        supported = topic_of(set(words_of(document)), release) | release.form_words
        unsupported = [t for t in terms if not set(words_of(t)) <= supported]
        score.unsupported += bool(unsupported)
        score.terms.update(set(unsupported))
        score.mixed += mixes_conditions(terms, conditions)
    return score
