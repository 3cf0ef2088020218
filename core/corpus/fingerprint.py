"""A dataset fingerprint that names a corpus without revealing or confirming its content.

It is HMAC-SHA256 under this installation's secret key (core/installation.py) over a
canonical serialisation of the units: sorted by uid, each uid and text as UTF-8 with an
8-byte big-endian length prefix, after a version tag and the unit count. A plain hash
would let anyone holding a guessed corpus check the guess against a certificate; the
keyed hash can only be recomputed on the installation that holds the key.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Iterator

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


# --- the content sketch: do two views hold the same documents? ------------------------------------

SKETCH_TAG = b"privet/document-hash/v1\n"
SKETCH_SIZE = 256  # bottom-k: the k smallest keyed document hashes
SAME_DATASET_OVERLAP = 0.5  # share of one view's documents found in the other that makes them one dataset


def content_sketch(corpus: Corpus, *, key: bytes | None = None, size: int = SKETCH_SIZE) -> list[int]:
    """The ``size`` smallest keyed hashes of the corpus's document texts (a bottom-k sketch), sorted.

    A document's hash depends on its text only (whitespace-normalised): not on its id, its row, the
    file's name, the person column or ``max_unit_chars``. So views of one file, a reordered copy, a copy
    with rows dropped or added under another name all have sketches that overlap (``sketch_overlap``).
    Keyed (HMAC under the installation secret) like the fingerprint: it cannot be used to test a guess.
    """
    secret = installation_secret() if key is None else key
    texts = corpus.document_texts or [u.text for u in corpus.units]
    hashes = set()
    for text in texts:
        digest = hmac.new(secret, SKETCH_TAG + " ".join(text.split()).encode("utf-8"), hashlib.sha256).digest()
        hashes.add(int.from_bytes(digest[:8], "big"))
    return sorted(hashes)[:size]


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
    """The larger of the two containments (A in B, B in A): 1.0 for the same documents in any order,
    close to 1 with a few rows dropped or added, about 0 for unrelated documents."""
    return max(_contained(a, b, size), _contained(b, a, size))
