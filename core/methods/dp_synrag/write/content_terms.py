"""Content terms: the phrases of a text that state a fact a reader takes at its word (issue 56, item 4).

A content term is a condition or symptom name of the shipped public lists (ICD-10-CM, ``resources/vocab``), a general
disease word (``GENERAL_CONDITIONS``), a word public morphology marks as a drug or a condition (a WHO INN stem or a
condition suffix on a word that is no common English word; ``roles.morphology_role``), an institution
(``INSTITUTIONS``) or a date (a month name beside a number, a weekday, a numeric date). A dosage form ("tablets")
alone and the generic heads of ``GENERIC`` ("illness", "pain") state no fact.

The form writer drops a document whose own words (the ``[text]`` slots the model filled) state a term no released
word of its topic supports (``form_writer.FormWriter``); the evaluation's grounding (``core.evaluation.grounding``)
counts the documents that hold one. Public lists and the text only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from core.common.paths import resources_dir
from core.methods.dp_synrag.vocab.vocabulary import read_word_list
from core.methods.dp_synrag.write.roles import DOSAGE_FORMS, morphology_role

# General disease words; and common conditions ICD-10-CM names only with a qualifier ("Type 2 diabetes mellitus …",
# "Essential (primary) hypertension"), so that its list lacks the word a writer uses. Not "stroke" or "depression":
# ordinary English in other corpora (a news article's economic depression).
GENERAL_CONDITIONS = ("cancer", "tumour", "tumor", "carcinoma", "leukaemia", "leukemia", "lymphoma", "covid",
                      "diabetes", "hypertension", "arthritis", "tuberculosis", "hepatitis", "dementia", "influenza",
                      "malaria", "hiv", "anaemia", "alzheimer", "parkinson")
INSTITUTIONS = ("court", "police", "school", "prison", "council", "tribunal", "church", "university", "landlord",
                "headmaster", "employer")
GENERIC = frozenset(("illness", "pain", "injury", "blood", "disease", "disorder", "condition", "infection",
                     "symptom", "symptoms", "sickness"))  # ICD-10-CM heads that state no fact on their own
MONTH = r"(?:january|february|march|april|may|june|july|august|september|october|november|december)"
_DATE = re.compile(rf"\b\d{{1,4}}[/.-]\d{{1,2}}[/.-]\d{{1,4}}\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{MONTH}\b|\b{MONTH}\s+\d{{1,4}}\b"
                   r"|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", re.IGNORECASE)
_DATE_SLOT = re.compile(r"\[number\]([/.-])\[number\]\1\[number\]")  # a form's own numeric date
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
MAX_TERM_WORDS = 6


def words_of(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


@lru_cache(maxsize=1)
def public_terms() -> frozenset[str]:
    """The shipped public condition and symptom names (ICD-10-CM) and the general disease words."""
    vocab = resources_dir() / "vocab"
    return frozenset([*read_word_list(vocab / "icd10-cm.txt"), *read_word_list(vocab / "icd10-cm.symptoms.txt"),
                      *GENERAL_CONDITIONS])


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """The shipped list of common English words (morphology marks no word of it)."""
    return frozenset(read_word_list(resources_dir() / "vocab" / "english.txt"))


def _term_at(words: Sequence[str], i: int, vocabulary: frozenset[str], english: frozenset[str]) -> str | None:
    """The longest content term starting at word ``i`` (None: none starts there)."""
    for n in range(min(MAX_TERM_WORDS, len(words) - i), 1, -1):
        phrase = " ".join(words[i:i + n])
        if phrase in vocabulary:
            return phrase
    word = words[i]
    if word in GENERIC or word in DOSAGE_FORMS:
        return None
    return word if word in vocabulary or word in INSTITUTIONS or morphology_role(word, english) else None


def content_terms(document: str, vocabulary: frozenset[str], english: frozenset[str], month_slot: bool) -> list[str]:
    """The content terms ``document`` states (module docstring), longest match first, in order."""
    words = words_of(document)
    found: list[str] = []
    i = 0
    while i < len(words):
        term = _term_at(words, i, vocabulary, english)
        if term:
            found.append(term)
        i += len(term.split()) if term else 1
    return found + ([] if month_slot else [m.group(0).lower() for m in _DATE.finditer(document)])


def invented_terms(own: Sequence[str], released: Sequence[str], known: frozenset[str] = frozenset()) -> list[str]:
    """The content terms (dates included) of the texts ``own`` whose words the texts ``released`` do not all hold.
    ``known``: terms beside the public ones (the run's released phrases: a symptom of another topic is a fact too)."""
    supported = set(words_of(" ".join(released)))
    terms = content_terms(" ".join(own), public_terms() | known, english_words(), month_slot=False)
    return [t for t in terms if not set(words_of(t)) <= supported]


def holds_date(skeleton: str) -> bool:
    """Whether a released form holds a date of its own (a month slot, or a numeric date "[number]/[number]/[number]"):
    then a date in a document written in it is the form's, not an invented fact."""
    return "[month]" in skeleton or _DATE_SLOT.search(skeleton) is not None


def states_date(text: str) -> bool:
    """Whether ``text`` states a date (a month name beside a number, a weekday, a numeric date)."""
    return _DATE.search(text) is not None
