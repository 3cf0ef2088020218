"""The ledger's high-water mark: its entry count, head and per-dataset totals, kept where losing or restoring
the data folder does not touch them.

The witness (``core.ledger.witness``) lives beside ``ledger.db``: restoring an older copy of the data folder
restores a ledger and a witness that agree, and the entries written since are forgotten unnoticed. The
high-water mark holds the same facts (number of entries, newest entry and its chain hash) *outside* the
data folder, and only ever moves forward:

- in the operating system's keyring (service ``privet``, one entry per ledger path) when ``keyring`` finds
  a trusted one (the rules of ``core.certificate.signing``);
- otherwise (a headless machine, ``PRIVET_KEYRING=file`` or ``memory``) in a small file in a state folder
  outside the data folder: ``PRIVET_STATE_DIR``; else, when ``PRIVET_HOME`` names the data folder, a hidden
  folder beside it (``.<name>.privet-state``); else ``$XDG_STATE_HOME/privet`` (``~/.local/state/privet``).

The mark also keeps, per dataset, *floors* (``Floor``): the total ρ charged, the total δ spent outright
(``delta_part``), the summed δ of its runs, its cap and its name. They only move forward too, so an
acknowledged re-witnessing or a recovery after the data folder was lost (``core.ledger.recovery``) carries
them into the ledger as it is now, and no total ever falls below what the installation had charged.

The mark is sealed (``core.ledger.seal``) with a key that does not live in the data folder, so that it
still authenticates when the data folder is gone: in the keyring, the keyring's own access control is the
protection and the seal is a checksum under a fixed label (``KEYRING_SEAL``); in the state folder, an
HMAC under ``state.key`` (32 random bytes, mode 0600) kept beside the marks. Marks of version 1 (sealed
with ``installation.key``) are still read, until the state key exists.

A ledger with fewer entries than its mark, or without the entry the mark names, was rolled back or replaced.
What it cannot prove is said in docs/reliability.md: someone who can delete the keyring entry or the state
file as well as restore the folder leaves what looks like an upgrade from a version without a mark, which
is refused until ``privet ledger --rewitness --acknowledge-unverifiable-history`` records it in the ledger.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import keyring
import keyring.errors

from core.ledger.head import HeadWords
from core.ledger.seal import DAMAGED, moves_back, sealed, unseal
from core.common.private_files import private_file, private_folder, write_private

SERVICE = "privet"
VERSION = 2
_LABEL = b"privet-ledger-high-water-v2\x00"
_LABEL_V1 = b"privet-ledger-high-water-v1\x00"  # sealed with installation.key (Privet before the state key)
_FIELDS = ("version", "rows", "head_seq", "head_hash", "floors")
_FIELDS_V1 = ("rows", "head_seq", "head_hash")
KEYRING_SEAL = b"privet-high-water-kept-in-the-os-keyring"  # not a secret: the keyring's access control protects it
STATE_KEY_FILE = "state.key"
STATE_KEY_BYTES = 32
UNTRUSTED_BACKEND_MODULES = ("keyring.backends.fail", "keyring.backends.null", "keyrings.alt")


@dataclass(frozen=True)
class Floor:
    """What one dataset had been charged at least: Σρ, Σδ spent outright, Σ of its runs' δ; its cap and name."""

    rho: float
    delta_part: float = 0.0
    run_delta: float = 0.0
    name: str = ""
    cap: tuple[float, float] | None = None

    def payload(self) -> dict[str, Any]:
        return {"rho": self.rho, "delta_part": self.delta_part, "run_delta": self.run_delta, "name": self.name,
                "cap": list(self.cap) if self.cap else None}


@dataclass(frozen=True)
class HighWater:
    """The most entries this ledger has been seen to hold, its newest entry then, and the datasets' floors."""

    rows: int
    head_seq: int
    head_hash: str
    floors: Mapping[str, Floor] = field(default_factory=dict)


def _amount(value: Any) -> float:
    number = float(value)
    if not (math.isfinite(number) and number >= 0.0):
        raise ValueError("a floor must be a finite, non-negative number")
    return number


def _floor(payload: Any) -> Floor:
    cap = payload["cap"]
    if cap is not None:
        cap = (_amount(cap[0]), _amount(cap[1]))
    if not isinstance(payload["name"], str):
        raise TypeError("a floor's name is text")
    return Floor(_amount(payload["rho"]), _amount(payload["delta_part"]), _amount(payload["run_delta"]),
                 payload["name"], cap)


def merged_floors(old: Mapping[str, Floor], new: Mapping[str, Floor]) -> dict[str, Floor]:
    """Floors that never move back: per dataset the larger of each total; the newer cap and name when known."""
    out = dict(old)
    for key, floor in new.items():
        was = old.get(key)
        if was is None:
            out[key] = floor
            continue
        out[key] = Floor(max(was.rho, floor.rho), max(was.delta_part, floor.delta_part),
                         max(was.run_delta, floor.run_delta), floor.name or was.name, floor.cap or was.cap)
    return out


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


# --------------------------------------------------------------------- the state key (file fallback)
def _state_key_path(folder: Path | None = None) -> Path:
    return (state_dir() if folder is None else folder) / STATE_KEY_FILE


def _read_state_key(folder: Path | None = None) -> bytes | None:
    """The state folder's key; ``None`` when there is none (or it cannot be read as one)."""
    path = _state_key_path(folder)
    try:
        key = path.read_bytes()
    except OSError:
        return None
    return key if len(key) == STATE_KEY_BYTES else None


def _state_key() -> bytes:
    """The state folder's key, created (0600, atomically; never replaced) on the first mark written there."""
    path = _state_key_path()
    key = _read_state_key()
    if key is not None:
        return key
    private_folder(path.parent)
    tmp = path.with_name(f".{STATE_KEY_FILE}.{secrets.token_hex(8)}.tmp")
    write_private(tmp, secrets.token_bytes(STATE_KEY_BYTES))
    try:
        os.link(tmp, path)  # another process may have won: its key stays
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    private_file(path)
    key = _read_state_key()
    if key is None:
        raise OSError(f"the state key {path} cannot be read back")
    return key


# --------------------------------------------------------------------- encoding
def _mark(payload: dict[str, Any]) -> HighWater:
    if payload["version"] != VERSION or not isinstance(payload["floors"], dict):
        raise ValueError("not a version 2 mark")
    floors = {str(k): _floor(v) for k, v in payload["floors"].items()}
    return HighWater(int(payload["rows"]), int(payload["head_seq"]), str(payload["head_hash"]), floors)


def _mark_v1(payload: dict[str, Any]) -> HighWater:
    return HighWater(int(payload["rows"]), int(payload["head_seq"]), str(payload["head_hash"]))


def _encode(mark: HighWater, key: bytes) -> str:
    payload = {"version": VERSION, "rows": mark.rows, "head_seq": mark.head_seq, "head_hash": mark.head_hash,
               "floors": {k: f.payload() for k, f in sorted(mark.floors.items())}}
    return json.dumps(sealed(_LABEL, payload, key))


def _decode(text: str, key: bytes | None, legacy_allowed: bool) -> tuple[HighWater | None, str]:
    """A mark sealed under ``key`` (``None``: there is no state key), or a version-1 mark sealed under the
    installation key when ``legacy_allowed`` (no state key exists yet, so it cannot be a downgrade)."""
    try:
        version = json.loads(text).get("version", 1)
    except (ValueError, AttributeError):
        return None, "the ledger's high-water mark (kept outside the data folder) is damaged"
    if version == VERSION and key is None:
        return None, ("the ledger's high-water mark (kept outside the data folder) cannot be authenticated: the key "
                      f"beside it ({STATE_KEY_FILE} in the state folder) is missing or damaged")
    if version == VERSION and key is not None:
        mark, problem = unseal(_LABEL, text, _FIELDS, _mark, key=key)
    elif legacy_allowed:
        mark, problem = unseal(_LABEL_V1, text, _FIELDS_V1, _mark_v1)
    else:
        mark, problem = None, "unauthentic"
    if problem == DAMAGED:
        return None, "the ledger's high-water mark (kept outside the data folder) is damaged"
    if problem:
        return None, ("the ledger's high-water mark (kept outside the data folder) does not authenticate (it was "
                      "edited, copied from another installation, or its key was replaced)")
    return mark, ""


def _read_keyring(ledger_path: Path) -> tuple[bool, str | None]:
    """``(True, entry)`` when the mark lives in a trusted keyring (``entry`` ``None``: no entry yet);
    ``(False, None)`` when the state folder holds it (no trusted keyring, or a locked one)."""
    backend = keyring_backend()
    if backend is None:
        return False, None
    try:
        raw: str | None = backend.get_password(SERVICE, _entry_name(ledger_path))  # type: ignore[attr-defined]
        return True, raw
    except keyring.errors.KeyringError:
        return False, None  # a locked keyring: the file fallback


def _read_file(ledger_path: Path, folder: Path | None = None) -> str | None:
    path = (state_dir() if folder is None else folder) / f"{_entry_name(ledger_path)}.json"
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        return "{}"


def _write_mark(ledger_path: Path, mark: HighWater) -> None:
    backend = keyring_backend()
    if backend is not None:
        with contextlib.suppress(keyring.errors.KeyringError):  # a locked keyring: the file fallback
            backend.set_password(SERVICE, _entry_name(ledger_path), _encode(mark, KEYRING_SEAL))  # type: ignore[attr-defined]
            return
    folder = private_folder(state_dir())
    write_private(folder / f"{_entry_name(ledger_path)}.json", _encode(mark, _state_key()))


def read_mark(ledger_path: Path) -> tuple[HighWater | None, str]:
    """The mark and "" when it authenticates; ``(None, problem)`` when damaged; ``(None, "")`` when absent."""
    in_keyring, raw = _read_keyring(ledger_path)
    if in_keyring:
        return (None, "") if raw is None else _decode(raw, KEYRING_SEAL, legacy_allowed=True)
    raw = _read_file(ledger_path)
    if raw is None:
        return None, ""
    key = _read_state_key()
    return _decode(raw, key, legacy_allowed=key is None and not _state_key_path().exists())


def carry_mark(source_ledger: Path, source_state_dir: Path, target_ledger: Path) -> bool:
    """Give ``target_ledger`` (a copy of ``source_ledger``'s data folder) the source's mark, read from the
    state folder ``source_state_dir``; ``False`` when there is none that authenticates there."""
    raw = _read_file(source_ledger, source_state_dir)
    if raw is None:
        return False
    key = _read_state_key(source_state_dir)
    mark, problem = _decode(raw, key, legacy_allowed=key is None)
    if mark is None or problem:
        return False
    _write_mark(target_ledger, mark)
    return True


def raise_mark(ledger_path: Path, head: HighWater, row_hash_at: Callable[[int], str | None],
               force: bool = False, replace_floors: bool = False) -> None:
    """Move the mark up to ``head``; never down, and never over evidence (a damaged mark, or one naming a
    row the ledger no longer holds), unless ``force`` (``privet ledger --rewitness``, acknowledged).

    The floors only move forward, forced or not (``merged_floors``), except with ``replace_floors``: a new
    history after the data folder was lost, whose ledger carries every floor under its new dataset keys."""
    old, problem = read_mark(ledger_path)
    if not force and (problem or moves_back(old, head.rows, row_hash_at)):
        return
    floors = head.floors if (replace_floors or old is None) else merged_floors(old.floors, head.floors)
    _write_mark(ledger_path, HighWater(head.rows, head.head_seq, head.head_hash, floors))


def mark_words(ledger_path: Path) -> HeadWords[HighWater]:
    """The high-water mark's words for what :func:`core.ledger.head.record_problems` finds."""
    return HeadWords(
        unrecorded=lambda rows: (
            f"the ledger has {rows} entries but no high-water mark is kept for it outside the data folder "
            f"({where()}): it was removed, or this ledger was written by a Privet version without one"),
        fewer=lambda rows, mark: (
            f"the ledger holds {rows} entries but had {mark.rows} (its high-water mark, kept outside the data "
            "folder): an older copy of the ledger was restored, or entries were removed"),
        changed=lambda mark, gone: (
            f"ledger entry {mark.head_seq}, recorded by the high-water mark kept outside the data folder, is gone "
            "or differs: the ledger was replaced or rewritten"),
        missing=lambda mark: (
            f"the ledger {Path(ledger_path).name} is missing or empty, but its high-water mark (kept outside the "
            f"data folder) recorded {mark.rows} entries: it was deleted, wiped or replaced"),
    )
