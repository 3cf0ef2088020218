"""The ledger's tables and the hash of one chained row (``docs/reliability.md``, the ledger).

The table ``charges`` holds every charge, release and cap change, append-only (SQLite triggers abort any
``UPDATE`` or ``DELETE``) and hash-chained: ``row_hash = SHA-256(prev_hash || RFC 8785 JSON of the row's
fields)``. The other tables are settings outside the chain: the current caps, the dataset identities,
their views and content sketches, and the reservations of runs in progress.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from typing import Any

import rfc8785

GENESIS_HASH = "0" * 64
LEDGER_EVENTS = "(ledger)"  # the dataset key of rows about the ledger itself (a re-witnessing), not a dataset
KINDS = ("charge", "release", "cap")
RELEASE_STAGE = "export"  # the stage of a release row that records an export
RECORD_STAGE = "record"  # the stage of a release row that binds a run's privacy record (its claim hash)
HASHED_FIELDS = (
    "seq", "kind", "created_at", "dataset_fp", "run_id", "stage",
    "rho", "delta", "epsilon", "description", "export_path", "prev_hash",
)
# Columns added after the first ledgers were written, with the value older rows have. A row's hash covers such a
# field only when it differs from that value, so older rows keep their hashes and any change of a newer row's
# value (δ_p dropped to 0, another record hash) still breaks the chain.
#   delta_part — the δ this charge spends outright (an (ε, δ) stage: phrase discovery's δ_p); a dataset's total
#                converts its summed ρ at δ − Σ delta_part and adds Σ delta_part (core.ledger.total);
#   record_hash — on a release row: SHA-256 of the exported privacy record (core.certificate.privacy_record),
#                so that a record edited and re-sealed by whoever holds the installation key no longer matches.
EXTENDED_FIELDS: dict[str, Any] = {"delta_part": 0.0, "record_hash": ""}
CHAINED_FIELDS = (*HASHED_FIELDS, *EXTENDED_FIELDS)

CHAIN_SCHEMA = """
CREATE TABLE IF NOT EXISTS charges (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('charge', 'release', 'cap')),
    created_at TEXT NOT NULL,
    dataset_fp TEXT NOT NULL,
    run_id TEXT NOT NULL,
    stage TEXT NOT NULL,
    rho REAL NOT NULL CHECK (rho >= 0),
    delta REAL NOT NULL,
    epsilon REAL NOT NULL,
    description TEXT NOT NULL,
    export_path TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    row_hash TEXT NOT NULL,
    delta_part REAL NOT NULL DEFAULT 0 CHECK (delta_part >= 0),
    record_hash TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS charges_by_dataset ON charges (dataset_fp);
CREATE TRIGGER IF NOT EXISTS charges_no_update BEFORE UPDATE ON charges
BEGIN SELECT RAISE(ABORT, 'the privacy ledger is append-only: rows cannot be changed'); END;
CREATE TRIGGER IF NOT EXISTS charges_no_delete BEFORE DELETE ON charges
BEGIN SELECT RAISE(ABORT, 'the privacy ledger is append-only: rows cannot be deleted'); END;
CREATE TABLE IF NOT EXISTS caps (
    dataset_fp TEXT PRIMARY KEY,
    epsilon REAL NOT NULL,
    delta REAL NOT NULL,
    updated_at TEXT NOT NULL
);
"""
TRIGGERS = ("charges_no_update", "charges_no_delete")
IDENTITY_SCHEMA = """
CREATE TABLE IF NOT EXISTS datasets (
    dataset_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS views (
    fingerprint TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL,
    source TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sketches (
    fingerprint TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL,
    sketch TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS reservations (
    run_id TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL,
    rho REAL NOT NULL,
    delta_part REAL NOT NULL DEFAULT 0,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""


# Added to a ledger written before these columns existed (``core.ledger.chain.LedgerFile``): (table, column, DDL).
ADDED_COLUMNS = (
    ("charges", "delta_part", "REAL NOT NULL DEFAULT 0 CHECK (delta_part >= 0)"),
    ("charges", "record_hash", "TEXT NOT NULL DEFAULT ''"),
    ("reservations", "delta_part", "REAL NOT NULL DEFAULT 0"),
)


def row_hash(prev_hash: str, row: dict[str, Any]) -> str:
    """The chain hash of one row: SHA-256 over the previous hash and the canonical row fields (an
    ``EXTENDED_FIELDS`` column counts when its value is not the one older rows have)."""
    payload = {name: row[name] for name in HASHED_FIELDS}
    payload.update({name: row[name] for name, old in EXTENDED_FIELDS.items() if row.get(name, old) != old})
    return hashlib.sha256(prev_hash.encode("ascii") + rfc8785.dumps(payload)).hexdigest()


def now() -> str:
    """The timestamp a row or setting is written with (UTC, microseconds)."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")
