"""The seal on the ledger's two head records: the witness and the high-water mark.

Both hold the same facts (number of entries, newest entry and its chain hash) as a small JSON object
with an HMAC-SHA256, each under its own label so one cannot be passed off as the other. The witness is
sealed with the installation secret (``core.install.installation``, in the data folder, beside it); the
high-water mark with a key kept outside the data folder (``core.ledger.highwater``), so that it still
authenticates when the data folder is lost. Both only ever move forward: a record is not replaced when it
vouches for more entries than the ledger holds, or names an entry the ledger no longer has.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from core.install.installation import installation_secret

T = TypeVar("T")

DAMAGED = "damaged"  # the record cannot be read
UNAUTHENTIC = "unauthentic"  # the record does not authenticate under this installation's key


class Head(Protocol):
    """What a head record vouches for: at least ``rows`` entries, the newest ``head_seq`` with ``head_hash``."""

    @property
    def rows(self) -> int: ...

    @property
    def head_seq(self) -> int: ...

    @property
    def head_hash(self) -> str: ...


def mac(label: bytes, payload: dict[str, Any], key: bytes | None = None) -> str:
    """HMAC-SHA256 of ``payload`` (canonical JSON) under ``key`` (default: the installation secret),
    prefixed by ``label``."""
    body = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return hmac.new(installation_secret() if key is None else key, label + body, hashlib.sha256).hexdigest()


def sealed(label: bytes, payload: dict[str, Any], key: bytes | None = None) -> dict[str, Any]:
    """``payload`` with its ``mac`` (under ``key``, default the installation secret)."""
    return {**payload, "mac": mac(label, payload, key)}


def unseal(label: bytes, text: str, fields: tuple[str, ...],
           build: Callable[[dict[str, Any]], T], key: bytes | None = None) -> tuple[T | None, str]:
    """The record ``build`` makes of the sealed JSON ``text`` and ""; else ``None`` and ``DAMAGED`` (not
    readable, a field missing or of the wrong type) or ``UNAUTHENTIC`` (its mac under ``key``, default the
    installation secret, does not check)."""
    try:
        data = json.loads(text)
        payload = {k: data[k] for k in fields}
        record = build(payload)
        seal = data["mac"]
    except (ValueError, KeyError, TypeError):
        return None, DAMAGED
    if not isinstance(seal, str) or not hmac.compare_digest(seal, mac(label, payload, key)):
        return None, UNAUTHENTIC
    return record, ""


def moves_back(old: Head | None, rows: int, row_hash_at: Callable[[int], str | None]) -> bool:
    """Whether replacing ``old`` by a head of ``rows`` entries would lose evidence: ``old`` vouches for
    more entries, or names an entry the ledger no longer holds as it was."""
    return old is not None and (old.rows > rows or (old.head_seq > 0 and row_hash_at(old.head_seq) != old.head_hash))
