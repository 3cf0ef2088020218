"""The ledger witness: the ledger's head kept outside ``ledger.db``, so a wiped ledger is noticed.

The hash chain in ``ledger.db`` shows edits, but not a ledger that was emptied, deleted, replaced
by a fresh one, or cut back at the end (rows deleted and SQLite's counter reset). The witness is a
second file beside the ledger (``ledger.witness``, mode 0600) holding the number of rows, the
newest row's sequence number and its chain hash, authenticated with an HMAC-SHA256 under the
installation secret (``core.ledger.seal``). It is rewritten after every append, and only ever
forwards: a witness never moves back to a shorter ledger.

``core.ledger.head.record_problems`` compares a ledger with its witness (``read_witness``, in the
witness's words, ``witness_words``). A ledger shorter than its witness, a ledger that no longer
holds the witnessed head row, a missing ledger whose witness says it had rows, a witness that does
not authenticate, or a ledger with rows but no witness are all reported as tampering. A ledger
*longer* than its witness is normal (a process stopped between writing a
row and its witness); the chain check vouches for the extra rows.

Limit (said plainly in docs/reliability.md): deleting BOTH the ledger and its witness looks
exactly like a fresh installation. Keep backups of the data folder.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from core.ledger.head import HeadWords
from core.ledger.seal import DAMAGED, moves_back, sealed, unseal
from core.common.private_files import touch_private, write_private

WITNESS_SUFFIX = ".witness"
VERSION = 1
_LABEL = b"privet-ledger-witness-v1\x00"
_FIELDS = ("version", "rows", "head_seq", "head_hash", "updated_at")


@dataclass(frozen=True)
class Witness:
    """What the witness vouches for: the ledger had at least ``rows`` rows, the newest being
    ``head_seq`` with chain hash ``head_hash``."""

    rows: int
    head_seq: int
    head_hash: str
    updated_at: str = ""


def witness_path(ledger_path: Path) -> Path:
    return Path(ledger_path).with_suffix(WITNESS_SUFFIX)


def _witness(payload: dict[str, Any]) -> Witness:
    return Witness(int(payload["rows"]), int(payload["head_seq"]), str(payload["head_hash"]), str(payload["updated_at"]))


def read_witness(ledger_path: Path) -> tuple[Witness | None, str]:
    """The witness of ``ledger_path`` and "" when it authenticates; ``(None, problem)`` when damaged;
    ``(None, "")`` when there is no witness file."""
    path = witness_path(ledger_path)
    if not path.exists():
        return None, ""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    witness, problem = unseal(_LABEL, text, _FIELDS, _witness)
    if problem == DAMAGED:
        return None, f"the ledger's witness file {path.name} is damaged (it cannot be read)"
    if problem:
        return None, (
            f"the ledger's witness file {path.name} does not authenticate under this installation's key "
            "(it was edited, or copied from another installation, or the installation key was replaced)"
        )
    return witness, ""


@contextlib.contextmanager
def _locked(ledger_path: Path) -> Iterator[None]:
    """Serialise witness updates between processes (POSIX advisory lock; none elsewhere)."""
    try:
        import fcntl
    except ImportError:  # Windows: SQLite still serialises the appends themselves
        yield
        return
    lock = touch_private(witness_path(ledger_path).with_suffix(".witness-lock"))
    with open(lock, "rb") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def record_head(ledger_path: Path, read_head: Callable[[], Witness],
                row_hash_at: Callable[[int], str | None], force: bool = False) -> None:
    """Write the ledger's current head as its witness (after an append has committed).

    ``read_head`` reads the head from the database *inside* the lock, so concurrent appenders
    write witnesses in order. The witness only moves forward: it is not replaced when it is damaged,
    vouches for more rows, or names a head row the ledger no longer holds (evidence kept for the check).
    """
    with _locked(ledger_path):
        head = read_head()
        old, problem = read_witness(ledger_path)
        if not force and (problem or moves_back(old, head.rows, row_hash_at)):
            return
        payload = {
            "version": VERSION,
            "rows": head.rows,
            "head_seq": head.head_seq,
            "head_hash": head.head_hash,
            "updated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        write_private(witness_path(ledger_path), json.dumps(sealed(_LABEL, payload), indent=2) + "\n")


def witness_words(ledger_path: Path) -> HeadWords[Witness]:
    """The witness's words for what :func:`core.ledger.head.record_problems` finds."""
    return HeadWords(
        unrecorded=lambda rows: (
            f"the ledger has {rows} entries but its witness file {witness_path(ledger_path).name} is missing "
            "(it was deleted, or this ledger was written by a Privet version without a witness)"),
        fewer=lambda rows, w: (
            f"the ledger holds {rows} entries but its witness recorded {w.rows} "
            f"(last updated {w.updated_at or 'unknown'}): entries were removed, or the ledger was "
            "emptied, deleted or replaced"),
        changed=lambda w, gone: (
            f"ledger entry {w.head_seq}, which the witness recorded as the newest, "
            + ("is gone" if gone else "differs from the witnessed one") + ": the ledger was rewritten or replaced"),
        missing=lambda w: (
            f"the ledger {Path(ledger_path).name} is missing or empty, but its witness recorded "
            f"{w.rows} entries (last updated {w.updated_at or 'unknown'}): it was deleted or wiped"),
    )

