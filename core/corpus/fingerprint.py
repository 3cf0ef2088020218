"""A dataset fingerprint that names a corpus without revealing or confirming its content.

The fingerprint is HMAC-SHA256 under this installation's secret key (core/install/installation.py) over a
canonical serialisation of the units: sorted by uid, each uid and text as UTF-8 with an
8-byte big-endian length prefix, after a version tag and the unit count. A plain hash
would let anyone holding a guessed corpus check the guess against a certificate; the
keyed hash can only be recomputed on the installation that holds the key.

Whether two loads hold the same text is told by the content sketches, keyed the same way: identity form
(core/corpus/identity_form.py), the sketches (core/corpus/content_sketch.py), one pass over a load
(core/corpus/content_scan.py) and how much of one is in the other (core/corpus/containment.py).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Iterator

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
