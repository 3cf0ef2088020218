"""The ledger's high-water mark: its entry count and head, kept where restoring the data folder does not restore it.

The witness (``core.ledger.witness``) lives beside ``ledger.db``: restoring an older copy of the data folder
restores a ledger and a witness that agree, and the entries written since are forgotten unnoticed. The
high-water mark holds the same facts (number of entries, newest entry and its chain hash) *outside* the
data folder, and only ever moves forward:

- in the operating system's keyring (service ``privet``, one entry per ledger path) when ``keyring`` finds
  a trusted one (the rules of ``core.certificate.signing``);
- otherwise (a headless machine, ``PRIVET_KEYRING=file`` or ``memory``) in a small file, authenticated with
  an HMAC under the installation secret (``core.ledger.seal``), in a state folder outside the data folder: ``PRIVET_STATE_DIR``;
  else, when ``PRIVET_HOME`` names the data folder, a hidden folder beside it (``.<name>.privet-state``);
  else ``$XDG_STATE_HOME/privet`` (``~/.local/state/privet``).

A ledger with fewer entries than its mark, or without the entry the mark names, was rolled back or replaced.
What it cannot prove is said in docs/reliability.md: someone who can delete the keyring entry or the state
file as well as restore the folder leaves what looks like an upgrade from a version without a mark, which
is refused until ``privet ledger --rewitness --acknowledge-unverifiable-history`` records it in the ledger.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import keyring
import keyring.errors

from core.ledger.seal import DAMAGED, moves_back, sealed, unseal
from core.private_files import private_folder, write_private

SERVICE = "privet"
_LABEL = b"privet-ledger-high-water-v1\x00"
UNTRUSTED_BACKEND_MODULES = ("keyring.backends.fail", "keyring.backends.null", "keyrings.alt")


@dataclass(frozen=True)
class HighWater:
    """The most entries this ledger has been seen to hold, and its newest entry then."""

    rows: int
    head_seq: int
    head_hash: str


def _entry_name(ledger_path: Path) -> str:
    digest = hashlib.sha256(str(Path(ledger_path).resolve()).encode("utf-8")).hexdigest()[:24]
    return f"ledger-high-water-{digest}"


def state_dir() -> Path:
    """The file fallback's folder, outside the data folder (see the module docstring)."""
    env = os.environ.get("PRIVET_STATE_DIR")
    if env:
        return Path(env)
    home = os.environ.get("PRIVET_HOME")
    if home:
        folder = Path(home).resolve()
        return folder.parent / f".{folder.name}.privet-state"
    xdg = os.environ.get("XDG_STATE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "state") / "privet"


def _trusted(backend: object) -> bool:
    inner = getattr(backend, "backends", None)
    if inner is not None:
        return any(_trusted(b) for b in inner)
    if type(backend).__module__.startswith(UNTRUSTED_BACKEND_MODULES):
        return False
    try:
        return float(getattr(backend, "priority", 0)) > 0
    except Exception:  # a backend whose priority check fails is not usable
        return False


def keyring_backend() -> object | None:
    """The OS keyring when one is trusted and not switched off by ``PRIVET_KEYRING``; else ``None``."""
    if os.environ.get("PRIVET_KEYRING", "").strip().lower() in ("memory", "file"):
        return None
    backend = keyring.get_keyring()
    return backend if _trusted(backend) else None


def where() -> str:
    """Where the mark is kept, in words (for ``privet ledger --check``)."""
    backend = keyring_backend()
    if backend is not None:
        return f"the operating-system keyring ({type(backend).__name__})"
    return f"the state folder {state_dir()} (outside the data folder)"


def _mark(payload: dict[str, Any]) -> HighWater:
    return HighWater(int(payload["rows"]), int(payload["head_seq"]), str(payload["head_hash"]))


def _encode(mark: HighWater) -> str:
    return json.dumps(sealed(_LABEL, {"rows": mark.rows, "head_seq": mark.head_seq, "head_hash": mark.head_hash}))


def _decode(text: str) -> tuple[HighWater | None, str]:
    mark, problem = unseal(_LABEL, text, ("rows", "head_seq", "head_hash"), _mark)
    if problem == DAMAGED:
        return None, "the ledger's high-water mark (kept outside the data folder) is damaged"
    if problem:
        return None, ("the ledger's high-water mark (kept outside the data folder) does not authenticate under this "
                      "installation's key (it was edited, or the installation key was replaced)")
    return mark, ""


def _read_raw(ledger_path: Path) -> str | None:
    backend = keyring_backend()
    if backend is not None:
        try:
            raw: str | None = backend.get_password(SERVICE, _entry_name(ledger_path))  # type: ignore[attr-defined]
            return raw
        except keyring.errors.KeyringError:
            pass  # a locked keyring: the file fallback
    path = state_dir() / f"{_entry_name(ledger_path)}.json"
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        return "{}"


def _write_raw(ledger_path: Path, text: str) -> None:
    backend = keyring_backend()
    if backend is not None:
        try:
            backend.set_password(SERVICE, _entry_name(ledger_path), text)  # type: ignore[attr-defined]
            return
        except keyring.errors.KeyringError:
            pass
    folder = private_folder(state_dir())
    write_private(folder / f"{_entry_name(ledger_path)}.json", text)


def read_mark(ledger_path: Path) -> tuple[HighWater | None, str]:
    """The mark and "" when it authenticates; ``(None, problem)`` when damaged; ``(None, "")`` when absent."""
    raw = _read_raw(ledger_path)
    if raw is None:
        return None, ""
    return _decode(raw)


def raise_mark(ledger_path: Path, head: HighWater, row_hash_at: Callable[[int], str | None],
               force: bool = False) -> None:
    """Move the mark up to ``head``; never down, and never over evidence (a damaged mark, or one naming a
    row the ledger no longer holds), unless ``force`` (``privet ledger --rewitness``, acknowledged)."""
    old, problem = read_mark(ledger_path)
    if not force and (problem or moves_back(old, head.rows, row_hash_at)):
        return
    _write_raw(ledger_path, _encode(head))


def mark_problems(ledger_path: Path, rows: int, row_hash_at: Callable[[int], str | None]) -> list[str]:
    """Rollback a ledger of ``rows`` entries shows against its high-water mark (empty list: consistent)."""
    mark, problem = read_mark(ledger_path)
    if problem:
        return [problem]
    if mark is None:
        if rows > 0:
            return [
                f"the ledger has {rows} entries but no high-water mark is kept for it outside the data folder "
                f"({where()}): it was removed, or this ledger was written by a Privet version without one"
            ]
        return []
    problems = []
    if rows < mark.rows:
        problems.append(
            f"the ledger holds {rows} entries but had {mark.rows} (its high-water mark, kept outside the data "
            "folder): an older copy of the ledger was restored, or entries were removed"
        )
    elif mark.head_seq > 0 and row_hash_at(mark.head_seq) != mark.head_hash:
        problems.append(
            f"ledger entry {mark.head_seq}, recorded by the high-water mark kept outside the data folder, is gone "
            "or differs: the ledger was replaced or rewritten"
        )
    return problems


def missing_ledger_mark_problems(ledger_path: Path) -> list[str]:
    """For a ledger file that does not exist (or is empty): rollback if its mark says it had entries."""
    mark, problem = read_mark(ledger_path)
    if problem:
        return [problem]
    if mark is not None and mark.rows > 0:
        return [f"the ledger {Path(ledger_path).name} is missing or empty, but its high-water mark (kept outside the "
                f"data folder) recorded {mark.rows} entries: it was deleted, wiped or replaced"]
    return []
