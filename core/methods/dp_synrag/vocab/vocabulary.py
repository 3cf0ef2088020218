"""The public keyword vocabulary V and the keyword post-processing of docs/method.md §2.1.

V must be **public and fixed**: a shipped English word list (``resources/vocab/english.txt``)
minus stop words, optionally extended by public domain lists the custodian supplies. It is never
derived from the private corpus: a data-dependent vocabulary would itself leak which words occur
in it. Words outside V can therefore never become keywords, which is the intended behaviour.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from core.common.errors import PrivetError
from core.common.links import without_links
from core.common.paths import resources_dir

ENGLISH_LIST = "english.txt"
STOPWORDS_LIST = "stopwords.txt"
NOT_WORDS_LIST = "not_words.txt"  # contraction fragments, markup and URL pieces: never keywords
PERSON_NAMES_LIST = "person_names.txt"  # public given names and surnames: never part of a discovered phrase
# Shipped public domain lists a run spec may name without a path: domain_lists = ["icd10-cm"].
SHIPPED_DOMAIN_LISTS: dict[str, str] = {
    "icd10-cm": "ICD-10-CM disease and condition names (short titles, US CDC/NCHS 2023 code set)",
    "medical_demo_domain": "the demo clinic's invented disease and drug names and symptom phrases",
}

# A "word" is a maximal run of letters (no digits, no underscore, no punctuation).
_WORD_RE = re.compile(r"[^\W\d_]+")


class VocabularyError(PrivetError):
    """A word list for the keyword vocabulary could not be read."""


@dataclass(frozen=True)
class Vocabulary:
    """A fixed public vocabulary: sorted unique lower-case words and their positions.

    ``index[w]`` is the coordinate of ``w`` in the keyword histogram. ``sources`` names the
    word-list files V was built from (file names only, they are public).
    """

    words: tuple[str, ...]
    index: dict[str, int] = field(repr=False, compare=False)
    sources: tuple[str, ...] = ()
    max_phrase_words: int = field(default=1, compare=False)
    phrase_starts: frozenset[str] = field(default=frozenset(), compare=False, repr=False, init=False)

    def __post_init__(self) -> None:
        # The first words of the multi-word entries: only there can a match be longer than one word.
        starts = frozenset(w.split(" ", 1)[0] for w in self.words if " " in w)
        object.__setattr__(self, "phrase_starts", starts)

    @classmethod
    def from_words(cls, words: Iterable[str], sources: Sequence[str] = ()) -> Vocabulary:
        ordered = tuple(sorted(set(words)))
        longest = max((w.count(" ") + 1 for w in ordered), default=1)
        return cls(
            words=ordered,
            index={w: i for i, w in enumerate(ordered)},
            sources=tuple(sources),
            max_phrase_words=longest,
        )

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self.index

    @property
    def sha256(self) -> str:
        """Hex digest of the word list (one word per line), for the privacy record."""
        return hashlib.sha256("\n".join(self.words).encode("utf-8")).hexdigest()


def split_words(text: str) -> list[str]:
    """Lower-case ``text`` and split it into words (runs of letters), in order."""
    return _WORD_RE.findall(text.lower())


def read_word_list(path: Path) -> list[str]:
    """Entries of a public list: one word or phrase per line, ``#`` starts a comment.

    An entry of several words ("night sweats") stays one *phrase* keyword (docs/method.md §2.1: a list
    entry may be a multi-word phrase and then counts as one keyword), normalised to its words
    joined by single spaces, as :func:`split_words` sees them.
    """
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise VocabularyError(
            f"The word list {path} does not exist.",
            "Check the path of the public domain word list, name one of the lists shipped with Privet ("
            + ", ".join(sorted(SHIPPED_DOMAIN_LISTS)) + "; `privet vocab` lists them), or leave it out.",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise VocabularyError(
            f"The word list {path} could not be read ({type(exc).__name__}).",
            "Save it as a UTF-8 text file with one word or phrase per line.",
        ) from None
    words: list[str] = []
    for line in text.splitlines():
        entry = " ".join(split_words(line.split("#", 1)[0]))
        if entry:
            words.append(entry)
    return words


def load_stop_words(vocab_dir: Path | None = None) -> frozenset[str]:
    """The shipped English stop-word list (``resources/vocab/stopwords.txt``)."""
    folder = vocab_dir or resources_dir() / "vocab"
    return frozenset(read_word_list(folder / STOPWORDS_LIST))


def not_words(vocab_dir: Path | None = None) -> frozenset[str]:
    """Entries that are never keywords (``resources/vocab/not_words.txt``): contraction fragments
    ("doesn", "didn"), markup and URL pieces ("href", "www")."""
    folder = vocab_dir or resources_dir() / "vocab"
    return frozenset(read_word_list(folder / NOT_WORDS_LIST))


def load_person_names(vocab_dir: Path | None = None) -> frozenset[str]:
    """The shipped public list of given names and surnames (``resources/vocab/person_names.txt``)."""
    folder = vocab_dir or resources_dir() / "vocab"
    return frozenset(read_word_list(folder / PERSON_NAMES_LIST))


def resolve_word_list(entry: str | Path, vocab_dir: Path | None = None) -> Path:
    """The file of a domain list: a shipped list's name (``"icd10-cm"``) or a path."""
    folder = vocab_dir or resources_dir() / "vocab"
    if isinstance(entry, str) and entry in SHIPPED_DOMAIN_LISTS:
        return folder / f"{entry}.txt"
    return Path(entry)


@dataclass(frozen=True)
class WordListInfo:
    """What the certificate and ``privet vocab`` say about one public list: its file name (never a
    full path), its entries and the SHA-256 of the file's bytes."""

    name: str
    file: str
    entries: int
    sha256: str
    description: str = ""


def word_list_info(entry: str | Path, vocab_dir: Path | None = None) -> WordListInfo:
    path = resolve_word_list(entry, vocab_dir)
    entries = read_word_list(path)  # raises the user-facing error for a missing file
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    name = entry if isinstance(entry, str) and entry in SHIPPED_DOMAIN_LISTS else path.stem
    return WordListInfo(name, path.name, len(entries), digest, SHIPPED_DOMAIN_LISTS.get(str(entry), ""))


def shipped_domain_lists(vocab_dir: Path | None = None) -> list[WordListInfo]:
    """The public domain lists shipped with Privet (``privet vocab``), in name order."""
    return [word_list_info(name, vocab_dir) for name in sorted(SHIPPED_DOMAIN_LISTS)]


def load_vocabulary(extra_lists: Sequence[str | Path] = (), vocab_dir: Path | None = None) -> Vocabulary:
    """V = shipped English list ∪ public domain lists, minus stop words and not-words; sorted and unique.

    ``extra_lists`` are shipped list names (``"icd10-cm"``, see :data:`SHIPPED_DOMAIN_LISTS`) or
    paths of *public* domain word lists (for example ``resources/vocab/medical_demo_domain.txt``).
    Never pass a list computed from the private corpus.
    """
    folder = vocab_dir or resources_dir() / "vocab"
    stop = load_stop_words(folder)
    paths = [folder / ENGLISH_LIST, *(resolve_word_list(p, folder) for p in extra_lists)]
    words: set[str] = set()
    for path in paths:
        words.update(read_word_list(path))
    words -= stop
    words -= not_words(folder)
    if not words:
        raise VocabularyError(
            "The keyword vocabulary is empty.",
            "Reinstall Privet: resources/vocab/english.txt should hold about 30,000 words.",
        )
    return Vocabulary.from_words(words, sources=[p.name for p in paths])


def in_form(entry: str, form: frozenset[str]) -> bool:
    """Whether a vocabulary entry is the document form's: itself a form word, or a phrase of form words only
    ("sci fi", a genre split by the tokenizer)."""
    return entry in form or all(word in form for word in entry.split())


def postprocess_keywords(raw_text: str, vocab: Vocabulary, K: int, form: frozenset[str] = frozenset()) -> list[str]:
    """docs/method.md §2.1 post-processing of the LLM's keyword answer for one unit.

    Lower-case, split into words, keep only entries of V (the longest phrase of V that starts
    at a word wins, else the word itself), de-duplicate preserving first occurrence, keep at
    most ``K``. Each item of the answer (separated by commas, semicolons or new lines) is
    matched on its own, so a phrase never spans two items. The result has L2 norm ≤ √K as a
    one-hot vector, which is what the histogram's sensitivity assumes. Words of ``form`` (the document form's
    public words) are dropped, as by :func:`specific_entries`.
    """
    if K < 1:
        raise ValueError(f"K must be at least 1, got {K}")
    kept: list[str] = []
    seen: set[str] = set()
    for item in _ITEM_SEPARATORS.split(raw_text):
        for entry in _longest_matches(split_words(item), vocab):
            if entry not in seen and not in_form(entry, form):
                seen.add(entry)
                kept.append(entry)
                if len(kept) == K:
                    return kept
    return kept


_ITEM_SEPARATORS = re.compile(r"[,;\n]")


def _longest_matches(words: Sequence[str], vocab: Vocabulary) -> list[str]:
    """Entries of V found in ``words`` left to right, preferring the longest phrase at each start."""
    found: list[str] = []
    i = 0
    while i < len(words):
        longest = min(vocab.max_phrase_words, len(words) - i) if words[i] in vocab.phrase_starts else 1
        for n in range(longest, 0, -1):
            candidate = " ".join(words[i : i + n])
            if candidate in vocab.index:
                found.append(candidate)
                i += n
                break
        else:
            i += 1
    return found


@lru_cache(maxsize=65536)
def english_zipf(entry: str) -> float:
    """Public English frequency of a keyword on the Zipf scale (wordfreq; 0 = unknown word).

    Used only to rank *released* keywords by how specific they are; it reads wordfreq's
    shipped word counts, never the private corpus.
    """
    try:
        from wordfreq import zipf_frequency  # loads wordfreq's data on first use (about a second)
    except ImportError:  # a bare GPU machine: the same public figures, exported into a table
        return zipf_table().get(entry, 0.0)
    return float(zipf_frequency(entry, "en"))


ZIPF_TABLE_ENV = "PRIVET_ZIPF_TABLE"


@lru_cache(maxsize=1)
def zipf_table() -> dict[str, float]:
    """wordfreq's English Zipf figures for the entries of V, read from the tab-separated file that
    ``PRIVET_ZIPF_TABLE`` names (``bench/gpu_kit.py`` writes it where wordfreq is installed)."""
    import os

    path = os.environ.get(ZIPF_TABLE_ENV)
    if not path:
        raise VocabularyError(
            "Keyword ranking needs the wordfreq package, which is not installed.",
            f"Install it (pip install wordfreq), or set {ZIPF_TABLE_ENV} to a table written by bench/gpu_kit.py.",
        )
    table: dict[str, float] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        word, _, value = line.partition("\t")
        if value:
            table[word] = float(value)
    return table


def write_zipf_table(entries: Iterable[str], path: Path) -> int:
    """Write ``entry<TAB>zipf`` for every entry (wordfreq must be installed here). Returns the count."""
    from wordfreq import zipf_frequency

    rows = [f"{e}\t{zipf_frequency(e, 'en'):.2f}" for e in sorted(set(entries))]
    Path(path).write_text("\n".join(rows) + "\n", encoding="utf-8")
    return len(rows)


ZIPF_CEILING = 9.0  # a word met once in a billion words has Zipf 0; public IDF of an entry: ZIPF_CEILING − Zipf


def specific_entries(text: str, vocab: Vocabulary, K: int, form: frozenset[str] = frozenset()) -> list[str]:
    """A unit's keywords without a language model: the K entries of V in ``text`` with the highest TF-IDF,
    term frequency taken sublinearly, 1 + ln(times in the text), and IDF from public English frequencies,
    ZIPF_CEILING − Zipf (a log-scale inverse frequency); ties in order of appearance.

    In a short note every entry occurs once, so these are its rarest entries in general English. In a long article
    the words it keeps coming back to (its subject: "brexit", "china", "court") outrank a name met once in passing,
    so units on one subject share keywords and their topic clears the noise (docs/method.md §2.1).

    ``form``: the public words of the document form (``realisation.form_words``: a film profile's genres, a
    clinical note's "diagnosis") are never keywords. They say how a unit is written, not what it is about, and a
    form word repeated in every unit ("Drama" twelve times in a film profile) would otherwise take the K slots
    from the unit's own names.

    Like the LLM's answer after :func:`postprocess_keywords`, the result is at most K distinct
    entries of the fixed public V computed from this unit alone and public lists, so the histogram's sensitivity
    (√K) and the clustering argument are unchanged.
    """
    if K < 1:
        raise ValueError(f"K must be at least 1, got {K}")
    times: dict[str, int] = {}
    for entry in _longest_matches(split_words(without_links(text)), vocab):
        if not in_form(entry, form):
            times[entry] = times.get(entry, 0) + 1  # dicts keep the order of first appearance

    def weight(entry: str) -> float:
        return (1.0 + math.log(times[entry])) * max(0.0, ZIPF_CEILING - english_zipf(entry))

    return sorted(times, key=weight, reverse=True)[:K]  # stable: ties keep the order of first appearance
