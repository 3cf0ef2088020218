"""The public example of the document form shares nothing identifying with the corpus (docs/method.md §2.4b).

The example (the custodian's own ``public_example``, or a shipped form) is shown to the public writer and
printed in the certificate, so it must be invented. :func:`check_public_example` reads the private corpus
only to refuse one that is not, before anything is charged: it releases nothing, and its message names no
document and quotes nothing of the corpus (a shared word is named as the *example* writes it: that is the
custodian's own typed text). The example is compared with every loaded document's **full text**
(``Corpus.document_texts``: before documents are grouped into person units and cut to ``max_unit_chars``,
so a copied tail is seen too), and refused when

* **it is a near-copy of one document**: it shares ``LONGEST_SHARED_RUN`` consecutive words with it, or
  ``COVERED_SHARE`` of its words (at least ``MIN_COVERED_WORDS``) lie on one chain of word 3-grams that the
  document holds in the same order (:func:`aligned_cover`). Replacing every 4th word of a document leaves
  3 of each 4 words on the chain (every 5th: 4 of 5); an invented example in the corpus's own form shares
  its phrases ("the findings are consistent with", "once daily for"), which cover far less;
* **it shares a name** with a document: a capitalised word of the example that follows a title ("Mr.",
  "Dr."), is a public given name or surname (``resources/vocab/person_names.txt``) inside a sentence or
  next to another one, or is no common English word ("Okafor"); found where a document writes it as a
  name (after a title or next to another name; an uncommon one anywhere, in any case). "Roman Holiday",
  or a form's opening "Case file.", are not names;
* **it shares a rare word** with a document: a word of at least 3 letters that is neither among the
  30,000 most frequent English words (``resources/vocab/english.txt``) nor a stop word and is rarer than
  ``RARE_ZIPF`` in public English (wordfreq's figures), or a token of 5 or more characters holding a
  digit (a record number); found in any document, in any case.

Words are compared after NFKC normalisation with invisible format characters (zero-width spaces) removed,
case-folded and split at anything that is not a letter or a digit. Placeholders in square brackets are
not the custodian's words and are skipped; common words never count as names or rare words.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from core.corpus import Corpus, Unit
from core.common.errors import PrivetError
from core.methods.dp_synrag.shape.examples import public_example
from core.methods.dp_synrag.vocab.vocabulary import (
    ENGLISH_LIST,
    VocabularyError,
    english_zipf,
    load_person_names,
    load_stop_words,
    not_words,
    read_word_list,
)
from core.common.paths import resources_dir
from core.specs.runspec import RunSpec

LONGEST_SHARED_RUN = 8  # an example sharing this many consecutive words with a document is refused
SHINGLE = 3  # ... or whose words lie, to COVERED_SHARE, on one chain of word 3-grams a document also holds
MAX_GAP = 8  # example words from one link of the chain to the next (a replaced stretch)
MAX_DRIFT = 3  # words inserted or dropped between two links of the chain
COVERED_SHARE = 0.6  # invented examples in a corpus's own form: up to 0.52 measured; every 4th word replaced: 0.66 or more
MIN_COVERED_WORDS = 10  # ... and at least this many words (a short form shares its own phrases)
RARE_ZIPF = 2.0  # rarer than this in public English (under once in 10 million words): a rare word
MIN_RARE_LETTERS = 3  # shorter words ("mg", initials) are never rare words nor uncommon names
MIN_ID_CHARS = 5  # a token this long holding a digit is a record number
MAX_NAMED = 5  # words of the example named in one message
TITLES = frozenset({"mr", "mrs", "ms", "miss", "mx", "dr", "prof", "sir", "madam", "mister"})

_PLACEHOLDER = re.compile(r"\[[^\]]*\]")
_TOKEN = re.compile(r"[^\W_]+")
_BETWEEN_NAME_WORDS = re.compile(r"\s+")  # a full name: two capitalised words with only spaces between
_AFTER_TITLE = re.compile(r"\.?\s+")  # "Mr. Weaver", "Dr Lee"
_SENTENCE_STOP = re.compile(r"[.!?]")


@dataclass(frozen=True)
class Token:
    """One word of a text: case-folded, as written, whether it begins with a capital, where it is."""

    word: str
    typed: str
    capitalised: bool
    start: int
    end: int


@dataclass(frozen=True)
class PublicWords:
    """The shipped public lists the check reads: common English words, stop words, person names."""

    common: frozenset[str]
    stop: frozenset[str]
    names: frozenset[str]

    def is_common(self, word: str) -> bool:
        """One of the 30,000 most frequent English words, or a stop word."""
        return word in self.common or word in self.stop

    def is_rare(self, word: str) -> bool:
        """A word rarer than RARE_ZIPF in public English, or a record number."""
        if any(c.isdigit() for c in word):
            return len(word) >= MIN_ID_CHARS
        return len(word) >= MIN_RARE_LETTERS and not self.is_common(word) and public_zipf(word) < RARE_ZIPF

    def is_name(self, word: str) -> bool:
        """A public given name or surname that is no stop word ("May", "Will" are)."""
        return word in self.names and word not in self.stop

    def is_uncommon(self, tok: Token) -> bool:
        """A capitalised word of letters that is no common English word and no acronym ("Okafor", not "ECG")."""
        return (len(tok.word) >= MIN_RARE_LETTERS and tok.word.isalpha() and not tok.typed.isupper()
                and not self.is_common(tok.word))


def public_zipf(word: str) -> float:
    """The word's public English frequency on the Zipf scale (wordfreq); 0 where no figures are installed,
    so that only the shipped list of common words counts as common."""
    try:
        return english_zipf(word)
    except VocabularyError:
        return 0.0


@lru_cache(maxsize=1)
def public_words() -> PublicWords:
    """The shipped lists (``resources/vocab``), read once."""
    folder = resources_dir() / "vocab"
    stop = load_stop_words(folder) | not_words(folder)
    return PublicWords(frozenset(read_word_list(folder / ENGLISH_LIST)), stop, load_person_names(folder))


@lru_cache(maxsize=1)
def _format_characters() -> dict[int, None]:
    """str.translate's table deleting every invisible format character (Unicode category Cf)."""
    return {c: None for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"}


def normalised(text: str) -> str:
    """NFKC with invisible format characters (zero-width spaces, joiners, BOMs) removed."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text).translate(_format_characters())


def tokens(text: str) -> list[Token]:
    """The words of (normalised) ``text``: runs of letters and digits."""
    return [Token(m.group().casefold(), m.group(), m.group()[:1].isupper(), m.start(), m.end())
            for m in _TOKEN.finditer(text)]


def _grams(words: Sequence[str], n: int) -> Iterable[tuple[str, ...]]:
    return (tuple(words[i : i + n]) for i in range(len(words) - n + 1))


# -- names ---------------------------------------------------------------------------------------


def _title_before(text: str, toks: Sequence[Token], i: int) -> bool:
    before = toks[i - 1] if i > 0 else None
    return before is not None and before.word in TITLES and bool(_AFTER_TITLE.fullmatch(text[before.end : toks[i].start]))


def _sentence_start(text: str, toks: Sequence[Token], i: int) -> bool:
    """The first word of the text, of a line or after a full stop (not after an initial: "K. M. Weaver")."""
    if i == 0:
        return True
    gap = text[toks[i - 1].end : toks[i].start]
    return "\n" in gap or (bool(_SENTENCE_STOP.search(gap)) and len(toks[i - 1].word) > 1)


def _capital_runs(text: str, toks: Sequence[Token]) -> list[list[int]]:
    """Maximal runs of capitalised words joined by spaces only ("Austin Weaver", "The Lion King"); titles
    and single letters (initials) are in none."""
    runs: list[list[int]] = []
    for i, tok in enumerate(toks):
        if not tok.capitalised or len(tok.word) < 2 or not tok.word.isalpha() or tok.word in TITLES:
            continue
        if runs and runs[-1][-1] == i - 1 and _BETWEEN_NAME_WORDS.fullmatch(text[toks[i - 1].end : tok.start]):
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def names_written(text: str, toks: Sequence[Token], lists: PublicWords,
                  example: bool = False) -> dict[str, list[frozenset[str]]]:
    """The (case-folded) words ``text`` writes as a person's name, each with the other words of its run of
    capitalised words at every place it does: a run after a title, or a public name next to another one
    ("Austin Weaver"). In the ``example`` also a public name inside a sentence ("Client: Weaver", "The Lion
    King"), and an uncommon word inside a sentence, or anywhere when it is rare ("Okafor"; not a
    sentence's "Forecasters")."""
    found: dict[str, list[frozenset[str]]] = {}
    for run in _capital_runs(text, toks):
        titled = _title_before(text, toks, run[0])
        words = [toks[i].word for i in run]
        for i in run:
            tok = toks[i]
            inside = not _sentence_start(text, toks, i)
            partner = any(lists.is_name(w) for w in words if w != tok.word)
            if (titled
                    or (example and lists.is_uncommon(tok) and (inside or lists.is_rare(tok.word)))
                    or (lists.is_name(tok.word) and ((example and inside) or partner))):
                mates = frozenset(w for w in words if w != tok.word and w not in lists.stop)
                found.setdefault(tok.word, []).append(mates)
    return found


# -- the example ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExampleProfile:
    """What of the example is compared: its words between placeholders, where each of its 3-grams starts,
    its runs of LONGEST_SHARED_RUN words, and its name-like and rare words as it spells them."""

    n_words: int
    shingle_starts: dict[tuple[str, ...], list[int]]
    long_runs: frozenset[tuple[str, ...]]
    names: dict[str, str]  # case-folded -> as typed in the example
    name_mates: dict[str, frozenset[str]]  # -> the other words of its run of capitalised words (fewest)
    uncommon_names: frozenset[str]  # of these, the ones found wherever a document capitalises them
    rare: dict[str, str]
    order: dict[str, int]  # case-folded word -> its first position, to name words in the example's order
    shingle_first: frozenset[str]  # the first words of its 3-grams (most of a document is skipped on them)

    @classmethod
    def of(cls, example: str, lists: PublicWords) -> ExampleProfile:
        text = normalised(example)
        segments = [seg for seg in (tokens(part) for part in _PLACEHOLDER.split(text)) if seg]
        starts: dict[tuple[str, ...], list[int]] = {}
        long_runs: set[tuple[str, ...]] = set()
        offset = 0
        for seg in segments:  # n-grams never cross a placeholder
            words = [t.word for t in seg]
            for i, gram in enumerate(_grams(words, SHINGLE)):
                starts.setdefault(gram, []).append(offset + i)
            long_runs.update(_grams(words, LONGEST_SHARED_RUN))
            offset += len(seg)
        order: dict[str, int] = {}
        rare: dict[str, str] = {}
        for position, tok in enumerate(t for seg in segments for t in seg):
            order.setdefault(tok.word, position)
            if lists.is_rare(tok.word):
                rare.setdefault(tok.word, tok.typed)
        # names are read on the whole example, so "Mr. Okafor" keeps its title and "Mr. [name]" has none
        inside = [m.span() for m in _PLACEHOLDER.finditer(text)]
        whole = [t for t in tokens(text) if not any(a <= t.start < b for a, b in inside)]
        written = names_written(text, whole, lists, example=True)
        names = {t.word: t.typed for t in reversed(whole) if t.word in written}
        mates = {word: min(places, key=len) for word, places in written.items()}
        uncommon = frozenset(t.word for t in whole if t.word in written and lists.is_uncommon(t))
        return cls(offset, starts, frozenset(long_runs), names, mates, uncommon, rare, order,
                   frozenset(g[0] for g in starts))


# -- the comparison -------------------------------------------------------------------------------


def shared_shingles(profile: ExampleProfile, words: Sequence[str]) -> list[tuple[int, int]]:
    """(start in the example, start in the document) of every word 3-gram the two share, in order."""
    first = profile.shingle_first
    found = []
    for p in range(len(words) - SHINGLE + 1):
        if words[p] in first:
            for e in profile.shingle_starts.get(tuple(words[p : p + SHINGLE]), ()):
                found.append((e, p))
    return sorted(found)


def aligned_cover(matches: Sequence[tuple[int, int]]) -> int:
    """The most example words covered by one chain of shared 3-grams that keeps the order of both texts,
    with at most MAX_GAP example words from one link to the next and the offset between the texts drifting
    by at most MAX_DRIFT words per link. A copy with words replaced, or a few inserted or dropped, is one
    chain; the form's phrases or public titles scattered over a document are many short ones."""
    best: list[int] = []
    for i, (e, p) in enumerate(matches):
        score = SHINGLE
        for j in range(i - 1, -1, -1):
            ej, pj = matches[j]
            if e - ej > MAX_GAP:
                break
            if ej < e and pj < p and abs((p - pj) - (e - ej)) <= MAX_DRIFT:
                score = max(score, best[j] + min(SHINGLE, e - ej))
        best.append(score)
    return max(best, default=0)


@dataclass
class Findings:
    """What the corpus shares with the example: a share, a yes/no and words of the example; no corpus text."""

    profile: ExampleProfile
    long_run: bool = False
    covered_share: float = 0.0
    names: set[str] = field(default_factory=set)
    rare: set[str] = field(default_factory=set)

    @property
    def near_copy(self) -> bool:
        return self.long_run or self.covered_share >= COVERED_SHARE


def _compare_one(found: Findings, text: str, words: Sequence[str], present: set[str], lists: PublicWords) -> None:
    """One (normalised) document's ``text``, its case-folded ``words`` and their set, against one example."""
    profile = found.profile
    matches = shared_shingles(profile, words) if profile.shingle_starts else []
    if not found.long_run and len(matches) >= LONGEST_SHARED_RUN - SHINGLE + 1:
        found.long_run = any(g in profile.long_runs for g in _grams(words, LONGEST_SHARED_RUN))
    if len(matches) * SHINGLE >= MIN_COVERED_WORDS:
        covered = aligned_cover(matches)
        if covered >= MIN_COVERED_WORDS:
            found.covered_share = max(found.covered_share, covered / profile.n_words)
    found.rare.update(present & profile.rare.keys())
    if not present.isdisjoint(profile.names):
        toks = tokens(text)
        found.names.update(t.word for t in toks if t.capitalised and t.word in profile.uncommon_names)
        written = names_written(text, toks, lists)
        found.names.update(w for w, mates in profile.name_mates.items()
                           if any(mates <= places for places in written.get(w, ())))


def compare_all(examples: Sequence[str], documents: Iterable[str], lists: PublicWords | None = None) -> list[Findings]:
    """Compare each of ``examples`` with every document's text, reading each document once (the private
    corpus; none of it is kept)."""
    lists = lists or public_words()
    found = [Findings(ExampleProfile.of(example, lists)) for example in examples]
    for document in documents:
        text = normalised(document)
        words = [w.casefold() for w in _TOKEN.findall(text)]
        present = set(words)
        for one in found:
            _compare_one(one, text, words, present, lists)
    return found


def compare(example: str, documents: Iterable[str], lists: PublicWords | None = None) -> Findings:
    """Compare ``example`` with every document's text (the private corpus; none of it is kept)."""
    return compare_all([example], documents, lists)[0]


def _named(words: Iterable[str], typed: dict[str, str], order: dict[str, int]) -> str:
    ordered = sorted(words, key=lambda w: (order.get(w, 0), w))
    shown = ", ".join(f"'{typed[w]}'" for w in ordered[:MAX_NAMED])
    return shown + (f" and {len(ordered) - MAX_NAMED} more" if len(ordered) > MAX_NAMED else "")


def problem_of(found: Findings) -> str:
    """Why the example is refused ("" when it is not), in words of the example and counts only."""
    profile = found.profile
    parts = []
    if found.long_run:
        parts.append(f"it shares {LONGEST_SHARED_RUN} or more consecutive words with a document of the loaded corpus")
    elif found.covered_share >= COVERED_SHARE:
        parts.append(f"{100 * found.covered_share:.0f}% of its words follow one document of the loaded corpus "
                     "phrase by phrase, in the same order: it reads as an edited copy of that document")
    if found.names:
        parts.append(f"it shares the name {_named(found.names, profile.names, profile.order)} with a document "
                     "of the loaded corpus")
    rare = found.rare - found.names
    if rare:
        parts.append(f"its word {_named(rare, profile.rare, profile.order)}, rare in public English, also "
                     "occurs in the loaded corpus")
    return "; ".join(parts)


def corpus_documents(documents: Corpus | Sequence[Unit]) -> list[str]:
    """The texts the example is checked against: a loaded corpus's full documents (before person grouping
    and ``max_unit_chars``), else the units' texts (a corpus built in code, or a list of units)."""
    if isinstance(documents, Corpus):
        return documents.document_texts or [u.text for u in documents.units]
    return [u.text for u in documents]


def example_problem(example: str, documents: Corpus | Sequence[Unit]) -> str:
    """Why ``example`` is no invented, public example for this corpus ("" when it is one): a near-copy of a
    document, or a name or rare word shared with one. Names no document and quotes nothing of the corpus."""
    return problem_of(compare(example, corpus_documents(documents)))


def check_public_example(example: str, documents: Corpus | Sequence[Unit]) -> None:
    """Refuse, before anything is charged, an example that copies a document of the corpus or shares a
    name or a rare word with one."""
    problem = example_problem(example, documents)
    if problem:
        raise PrivetError(
            f"The public example of the document form looks like a real document: {problem}. The example is "
            "shown to the public writer and printed in the certificate, so it must be invented and share no "
            "name or rare word with your documents. Nothing was charged.",
            "Replace each named word with an invented one or a placeholder in square brackets, write the rest "
            "in your own words (e.g. 'Consultation note. [name], [age], reports [symptoms]. Impression: "
            "[condition]. Plan: [treatment].'), or pick a shipped form.",
        )


def check_spec_example(spec: RunSpec, corpus: Corpus) -> None:
    """The run spec's example, checked against the loaded corpus: called by ``privet plan``, before a run
    loads its models, and before the first charge. A typed example is checked whatever ``text`` says (it is
    recorded in the certificate's parameters even when unused); a no-op for other methods."""
    form = spec.document
    if spec.method == "dp_synrag" and (spec.dp_synrag.realisation or form.public_example.strip()):
        example = public_example(form.document_form, form.public_example)
        if example:
            check_public_example(example, corpus)  # every document's full text, not the truncated units
