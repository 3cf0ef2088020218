"""A dataset fingerprint that names a corpus without revealing or confirming its content, and the
content sketches that tell whether two loads hold the same text (``core.ledger.booking``).

The fingerprint is HMAC-SHA256 under this installation's secret key (core/install/installation.py) over a
canonical serialisation of the units: sorted by uid, each uid and text as UTF-8 with an
8-byte big-endian length prefix, after a version tag and the unit count. A plain hash
would let anyone holding a guessed corpus check the guess against a certificate; the
keyed hash can only be recomputed on the installation that holds the key.

Content sketches are keyed the same way (they cannot be used to test a guess either):

- **v2, the shingle sketch** (``scan_content``). Each document's text is put in *identity form*
  (``identity_text``: NFKC, case-folded, format characters such as zero-width spaces removed,
  punctuation and symbols turned into spaces, whitespace collapsed) and cut into overlapping
  ``SHINGLE_WORDS``-word shingles (a shorter document is one shingle). Each distinct shingle is hashed
  with keyed BLAKE2b (its key derived from the installation secret); the sketch keeps the
  ``SHINGLE_SKETCH_SIZE`` smallest hashes (bottom-k) and marks those that occur in at most
  ``DISTINCTIVE_DF`` documents as *distinctive*: a name, an age, a sentence of its own. A shingle in
  many documents is a template ("came in complaining of"), which two different corpora of the same
  kind share, so it does not count as evidence. Upper- or lower-casing, punctuation, zero-width
  characters, a prefix or suffix on every note, notes split in two or merged in pairs leave almost
  every shingle as it was.
- **v1, the document sketch** (``document_hash``, kept by ``scan_content``): the 256 smallest keyed hashes of the whole,
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
import heapq
import hmac
import html
import json
import math
import re
import sys
import unicodedata
from collections.abc import Iterable, Iterator, Set
from dataclasses import dataclass

from core.corpus.model import Corpus, Unit
from core.install.installation import installation_secret

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

# Look-alike letters (Unicode confusables, UTS #39) folded to the Latin letter they are drawn like, after case
# folding: the Cyrillic and Greek letters that render as a Latin one in common fonts, and a few others. UTS #39's
# full skeleton table is not installed with Python; these are the letters a look-alike copy uses (a maintained
# table would also fold rarer symbols, which identity form turns into spaces anyway).
_CONFUSABLE_PAIRS = {
    # Cyrillic
    "а": "a", "в": "b", "г": "r", "д": "d", "е": "e", "ё": "e", "и": "u", "й": "u", "к": "k",
    "л": "n", "м": "m", "н": "h", "о": "o", "п": "n", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x",
    "ь": "b", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l",
    "ү": "y", "ɡ": "g", "ʏ": "y", "ᴄ": "c", "ᴏ": "o", "ᴠ": "v", "ᴡ": "w", "ᴢ": "z",
    # Greek
    "α": "a", "β": "b", "γ": "y", "δ": "d", "ε": "e", "ζ": "z", "η": "n", "ι": "i", "κ": "k", "ν": "v",
    "ο": "o", "ρ": "p", "σ": "o", "ς": "c", "τ": "t", "υ": "u", "χ": "x", "ω": "w", "ϲ": "c", "ϳ": "j",
    # Latin look-alikes outside ASCII
    "ı": "i", "ȷ": "j", "ł": "l", "ø": "o", "đ": "d", "ħ": "h", "ŀ": "l", "ſ": "s",
}
_CONFUSABLES = str.maketrans(_CONFUSABLE_PAIRS)
# Digits written for letters inside words that mix both ("pati3nt", "n0te", "c1inic"): folded to the letter.
# A word of digits only (an age, a dose) is left alone. "1" stands for l or i, so i is folded to l everywhere.
_LEET = str.maketrans("0134578", "oleastb")
_MIXED_WORD = re.compile(r"\b(?=[^\W\d_]*\d)(?=\d*[^\W\d_])\w+\b")
_I_TO_L = str.maketrans("i", "l")
# Markup: an HTML or XML tag (a letter, "/", "!" or "?" after "<"), and a word broken across lines by a hyphen
# (text extracted from a PDF: "treat-\nment").
_TAG = re.compile(r"<[A-Za-z!/?][^<>]{0,1000}>")
_LINE_HYPHEN = re.compile(r"(\w)-[ \t]*\r?\n\s*(\w)")


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


def _strip_marks(text: str) -> str:
    """``text`` without combining marks (accents): "é" and "e" are drawn alike."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def identity_text(text: str) -> str:
    """``text`` in identity form (version ``IDENTITY_VERSION``):

    1. markup: HTML/XML character references decoded (twice, for a doubly escaped export), tags turned into
       spaces, a word hyphenated across a line break joined again;
    2. NFKC, case-folded; look-alike letters folded to the Latin letter (``_CONFUSABLE_PAIRS``); accents and
       other combining marks removed; format characters (Cf, e.g. zero-width spaces) removed;
    3. punctuation, symbols and control characters turned into spaces, whitespace collapsed;
    4. in a word that mixes letters and digits, digits folded to the letters they stand for (3→e, 0→o, 1→l,
       4→a, 5→s, 7→t, 8→b); i folded to l everywhere (1 stands for either).
    """
    if "&" in text or "<" in text:
        text = _TAG.sub(" ", html.unescape(html.unescape(text)))
    if "-" in text and "\n" in text:
        text = _LINE_HYPHEN.sub(r"\1\2", text)
    if text.isascii():  # NFKC leaves ASCII alone and its case folding is lower()
        folded = text.lower().translate(_ASCII_SEPARATORS)
    else:
        folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
        folded = _strip_marks(folded.translate(_CONFUSABLES)).translate(_CONFUSABLES)
        folded = unicodedata.normalize("NFKC", folded.translate(_separator_table()))
    folded = " ".join(folded.split())
    if any(c.isdigit() for c in folded):
        folded = _MIXED_WORD.sub(lambda m: m.group().translate(_LEET), folded)
    return folded.translate(_I_TO_L)


def spaceless(identity: str) -> str:
    """Identity form without spaces, every digit folded as in a mixed word: words joined or split, a line
    break inside a word, and a digit for a letter leave its character n-grams as they were."""
    return identity.replace(" ", "").translate(_LEET)


# --- v3: keyed word shingles and character n-grams, bottom-k, graded by how rare they are -----------

SHINGLE_VERSION = 3  # the identity form and the sketch's layout (v2: word shingles only, older identity form)
SHINGLE_TAG = b"privet/content-shingle/v3\n"
GRAM_TAG = b"privet/content-gram/v3\n"
WORD_TAG = b"privet/content-word/v3\n"
SHINGLE_WORDS = 5  # w: a shingle is w consecutive words in identity form
GRAM_CHARS = 10  # a character n-gram of the text without spaces (``spaceless``)
# Only the n-grams that start with "e" are hashed (about one position in eight; chosen by content, so a copy
# hashes the same ones): cost stays near the word shingles'.
_GRAMS = re.compile(r"(?=(e.{%d}))" % (GRAM_CHARS - 1))
SHINGLE_SKETCH_SIZE = 4096  # bottom-k: the k smallest keyed shingle hashes of a view
RARE_DF = 2  # a word (or shingle) in at most this many documents of a view is rare in it
MIN_SAMPLE = 8  # fewer shingles than this to compare: that direction gives no evidence
# How much a sketched shingle says about whose text it is, graded within its own view:
HOLDS_A_RARE_WORD = 2  # it holds a word in at most RARE_DF documents (a name, an age, a record number)
RARE_SHINGLE = 1  # it is itself in at most RARE_DF documents (an uncommon combination of common words)
COMMON = 0  # a template ("came in complaining of"): two different corpora of one kind share these

# Per-document signatures: order-free evidence of single documents, so that a few documents of a known
# dataset inside a larger file, or its documents with their words reordered, dropped, added or half cut, are
# found document by document.
DOC_SAMPLE = 2048  # bottom-k over documents: at most this many documents of a view are signed
DOC_WORDS = 8  # a signature: the keyed hashes of a document's (at most) 8 rarest words in its view
DOC_MIN_WORDS = 4  # a document with fewer signature words is not signed (too little to tell it from others)
DOC_RARE_SHARE = 0.1  # a signature word is in at most this share of the view's documents (not a template)
DOC_MATCH_SHARE = 0.75  # a new document holding this share of a signature (and DOC_MIN_WORDS) is that document
# How much stronger than the word shingles' each kind of evidence must be to decide alone. Character n-grams
# are graded by their own rarity only (no word boundaries to find a rare word in), and two corpora from one
# generator share up to about 0.6 of them; a copy with joined words shares all of them.
EVIDENCE_BAR = {"shingles": 1.0, "n-grams": 4.0, "documents": 1.0}


@dataclass(frozen=True)
class ShingleSketch:
    """A view's bottom-k shingle hashes (sorted) and, for each, how rare it is in the view (``strength``)."""

    hashes: tuple[int, ...]
    strength: tuple[int, ...]  # HOLDS_A_RARE_WORD, RARE_SHINGLE or COMMON, one per hash
    size: int = SHINGLE_SKETCH_SIZE
    words: int = SHINGLE_WORDS  # words per shingle; 0: character n-grams (GRAM_CHARS)
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

    def to_dict(self) -> dict:
        return {"version": self.version, "words": self.words, "size": self.size,
                "hashes": list(self.hashes), "strength": "".join(map(str, self.strength))}

    @classmethod
    def from_dict(cls, data: dict) -> ShingleSketch:
        return cls(tuple(int(h) for h in data["hashes"]), tuple(int(s) for s in data["strength"]),
                   int(data["size"]), int(data["words"]), int(data["version"]))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> ShingleSketch:
        return cls.from_dict(json.loads(text))


@dataclass(frozen=True)
class DocumentSignatures:
    """A sample of a view's documents (bottom-k by a keyed hash of the document), each signed by the keyed
    hashes of its rarest words (order-free); ``documents``: how many documents the view holds."""

    signatures: tuple[tuple[int, ...], ...] = ()
    sampled: int = 0  # documents in the sample (signed or too plain to sign)
    documents: int = 0

    @property
    def signed_share(self) -> float:
        """The estimated share of the view's documents that carry a signature in the sample's proportion."""
        return len(self.signatures) / self.documents if self.documents else 0.0

    def to_dict(self) -> dict:
        return {"signatures": [list(s) for s in self.signatures], "sampled": self.sampled,
                "documents": self.documents}

    @classmethod
    def from_dict(cls, data: dict) -> DocumentSignatures:
        return cls(tuple(tuple(int(h) for h in s) for s in data["signatures"]), int(data["sampled"]),
                   int(data["documents"]))


@dataclass(frozen=True)
class ContentSketch:
    """Everything a view keeps to compare text with (version ``SHINGLE_VERSION``): its word shingles, its
    character n-grams and its document signatures."""

    shingles: ShingleSketch
    grams: ShingleSketch
    documents: DocumentSignatures
    version: int = SHINGLE_VERSION

    @property
    def hashes(self) -> tuple[int, ...]:
        return self.shingles.hashes

    def probe(self) -> frozenset[int]:
        """The keyed hashes a new load is searched for: the shingles' and the n-grams' evidence."""
        return self.shingles.evidence() | self.grams.evidence()

    def to_json(self) -> str:
        return json.dumps({"version": self.version, "shingles": self.shingles.to_dict(),
                           "grams": self.grams.to_dict(), "documents": self.documents.to_dict()},
                          separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> ContentSketch:
        data = json.loads(text)
        return cls(ShingleSketch.from_dict(data["shingles"]), ShingleSketch.from_dict(data["grams"]),
                   DocumentSignatures.from_dict(data["documents"]), int(data["version"]))


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


def _shingle_key(secret: bytes, tag: bytes = SHINGLE_TAG) -> bytes:
    return hmac.new(secret, tag, hashlib.sha256).digest()


def shingles(words: list[str], w: int = SHINGLE_WORDS) -> list[str]:
    """A document's ``w``-word shingles (the whole document when it is shorter), words joined by a space."""
    if len(words) <= w:
        return [" ".join(words)] if words else []
    return [" ".join(words[i:i + w]) for i in range(len(words) - w + 1)]


def _keyed(text: str, key: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), key=key, digest_size=8).digest(), "big")


def shingle_hashes(words: list[str], key: bytes, w: int = SHINGLE_WORDS) -> dict[int, str]:
    """The keyed 64-bit hash of each distinct shingle of a document, mapped to the shingle."""
    return {_keyed(g, key): g for g in shingles(words, w)}


def gram_hashes(identity: str, key: bytes) -> dict[int, str]:
    """The keyed 64-bit hash of each distinct sampled character n-gram of a document in identity form."""
    return {_keyed(g, key): g for g in set(_GRAMS.findall(spaceless(identity)))}


# --- v1: keyed hashes of whole documents (the sketch of older ledgers) -----------------------------

SKETCH_TAG = b"privet/document-hash/v1\n"
SKETCH_SIZE = 256  # bottom-k: the k smallest keyed document hashes


def document_hash(text: str, secret: bytes) -> int:
    """The v1 keyed hash of one document's whitespace-normalised text."""
    digest = hmac.new(secret, SKETCH_TAG + " ".join(text.split()).encode("utf-8"), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")


# --- one pass over the text: the sketches and the lookups in the known ones ------------------------


@dataclass(frozen=True)
class DocumentMatches:
    """What the per-document lookups found of one known view: which of its signed documents occur in the new
    load (``known_found``) and how many of the new load's documents are one of them (``new_matched``)."""

    known_found: int = 0
    new_matched: int = 0


@dataclass(frozen=True)
class ContentScan:
    """What one pass over a load's documents gives: its sketches, and which of the looked-up hashes
    (``probe``) occur anywhere in it, over all of its text (not only its sketch)."""

    documents: list[int]  # v1 sketch
    sketch: ContentSketch
    found_shingles: frozenset[int] = frozenset()  # shingle and n-gram hashes of the probe found
    found_documents: frozenset[int] = frozenset()
    document_matches: tuple[DocumentMatches, ...] = ()  # one per known sketch passed in, in order
    n_documents: int = 0

    @property
    def shingles(self) -> ShingleSketch:
        return self.sketch.shingles


def corpus_texts(corpus: Corpus) -> list[str]:
    """The loaded documents' full texts (before grouping into units or truncation)."""
    return corpus.document_texts or [u.text for u in corpus.units]


class _SignatureIndex:
    """The known views' document signatures, by word hash: finds, for a new document, the signed documents
    it holds (at least ``DOC_MATCH_SHARE`` of the signature and ``DOC_MIN_WORDS`` words)."""

    def __init__(self, known: list[DocumentSignatures]) -> None:
        self.index: dict[int, list[tuple[int, int]]] = {}
        self.need: dict[tuple[int, int], int] = {}
        for i, signatures in enumerate(known):
            for j, signature in enumerate(signatures.signatures):
                self.need[i, j] = max(DOC_MIN_WORDS, math.ceil(DOC_MATCH_SHARE * len(signature)))
                for h in signature:
                    self.index.setdefault(h, []).append((i, j))
        self.found: list[set[int]] = [set() for _ in known]
        self.new_matched = [0] * len(known)

    def add_document(self, word_hashes: Iterable[int]) -> None:
        hits: dict[tuple[int, int], int] = {}
        for h in word_hashes:
            for ref in self.index.get(h, ()):
                hits[ref] = hits.get(ref, 0) + 1
        matched = {ref for ref, n in hits.items() if n >= self.need[ref]}
        for i in {i for i, _ in matched}:
            self.new_matched[i] += 1
        for i, j in matched:
            self.found[i].add(j)

    def results(self) -> tuple[DocumentMatches, ...]:
        return tuple(DocumentMatches(len(f), n) for f, n in zip(self.found, self.new_matched))


def scan_content(
    corpus: Corpus, probe_shingles: Set[int] = frozenset(), probe_documents: Set[int] = frozenset(), *,
    known: Iterable[DocumentSignatures] = (), key: bytes | None = None, size: int = SHINGLE_SKETCH_SIZE,
    v1_size: int = SKETCH_SIZE, doc_sample: int = DOC_SAMPLE,
) -> ContentScan:
    """Sketch ``corpus`` (v1 and v3), look every one of its shingles, n-grams and documents up in the probes,
    and every document up in the ``known`` views' document signatures.

    Two passes over the text: the first hashes every shingle and n-gram (bottom-k, lookups, v1 hashes, the
    document sample and the per-document lookups); the second counts, for the words of the sketched shingles
    and of the sampled documents only, in how many documents each occurs, which grades each sketched shingle
    (``ShingleSketch.strength``) and picks each sampled document's rarest words. Memory stays bounded by the
    sketch sizes (the identity forms of up to ``_CACHE_DOCUMENTS`` documents are kept between the passes).
    """
    secret = installation_secret() if key is None else key
    shingle_key, gram_key, word_key = (_shingle_key(secret, tag) for tag in (SHINGLE_TAG, GRAM_TAG, WORD_TAG))
    texts = corpus_texts(corpus)
    probe = frozenset(probe_shingles)
    known = list(known)
    signatures = _SignatureIndex(known) if any(k.signatures for k in known) else None
    word_hash = functools.lru_cache(maxsize=1 << 16)(lambda w: _keyed(w, word_key))
    sample, grams, documents = _BottomK(size), _BottomK(size), _BottomK(v1_size)
    chosen = _BottomK(doc_sample)  # the documents to sign, by a keyed hash of their identity form
    found_shingles: set[int] = set()
    found_documents: set[int] = set()
    cache: list[str] | None = [] if len(texts) <= _CACHE_DOCUMENTS else None
    for text in texts:
        identity = identity_text(text)
        if cache is not None:
            cache.append(identity)
        words = identity.split()
        hashes = shingle_hashes(words, shingle_key)
        sample.add_document(hashes)
        gram = gram_hashes(identity, gram_key)
        grams.add_document(gram)
        chosen.add_document({_keyed(identity, word_key): identity})
        if probe:
            found_shingles.update(probe.intersection(hashes))  # iterates the document's few hashes
            found_shingles.update(probe.intersection(gram))
        if signatures is not None:
            signatures.add_document({word_hash(w) for w in set(words)})
        document = document_hash(text, secret)
        documents.add_document({document: ""})
        if document in probe_documents:
            found_documents.add(document)
    identities: Iterable[str] = cache if cache is not None else map(identity_text, texts)
    kept, kept_grams, signed = sample.smallest(), grams.smallest(), chosen.smallest()
    wanted = {w for h in kept for w in sample.labels[h].split()}
    wanted.update(w for h in signed for w in chosen.labels[h].split())
    words_df = _document_counts(identities, wanted)
    strength = tuple(_strength(sample.labels[h], sample.counts[h], words_df) for h in kept)
    gram_strength = tuple(RARE_SHINGLE if grams.counts[h] <= RARE_DF else COMMON for h in kept_grams)
    n = len(texts)
    rare_limit = max(RARE_DF, int(DOC_RARE_SHARE * n))
    signed_documents = []
    for h in signed:
        rare = sorted((words_df[w], word_hash(w)) for w in set(chosen.labels[h].split()) if words_df[w] <= rare_limit)
        if len(rare) >= DOC_MIN_WORDS:
            signed_documents.append(tuple(sorted(wh for _, wh in rare[:DOC_WORDS])))
    sketch = ContentSketch(ShingleSketch(tuple(kept), strength, size),
                           ShingleSketch(tuple(kept_grams), gram_strength, size, words=0),
                           DocumentSignatures(tuple(signed_documents), len(signed), n))
    matches = signatures.results() if signatures is not None else tuple(DocumentMatches() for _ in known)
    return ContentScan(documents.smallest(), sketch, frozenset(found_shingles), frozenset(found_documents),
                       matches, n)


_CACHE_DOCUMENTS = 200_000  # up to this many documents, identity forms are computed once for both passes


def _document_counts(texts: Iterable[str], words: set[str]) -> dict[str, int]:
    """In how many of ``texts`` (in identity form) each of ``words`` occurs."""
    counts = dict.fromkeys(words, 0)
    for text in texts:
        for word in words.intersection(text.split()):
            counts[word] += 1
    return counts


def _strength(shingle: str, documents: int, words_df: dict[str, int]) -> int:
    if min(words_df[w] for w in shingle.split()) <= RARE_DF:
        return HOLDS_A_RARE_WORD
    return RARE_SHINGLE if documents <= RARE_DF else COMMON


# --- how much of one is in the other ----------------------------------------------------------------


@dataclass(frozen=True)
class Containment:
    """The share of a known dataset's text found in a new load, and of the new load's in the known one
    (the largest over the kinds of evidence), with the kind that gave it (``evidence``: "shingles",
    "n-grams" or "documents") and, for documents, how many of the new load's are documents of the known one."""

    known_in_new: float = 0.0
    new_in_known: float = 0.0
    evidence: str = ""
    documents_matched: int = 0
    documents_in_load: int = 0

    @property
    def share(self) -> float:
        return max(self.known_in_new, self.new_in_known)


def _sketch_containment(known: ShingleSketch, new: ShingleSketch, found: Set[int]) -> Containment:
    evidence = known.evidence()
    known_in_new = len(evidence & found) / len(evidence) if evidence else 0.0
    templates = set(known.hashes) - evidence
    sample = [h for h in new.evidence() if h <= known.top and h not in templates]
    new_in_known = sum(1 for h in sample if h in evidence) / len(sample) if len(sample) >= MIN_SAMPLE else 0.0
    return Containment(known_in_new, new_in_known)


def containment(known: ContentSketch, scan: ContentScan, matches: DocumentMatches = DocumentMatches()) -> Containment:
    """How much of ``known`` is in the new load (``scan``), and of the new load in ``known``; the largest of
    three kinds of evidence:

    - **shingles** and **n-grams** (ordered): the share of ``known``'s evidence found anywhere in the new load
      (``scan.found_shingles``), so filler rows cannot dilute it, and of the new load's evidence in ``known``
      (bottom-k: only hashes up to its ``top`` can be answered); a hash the known view holds as a template is
      left out both ways, because a corpus of the same kind shares templates without sharing anyone's text;
    - **documents** (order-free, per document; ``matches``, from ``scan_content(known=…)``): the share of
      ``known``'s signed documents found in the new load, and the estimated share of the new load's documents
      that are documents of ``known`` (matched documents over the load's documents times the share of
      ``known``'s documents that are signed).
    """
    found = scan.found_shingles
    kinds = [("shingles", _sketch_containment(known.shingles, scan.sketch.shingles, found)),
             ("n-grams", _sketch_containment(known.grams, scan.sketch.grams, found))]
    signed = known.documents
    if signed.signatures:
        known_docs = matches.known_found / len(signed.signatures)
        expected = scan.n_documents * signed.signed_share
        new_docs = min(1.0, matches.new_matched / expected) if expected > 0 else 0.0
        kinds.append(("documents", Containment(known_docs, new_docs)))
    name, best = max(kinds, key=lambda k: k[1].share / EVIDENCE_BAR[k[0]])
    return Containment(best.known_in_new, best.new_in_known, name, matches.new_matched, scan.n_documents)


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
