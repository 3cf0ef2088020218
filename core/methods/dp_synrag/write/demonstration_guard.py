"""The demonstration guard (docs/method.md §2.4b): a document may keep its form, never a demonstration's content.

The public writer sees one shipped, invented demonstration of the form before each released topic. A
small writer tends to retell it: "big toe" from a gout demonstration in a note about something else, or
"Dr. Okoakafu" from its "Mr. Okafor". The 4-token copy guard of decoding (``public_decoding.copy_guard``)
does not see a retold story, so every document is also checked word by word against the demonstration
it was shown.

A demonstration's **content words** are the words that tell its story: its topic's and related words,
its single-word ``avoid`` details ("Okafor", "tender"), and every other word of it (document and phrases)
that is not an everyday English word (public Zipf frequency below :data:`COMMON_ZIPF`: "toe", "swollen",
"allopurinol", but not "used", "night" or "pain" on their own). Never content: stop words
(``resources/vocab/stopwords.txt``, ``not_words.txt``), words of the form itself (the public example, the
task, and the form's ``form_words`` in ``<form>.demo.toml``: its durations, units and section words), and
words shorter than three letters (initials, "mg"). Its several-word topic words and ``avoid`` details are
**phrases** ("night pain", "four days"). Its **names** are its capitalised words inside a sentence
("Mr. Okafor", "Riverton, Tuesday") and those at a sentence start that are no common English word ("Priya, 9, …").

A document's word is **refused** when it is not among its topic's released words (nor a form of one) and it

* is a content word, or a form of one ("toes" for "toe", "wheezing" for "wheeze"), or
* is capitalised and is a near-form of a name: the name's first letters but its last three (at least
  :data:`NAME_PREFIX`), or the same first letter and :data:`NAME_SHARE` of the name's letters in order,
  at about its length ("Okoakafu" for "Okafor"), or
* is no common English word and is a near-form of one of the demonstration's *rare* words (its content
  words and names that are no common English word, of at least :data:`RARE_LETTERS` letters: drugs,
  names): their first :data:`RARE_PREFIX_SHARE` of letters (at least :data:`RARE_PREFIX`), their last
  :data:`RARE_SUFFIX`, or the same first letter and :data:`NAME_SHARE` of their letters in order, at about
  their length. A writer
  kept from "amlodipine" writes "amlotine" or "lovodipine"; from "inhaler", "inhalarone"; or
* belongs to one of its phrases, written whole, whose words are not all released.

Everything here reads only public text (the shipped demonstration, the form, the task, the released
words and the synthetic document): post-processing, no privacy cost.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from core.methods.dp_synrag.shape.examples import Demonstration
from core.methods.dp_synrag.vocab.vocabulary import (
    ENGLISH_LIST,
    VocabularyError,
    english_zipf,
    load_person_names,
    load_stop_words,
    not_words,
    read_word_list,
    split_words,
)
from core.common.paths import resources_dir

MIN_LETTERS = 3  # shorter words (initials, "mg", "Dr") are never a demonstration's content
NAME_PREFIX = 4  # a capitalised word sharing the name's first letters but its last three (at least 4) is a form of it
NAME_SHARE = 2 / 3  # ... or the same first letter and this share of the name's letters, in order
RARE_LETTERS = 5  # a rare word (no common English word) of at least this many letters has near-forms too:
RARE_PREFIX = 4  # ... a word sharing its first 4 letters and RARE_PREFIX_SHARE of it ("inhalarone" for "inhaler")
RARE_PREFIX_SHARE = 0.6  # (not "postoperatively" for "postural")
RARE_SUFFIX = 5  # ... or its last 5 ("lovodipine" for "amlodipine")
COMMON_ZIPF = 4.5  # words at least this frequent in English (wordfreq's Zipf scale) are everyday words
STEM_PREFIX = 5  # two long words that differ only after this many shared letters are one word
SUFFIXES = ("s", "es", "ed", "d", "ing", "ly", "ness", "y", "er", "ers", "ic", "al")
TITLES = frozenset({"mr", "mrs", "ms", "dr", "miss", "prof", "sir"})

_TOKEN = re.compile(r"[^\W\d_]+")  # a run of letters, as split_words finds them
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+|\n\s*)$")
_AFTER_TITLE = re.compile(r"(?:\b(?:Mr|Mrs|Ms|Dr|St|Prof)\.|\b[A-Z]\.)\s*$")


@dataclass(frozen=True)
class PublicLists:
    """The shipped public word lists the guard reads: stop words, common English words, person names."""

    stop: frozenset[str]
    common: frozenset[str]
    names: frozenset[str]

    @classmethod
    def shipped(cls) -> PublicLists:
        folder = resources_dir() / "vocab"
        return cls(load_stop_words(folder) | not_words(folder) | TITLES,
                   frozenset(read_word_list(folder / ENGLISH_LIST)), load_person_names(folder))


@dataclass(frozen=True)
class DemonstrationGuard:
    """What of one demonstration a document may not take: its content words, names and avoid phrases."""

    content: frozenset[str]  # lower-case
    names: tuple[str, ...]  # as written in the demonstration
    phrases: tuple[str, ...]  # its several-word avoid details, lower-case
    allowed: frozenset[str]  # stop words and the form's own words: never refused
    rare: frozenset[str] = frozenset()  # its content words and names that are no common English word
    common: frozenset[str] = frozenset()  # the common English words (never a near-form of a rare word)

    @classmethod
    def of(
        cls,
        document: str,
        topic_words: Sequence[str],
        avoid: Sequence[str] = (),
        form_text: str = "",
        form_words: Sequence[str] = (),
        lists: PublicLists | None = None,
    ) -> DemonstrationGuard:
        """The guard of a demonstration (``document`` about ``topic_words``, with its ``avoid`` details),
        for a form whose public text (example, task) is ``form_text``."""
        lists = lists or PublicLists.shipped()
        allowed = lists.stop | set(split_words(form_text)) | {w for entry in form_words for w in split_words(entry)}
        entries = [" ".join(split_words(e)) for e in (*topic_words, *avoid)]
        single = {e for e in entries if e and " " not in e and e not in allowed}
        phrases = tuple(dict.fromkeys(e for e in entries if " " in e))
        words = split_words(" ".join([document, *phrases]))
        content = {w for w in words if len(w) >= MIN_LETTERS and w not in allowed and not common_word(w)} | single
        names = [*_names_in(document, lists, allowed), *(a for a in avoid if " " not in a and a[:1].isupper())]
        rare = {w for w in content | {n.lower() for n in names} if w not in lists.common and len(w) >= RARE_LETTERS}
        return cls(frozenset(content), tuple(dict.fromkeys(names)), phrases, frozenset(allowed), frozenset(rare),
                   lists.common)

    @property
    def banned_words(self) -> tuple[str, ...]:
        """The words the writer is kept from while it writes (``copy_guard``'s ``avoid``), sorted."""
        return tuple(sorted(self.content | {n.lower() for n in self.names}))

    def refused(self, text: str, released: Sequence[str]) -> list[str]:
        """The words of ``text`` it may not keep (in order, each once): shared with the demonstration and
        not with the released words ``released`` of its own topic."""
        own = {w for entry in released for w in split_words(entry)}
        out: list[str] = []
        for token in _TOKEN.findall(text):
            word = token.lower()
            if len(word) < MIN_LETTERS or word in self.allowed or any(same_word(word, r) for r in own):
                continue
            if (
                any(same_word(word, c) for c in self.content)
                or (token[:1].isupper() and any(near_name(token, n) for n in self.names))
                or (word not in self.common and any(near_rare(word, r) for r in self.rare))
            ):
                out.append(token)
        lowered = " ".join(split_words(text))
        for phrase in self.phrases:
            written = r"\s".join(re.escape(w) + r"(?:s|es|ed|ing)?" for w in phrase.split())  # "new tablets"
            if re.search(rf"(?<!\w){written}(?!\w)", lowered) and not set(phrase.split()) <= own:
                out.append(phrase)
        return list(dict.fromkeys(out))


def common_word(word: str) -> bool:
    """A word of everyday English (public Zipf frequency at least COMMON_ZIPF: "used", "night", "pain"):
    alone it tells no story, so it is a demonstration's content only as one of its topic's words, its
    ``avoid`` details or inside one of their phrases. Unknown where no frequency table is installed (then
    every word counts: the guard is stricter, never weaker)."""
    try:
        return english_zipf(word) >= COMMON_ZIPF
    except VocabularyError:
        return False


def _names_in(document: str, lists: PublicLists, allowed: Iterable[str]) -> list[str]:
    """The demonstration's names: capitalised words inside a sentence, and those at a sentence start that
    are no common English word (or are a public given name or surname)."""
    allowed = frozenset(allowed)
    names = []
    for match in _TOKEN.finditer(document):
        token = match.group(0)
        word = token.lower()
        if not token[:1].isupper() or len(word) < MIN_LETTERS or word in allowed:
            continue
        before = document[: match.start()]
        starts = bool(_SENTENCE_START.search(before)) and not _AFTER_TITLE.search(before)
        common = word in lists.common or word.rstrip("s") in lists.common
        if not starts or not common or word in lists.names:
            names.append(token)
    return names


def same_word(word: str, other: str) -> bool:
    """One word, or a form of it: "toe"/"toes", "tender"/"tenderness", "wheeze"/"wheezing"."""
    if word == other:
        return True
    short, long = sorted((word, other), key=len)
    if long.startswith(short) and long[len(short):] in SUFFIXES:
        return True
    if short.endswith("e") and long.startswith(short[:-1]) and long[len(short) - 1:] in ("ing", "ed", "er", "ers"):
        return True
    shared = _common_prefix(word, other)
    return len(short) >= STEM_PREFIX and shared >= max(STEM_PREFIX, len(short) - 2)


def near_name(token: str, name: str) -> bool:
    """``token`` (a capitalised word of a document) is ``name`` or a near-form of it ("Okoakafu" for
    "Okafor"): the name's first letters but its last three (at least NAME_PREFIX), or the same first
    letter and NAME_SHARE of the name's letters in order."""
    a, b = token.lower(), name.lower()
    if a == b or same_word(a, b):
        return True
    if len(a) < NAME_PREFIX or len(b) < NAME_PREFIX:
        return False
    if _common_prefix(a, b) >= max(NAME_PREFIX, len(b) - 3):
        return True
    return _in_order(a, b)


def near_rare(word: str, rare: str) -> bool:
    """``word`` (no common English word) is a near-form of a demonstration's ``rare`` word (a drug, a
    name): the writer, kept from writing "amlodipine", writes "amlotine" or "lovodipine". The same first
    RARE_PREFIX_SHARE of its letters (at least RARE_PREFIX), the same last RARE_SUFFIX letters, or the same
    first letter and NAME_SHARE of the rare word's letters in order."""
    if same_word(word, rare):
        return True
    if len(word) < RARE_LETTERS:
        return False
    prefix = max(RARE_PREFIX, math.ceil(len(rare) * RARE_PREFIX_SHARE - 1e-9))
    if _common_prefix(word, rare) >= prefix or _common_prefix(word[::-1], rare[::-1]) >= RARE_SUFFIX:
        return True
    return _in_order(word, rare)


def _in_order(word: str, other: str) -> bool:
    """The same first letter, NAME_SHARE of ``other``'s letters in order in ``word`` (at least NAME_PREFIX),
    and about its length (a long word holds many short ones in order: "postoperatively", "postural")."""
    if word[0] != other[0] or abs(len(word) - len(other)) > max(3, len(other) // 2):
        return False
    return _lcs(word, other) >= max(NAME_PREFIX, math.ceil(len(other) * NAME_SHARE - 1e-9))


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _lcs(a: str, b: str) -> int:
    """The length of the longest common subsequence of ``a`` and ``b``."""
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b, start=1):
            prev, row[j] = row[j], prev + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def guard_of(demo: Demonstration, form_text: str, lists: PublicLists | None = None) -> DemonstrationGuard:
    """The guard of a shipped demonstration, for a form whose public text (example and task) is ``form_text``."""
    return DemonstrationGuard.of(demo.document, demo.topic.words, demo.avoid, form_text, demo.form_words, lists)
