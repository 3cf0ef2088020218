"""A dataset fingerprint that names a corpus without revealing or confirming its content, and the
content sketches that tell whether two loads hold the same text (``core.ledger.booking``).

The fingerprint is HMAC-SHA256 under this installation's secret key (core/installation.py) over a
canonical serialisation of the units: sorted by uid, each uid and text as UTF-8 with an
8-byte big-endian length prefix, after a version tag and the unit count. A plain hash
would let anyone holding a guessed corpus check the guess against a certificate; the
keyed hash can only be recomputed on the installation that holds the key.

Content sketches are keyed the same way (they cannot be used to test a guess either):

- **v2, the shingle sketch** (``scan_content``). Each document's text is put in *identity form*
  (``identity_words``: NFKC, case-folded, format characters such as zero-width spaces removed,
  punctuation and symbols turned into spaces, whitespace collapsed) and cut into overlapping
  ``SHINGLE_WORDS``-word shingles (a shorter document is one shingle). Each distinct shingle is hashed
  with keyed BLAKE2b (its key derived from the installation secret); the sketch keeps the
  ``SHINGLE_SKETCH_SIZE`` smallest hashes (bottom-k) and marks those that occur in at most
  ``DISTINCTIVE_DF`` documents as *distinctive*: a name, an age, a sentence of its own. A shingle in
  many documents is a template ("came in complaining of"), which two different corpora of the same
  kind share, so it does not count as evidence. Upper- or lower-casing, punctuation, zero-width
  characters, a prefix or suffix on every note, notes split in two or merged in pairs leave almost
  every shingle as it was.
- **v1, the document sketch** (``content_sketch``): the 256 smallest keyed hashes of the whole,
  whitespace-normalised document texts. Ledgers written before v2 hold only these; new views store
  both, and a v1 sketch is compared in the v1 way (whole documents).

``containment`` measures both ways: the share of the *known* dataset's distinctive shingles that occur
anywhere in the new load (each new shingle is looked up in the known sketches during the one pass over
the text, so filler rows added around real ones cannot dilute it), and the share of the new load's
distinctive shingles found in the known dataset (bottom-k: only hashes below the known sketch's
largest can be looked up). The scan is linear in the text and holds at most ``SHINGLE_SKETCH_SIZE``
hashes per sketch, so 10^6 documents need no more memory than 10^3.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import heapq
import json
import math
import sys
import unicodedata
from collections.abc import Iterable, Iterator, Set
from dataclasses import dataclass

from core.corpus.model import Corpus, Unit
from core.installation import installation_secret

FORMAT_TAG = b"privet/dataset-fingerprint/v1\n"


def dataset_fingerprint(corpus: Corpus, *, key: bytes | None = None) -> str:
    """Hex HMAC-SHA256 of the canonical unit list; ``key`` defaults to the installation secret."""
    mac = hmac.new(installation_secret() if key is None else key, digestmod=hashlib.sha256)
    for chunk in canonical_chunks(corpus.units):
        mac.update(chunk)
    return mac.hexdigest()


def canonical_chunks(units: Iterable[Unit]) -> Iterator[bytes]:
    """The canonical byte stream: tag, unit count, then (len, uid, len, text) per unit sorted by uid."""
    ordered = sorted(units, key=lambda u: u.uid)
    yield FORMAT_TAG
    yield len(ordered).to_bytes(8, "big")
    for unit in ordered:
        for field in (unit.uid, unit.text):
            data = field.encode("utf-8")
            yield len(data).to_bytes(8, "big")
            yield data


# --- identity form: what "the same text" means when budgeting ------------------------------------

# Code points that render as nothing but are not Unicode format characters (Cf): the combining grapheme
# joiner, Hangul fillers and variation selectors (Default_Ignorable_Code_Point, less Cf).
_IGNORABLE_RANGES = ((0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F), (0x3164, 0x3164),
                     (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xE0100, 0xE01EF))
_ASCII_SEPARATORS = str.maketrans({c: " " for c in map(chr, range(128))
                                   if not c.isalnum() and not c.isspace()})


@functools.cache
def _separator_table() -> dict[int, str | None]:
    """Every code point that identity form deletes (``None``: format and ignorable) or turns into a space
    (punctuation, symbols, control characters). Built once per process (about a second)."""
    table: dict[int, str | None] = {cp: None for lo, hi in _IGNORABLE_RANGES for cp in range(lo, hi + 1)}
    for cp in range(sys.maxunicode + 1):
        category = unicodedata.category(chr(cp))
        if category == "Cf":
            table[cp] = None
        elif category[0] in "PS" or category == "Cc":
            table.setdefault(cp, " ")
    return table


def identity_text(text: str) -> str:
    """``text`` in identity form: NFKC, case-folded, format characters (Cf, e.g. zero-width spaces) removed,
    punctuation, symbols and control characters turned into spaces, whitespace collapsed."""
    if text.isascii():  # NFKC leaves ASCII alone and its case folding is lower()
        return " ".join(text.lower().translate(_ASCII_SEPARATORS).split())
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return " ".join(unicodedata.normalize("NFKC", folded.translate(_separator_table())).split())


def identity_words(text: str) -> list[str]:
    """The words of ``text`` in identity form."""
    return identity_text(text).split()


# --- v2: keyed word shingles, bottom-k, graded by how rare they are ---------------------------------

SHINGLE_VERSION = 2
SHINGLE_TAG = b"privet/content-shingle/v2\n"
SHINGLE_WORDS = 5  # w: a shingle is w consecutive words in identity form
SHINGLE_SKETCH_SIZE = 4096  # bottom-k: the k smallest keyed shingle hashes of a view
RARE_DF = 2  # a word (or shingle) in at most this many documents of a view is rare in it
MIN_SAMPLE = 8  # fewer shingles than this to compare: that direction gives no evidence
# How much a sketched shingle says about whose text it is, graded within its own view:
HOLDS_A_RARE_WORD = 2  # it holds a word in at most RARE_DF documents (a name, an age, a record number)
RARE_SHINGLE = 1  # it is itself in at most RARE_DF documents (an uncommon combination of common words)
COMMON = 0  # a template ("came in complaining of"): two different corpora of one kind share these


@dataclass(frozen=True)
class ShingleSketch:
    """A view's bottom-k shingle hashes (sorted) and, for each, how rare it is in the view (``strength``)."""

    hashes: tuple[int, ...]
    strength: tuple[int, ...]  # HOLDS_A_RARE_WORD, RARE_SHINGLE or COMMON, one per hash
    size: int = SHINGLE_SKETCH_SIZE
    words: int = SHINGLE_WORDS
    version: int = SHINGLE_VERSION

    @property
    def top(self) -> float:
        """The largest hash a lookup in this sketch can answer for (every shingle of the view below it is in
        the sketch); infinite when the sketch holds all of the view's shingles."""
        return float(self.hashes[-1]) if len(self.hashes) >= self.size else math.inf

    def evidence(self) -> frozenset[int]:
        """The hashes that count as evidence of this view's text: those holding a rare word; failing enough
        of them, the rare shingles; failing those (a corpus of repeated documents), all of them."""
        for grade in (HOLDS_A_RARE_WORD, RARE_SHINGLE):
            chosen = frozenset(h for h, s in zip(self.hashes, self.strength) if s >= grade)
            if len(chosen) >= MIN_SAMPLE:
                return chosen
        return frozenset(self.hashes)

    def to_json(self) -> str:
        return json.dumps({"version": self.version, "words": self.words, "size": self.size,
                           "hashes": list(self.hashes), "strength": "".join(map(str, self.strength))},
                          separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> ShingleSketch:
        data = json.loads(text)
        return cls(tuple(int(h) for h in data["hashes"]), tuple(int(s) for s in data["strength"]),
                   int(data["size"]), int(data["words"]), int(data["version"]))


class _BottomK:
    """The ``size`` smallest distinct values added so far, with the number of documents that held each and
    the label (a shingle's words) it was added with.

    The bound only falls, so a value first seen above it can never enter later: every value kept was kept
    from its first occurrence, and its count is exact.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._heap: list[int] = []  # negated: the largest kept value on top
        self.counts: dict[int, int] = {}
        self.labels: dict[int, str] = {}

    def add_document(self, values: dict[int, str]) -> None:
        counts, heap = self.counts, self._heap
        seen = {v for v in values if v in counts}
        for value in seen:
            counts[value] += 1
        bound = -heap[0] if len(heap) >= self.size else math.inf
        for value in [v for v in values if v < bound and v not in seen]:
            if len(heap) < self.size:
                heapq.heappush(heap, -value)
            elif value < -heap[0]:
                dropped = -heapq.heapreplace(heap, -value)
                del counts[dropped], self.labels[dropped]
            else:
                continue
            counts[value] = 1
            self.labels[value] = values[value]

    def smallest(self) -> list[int]:
        return sorted(self.counts)


def _shingle_key(secret: bytes) -> bytes:
    return hmac.new(secret, SHINGLE_TAG, hashlib.sha256).digest()


def shingles(words: list[str], w: int = SHINGLE_WORDS) -> list[str]:
    """A document's ``w``-word shingles (the whole document when it is shorter), words joined by a space."""
    if len(words) <= w:
        return [" ".join(words)] if words else []
    return [" ".join(words[i:i + w]) for i in range(len(words) - w + 1)]


def shingle_hashes(words: list[str], key: bytes, w: int = SHINGLE_WORDS) -> dict[int, str]:
    """The keyed 64-bit hash of each distinct shingle of a document, mapped to the shingle."""
    blake = hashlib.blake2b
    return {int.from_bytes(blake(g.encode("utf-8"), key=key, digest_size=8).digest(), "big"): g
            for g in shingles(words, w)}


# --- v1: keyed hashes of whole documents (the sketch of older ledgers) -----------------------------

SKETCH_TAG = b"privet/document-hash/v1\n"
SKETCH_SIZE = 256  # bottom-k: the k smallest keyed document hashes


def document_hash(text: str, secret: bytes) -> int:
    """The v1 keyed hash of one document's whitespace-normalised text."""
    digest = hmac.new(secret, SKETCH_TAG + " ".join(text.split()).encode("utf-8"), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")


def content_sketch(corpus: Corpus, *, key: bytes | None = None, size: int = SKETCH_SIZE) -> list[int]:
    """The v1 sketch: the ``size`` smallest keyed hashes of the corpus's document texts (bottom-k), sorted.

    A document's hash depends on its text only (whitespace-normalised): not on its id, its row, the
    file's name, the person column or ``max_unit_chars``.
    """
    secret = installation_secret() if key is None else key
    documents = _BottomK(size)
    for text in corpus_texts(corpus):
        documents.add_document({document_hash(text, secret): ""})
    return documents.smallest()


# --- one pass over the text: both sketches and the lookups in the known ones ----------------------


@dataclass(frozen=True)
class ContentScan:
    """What one pass over a load's documents gives: its two sketches, and which of the looked-up hashes
    (``probe``) occur anywhere in it, over all of its text (not only its sketch)."""

    documents: list[int]  # v1 sketch
    shingles: ShingleSketch  # v2 sketch
    found_shingles: frozenset[int] = frozenset()
    found_documents: frozenset[int] = frozenset()


def corpus_texts(corpus: Corpus) -> list[str]:
    """The loaded documents' full texts (before grouping into units or truncation)."""
    return corpus.document_texts or [u.text for u in corpus.units]


def scan_content(
    corpus: Corpus, probe_shingles: Set[int] = frozenset(), probe_documents: Set[int] = frozenset(), *,
    key: bytes | None = None, size: int = SHINGLE_SKETCH_SIZE, v1_size: int = SKETCH_SIZE,
) -> ContentScan:
    """Sketch ``corpus`` (v1 and v2) and look every one of its shingles and documents up in the probes.

    Two passes over the text: the first hashes every shingle (bottom-k, lookups, v1 hashes); the second
    counts, for the few thousand words of the sketched shingles only, in how many documents each occurs,
    which grades each sketched shingle (``ShingleSketch.strength``). Memory stays bounded by ``size``.
    """
    secret = installation_secret() if key is None else key
    shingle_key = _shingle_key(secret)
    texts = corpus_texts(corpus)
    probe = frozenset(probe_shingles)
    sample, documents = _BottomK(size), _BottomK(v1_size)
    found_shingles: set[int] = set()
    found_documents: set[int] = set()
    for text in texts:
        hashes = shingle_hashes(identity_words(text), shingle_key)
        sample.add_document(hashes)
        if probe:
            found_shingles.update(probe.intersection(hashes))  # iterates the document's few hashes
        document = document_hash(text, secret)
        documents.add_document({document: ""})
        if document in probe_documents:
            found_documents.add(document)
    kept = sample.smallest()
    words_df = _document_counts(texts, {w for h in kept for w in sample.labels[h].split()})
    strength = tuple(_strength(sample.labels[h], sample.counts[h], words_df) for h in kept)
    sketch = ShingleSketch(tuple(kept), strength, size)
    return ContentScan(documents.smallest(), sketch, frozenset(found_shingles), frozenset(found_documents))


def _document_counts(texts: Iterable[str], words: set[str]) -> dict[str, int]:
    """In how many of ``texts`` each of ``words`` occurs (identity form)."""
    counts = dict.fromkeys(words, 0)
    for text in texts:
        for word in words.intersection(identity_words(text)):
            counts[word] += 1
    return counts


def _strength(shingle: str, documents: int, words_df: dict[str, int]) -> int:
    if min(words_df[w] for w in shingle.split()) <= RARE_DF:
        return HOLDS_A_RARE_WORD
    return RARE_SHINGLE if documents <= RARE_DF else COMMON


# --- how much of one is in the other ----------------------------------------------------------------


@dataclass(frozen=True)
class Containment:
    """The share of a known dataset's text found in a new load, and of the new load's in the known one."""

    known_in_new: float = 0.0
    new_in_known: float = 0.0

    @property
    def share(self) -> float:
        return max(self.known_in_new, self.new_in_known)


def containment(known: ShingleSketch, new: ShingleSketch, found: Set[int]) -> Containment:
    """How much of ``known`` is in the new load, and of the new load in ``known`` (v2 sketches).

    ``found``: those of ``known.evidence()`` that occur anywhere in the new load (``scan_content``), so
    ``known_in_new`` is the share of the known view's evidence found, whatever else the new load holds.
    ``new_in_known`` looks the new load's evidence up in the known sketch (only hashes up to its ``top``
    can be answered); a shingle the known view holds as a template is left out of it both ways, because
    a corpus of the same kind shares templates without sharing anyone's text.
    """
    evidence = known.evidence()
    known_in_new = len(evidence & found) / len(evidence) if evidence else 0.0
    templates = set(known.hashes) - evidence
    sample = [h for h in new.evidence() if h <= known.top and h not in templates]
    new_in_known = sum(1 for h in sample if h in evidence) / len(sample) if len(sample) >= MIN_SAMPLE else 0.0
    return Containment(known_in_new, new_in_known)


def document_containment(known: list[int], new: list[int], found: Set[int], size: int = SKETCH_SIZE) -> Containment:
    """The v1 comparison of whole documents: ``known``'s sketched documents found anywhere in the new load
    (``found``), and the new load's sketched documents in ``known`` (bottom-k)."""
    known_in_new = len(set(known) & found) / len(known) if known else 0.0
    return Containment(known_in_new, _contained(new, known, size))


def _contained(a: list[int], b: list[int], size: int) -> float:
    """Estimated share of A's documents that are also in B, from their bottom-k sketches.

    Only hashes of A below B's largest sketched hash can be looked up in B's sketch (B's sketch holds
    every hash of B in that range); when B's sketch is not full it holds all of B.
    """
    if not a or not b:
        return 0.0
    top = b[-1] if len(b) >= size else float("inf")
    seen = [h for h in a if h <= top]
    if not seen:
        return 0.0
    in_b = set(b)
    return sum(1 for h in seen if h in in_b) / len(seen)


def sketch_overlap(a: list[int], b: list[int], size: int = SKETCH_SIZE) -> float:
    """The v1 measure of older versions: the larger of the two bottom-k containments (A in B, B in A)."""
    return max(_contained(a, b, size), _contained(b, a, size))
