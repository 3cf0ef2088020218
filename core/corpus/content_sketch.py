"""The keyed content sketches that tell whether two loads hold the same text (``core.ledger.booking``).

They are keyed with the installation secret like the dataset fingerprint (core/corpus/fingerprint.py), so they
cannot be used to test a guess either:

- **v3, the content sketch** (``ContentSketch``, made by ``core.corpus.content_scan.scan_content``). Each document's
  text is put in *identity form* (core/corpus/identity_form.py) and cut into overlapping ``SHINGLE_WORDS``-word
  shingles (a shorter document is one shingle) and sampled ``GRAM_CHARS``-character n-grams of the text without
  spaces. Each distinct shingle is hashed with keyed BLAKE2b (its key derived from the installation secret); the
  sketch keeps the ``SHINGLE_SKETCH_SIZE`` smallest hashes (bottom-k) and grades each by how rare it is in the view:
  a shingle holding a rare word (a name, an age, a sentence of its own) counts most; a shingle in many documents is
  a template ("came in complaining of"), which two different corpora of the same kind share, so it does not count as
  evidence. A sample of documents is also signed by the keyed hashes of their rarest words (order-free). A prefix or
  suffix on every note, notes split in two or merged in pairs leave almost every shingle as it was.
- **v1, the document sketch** (``document_hash``, kept by ``scan_content``): the 256 smallest keyed hashes of the
  whole, whitespace-normalised document texts. Ledgers written before v2 hold only these; new views store both, and
  a v1 sketch is compared in the v1 way (whole documents, core/corpus/containment.py).

The scan is linear in the text and holds at most ``SHINGLE_SKETCH_SIZE`` hashes per sketch, so 10^6 documents need
no more memory than 10^3.
"""

from __future__ import annotations

import hashlib
import heapq
import hmac
import json
import math
import re
from dataclasses import dataclass

from core.corpus.identity_form import spaceless


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


class BottomK:
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


def sketch_key(secret: bytes, tag: bytes = SHINGLE_TAG) -> bytes:
    return hmac.new(secret, tag, hashlib.sha256).digest()


def shingles(words: list[str], w: int = SHINGLE_WORDS) -> list[str]:
    """A document's ``w``-word shingles (the whole document when it is shorter), words joined by a space."""
    if len(words) <= w:
        return [" ".join(words)] if words else []
    return [" ".join(words[i:i + w]) for i in range(len(words) - w + 1)]


def keyed_hash(text: str, key: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), key=key, digest_size=8).digest(), "big")


def shingle_hashes(words: list[str], key: bytes, w: int = SHINGLE_WORDS) -> dict[int, str]:
    """The keyed 64-bit hash of each distinct shingle of a document, mapped to the shingle."""
    return {keyed_hash(g, key): g for g in shingles(words, w)}


def gram_hashes(identity: str, key: bytes) -> dict[int, str]:
    """The keyed 64-bit hash of each distinct sampled character n-gram of a document in identity form."""
    return {keyed_hash(g, key): g for g in set(_GRAMS.findall(spaceless(identity)))}


# --- v1: keyed hashes of whole documents (the sketch of older ledgers) -----------------------------

SKETCH_TAG = b"privet/document-hash/v1\n"
SKETCH_SIZE = 256  # bottom-k: the k smallest keyed document hashes


def document_hash(text: str, secret: bytes) -> int:
    """The v1 keyed hash of one document's whitespace-normalised text."""
    digest = hmac.new(secret, SKETCH_TAG + " ".join(text.split()).encode("utf-8"), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")
