"""The ledger file: an append-only, hash-chained SQLite table and the checks that it is whole.

Every row of the table ``charges`` (``core.ledger.schema``) stores ``row_hash = SHA-256(prev_hash || RFC
8785 JSON of the row's fields)``, and SQLite triggers abort any ``UPDATE`` or ``DELETE``, so ordinary code
cannot rewrite history and an edit made after dropping the triggers breaks the chain (``verify_chain()``
names the row).

Removing the newest rows cannot be seen from the chain alone; ``verify_chain()`` also compares the chain
with SQLite's AUTOINCREMENT counter, with the ledger's *witness* (``core.ledger.witness``: the head kept
beside the database, authenticated with the installation key, updated at every append) and with its
*high-water mark* (``core.ledger.highwater``: the same head kept outside the data folder), and every
certificate records the ledger head it saw. A wiped, deleted, cut-back or junk ledger is refused
(``LedgerError``); ``check_before_run()`` runs these checks without creating files.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

import sqlite_utils

from core.errors import LedgerError, PrivetError
from core.ledger import highwater, witness
from core.ledger.schema import (
    CHAIN_SCHEMA, GENESIS_HASH, HASHED_FIELDS, IDENTITY_SCHEMA, KINDS, LEDGER_EVENTS, TRIGGERS, now, row_hash,
)
from core.paths import data_dir
from core.private_files import private_file, private_folder, touch_private

TAMPER_FIX = (
    "Do not run anything until this is resolved: restore the data folder (ledger.db and ledger.witness "
    "together) from your backup, or contact your Privet administrator. Only if this installation was "
    "upgraded from a Privet version without a witness or high-water mark: accept the ledger as it is with "
    "`privet ledger --rewitness --acknowledge-unverifiable-history` (recorded in the ledger; it cannot bring back "
    "entries that were removed)."
)


def refusal(problems: list[str]) -> LedgerError:
    """The one refusal every check raises: what was found, and what to do."""
    listed = "\n".join(f"  - {p}" for p in problems)
    return LedgerError(
        "The privacy-budget ledger failed its integrity check, so nothing can be charged or run:\n" + listed,
        TAMPER_FIX,
    )


def default_path() -> Path:
    """The installation's ledger: ``data_dir()/ledger.db``."""
    return data_dir() / "ledger.db"


class LedgerFile:
    """The hash-chained table in ``path`` (default: ``data_dir()/ledger.db``): open, append, check."""

    def __init__(self, path: Path | None = None) -> None:
        if path is None:
            path = default_path()
        self.path = Path(path)
        private_folder(self.path.parent)
        fresh = _is_missing(self.path)
        if fresh:  # a new ledger, unless its witness or high-water mark says there was one (deleted or wiped)
            problems = witness.missing_ledger_problems(self.path) + highwater.missing_ledger_mark_problems(self.path)
            if problems:
                raise refusal(problems)
            touch_private(self.path)  # 0600 before SQLite writes anything (its journals copy the mode)
        try:
            conn = sqlite3.connect(str(self.path), isolation_level=None, timeout=30.0)
        except sqlite3.DatabaseError as exc:
            raise refusal([f"the ledger file {self.path} cannot be opened ({exc})"]) from None
        self.db = sqlite_utils.Database(conn)
        try:
            if not self.db["charges"].exists():
                # Only a new ledger gets its schema here: triggers missing from an existing ledger are
                # evidence of tampering that ``verify_chain`` reports, not something to paper over.
                conn.executescript(CHAIN_SCHEMA)
                if fresh:
                    self._record_head()
            conn.executescript(IDENTITY_SCHEMA)  # settings tables (not part of the chain); added to older ledgers
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise refusal([f"the ledger file {self.path.name} is not a readable database ({exc})"]) from None
        private_file(self.path)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.conn.close()

    # ----------------------------------------------------------------- writing
    def _append(self, kind: str, dataset_fp: str, run_id: str = "", stage: str = "", rho: float = 0.0,
                delta: float = 0.0, epsilon: float = 0.0, description: str = "", export_path: str = "",
                guard: Callable[[], None] | None = None) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown ledger row kind {kind!r}")
        if not dataset_fp:
            raise PrivetError("A ledger entry needs a dataset fingerprint.", "This is a bug in the caller.")
        if not (rho >= 0.0):  # also refuses NaN
            raise PrivetError(f"A charge of rho={rho} is not allowed.", "Charges must be non-negative numbers.")
        conn = self.db.conn
        conn.execute("BEGIN IMMEDIATE")  # serialise writers: read the head and append atomically
        try:
            if guard is not None:
                guard()  # e.g. the cap check of a charge, inside the same transaction
            last = conn.execute("SELECT row_hash FROM charges ORDER BY seq DESC LIMIT 1").fetchone()
            seq_row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'charges'").fetchone()
            prev_hash: str = last[0] if last else GENESIS_HASH
            row: dict[str, Any] = {
                "seq": (seq_row[0] if seq_row else 0) + 1,
                "kind": kind,
                "created_at": now(),
                "dataset_fp": dataset_fp,
                "run_id": run_id,
                "stage": stage,
                "rho": float(rho),
                "delta": float(delta),
                "epsilon": float(epsilon),
                "description": description,
                "export_path": export_path,
                "prev_hash": prev_hash,
            }
            row["row_hash"] = row_hash(prev_hash, row)
            columns = ", ".join(row)
            conn.execute(f"INSERT INTO charges ({columns}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        # After the commit, so the witness and the high-water mark never run ahead of the ledger.
        self._record_head()

    def _record_head(self, force: bool = False) -> None:
        witness.record_head(self.path, self._head_now, self._row_hash_at, force=force)
        head = self._head_now()
        highwater.raise_mark(self.path, highwater.HighWater(head.rows, head.head_seq, head.head_hash),
                             self._row_hash_at, force=force)

    def head(self) -> dict[str, Any]:
        """The newest row's sequence number and hash (certificates record it)."""
        row = self.db.execute("SELECT seq, row_hash FROM charges ORDER BY seq DESC LIMIT 1").fetchone()
        return {"seq": row[0], "row_hash": row[1]} if row else {"seq": 0, "row_hash": GENESIS_HASH}

    # ----------------------------------------------------------------- integrity
    def _head_now(self) -> witness.Witness:
        rows = self.db.conn.execute("SELECT COUNT(*) FROM charges").fetchone()[0]
        head = self.head()
        return witness.Witness(rows=rows, head_seq=head["seq"], head_hash=head["row_hash"])

    def _row_hash_at(self, seq: int) -> str | None:
        row = self.db.conn.execute("SELECT row_hash FROM charges WHERE seq = ?", [seq]).fetchone()
        return row[0] if row else None

    def require_intact(self) -> None:
        """Raise ``LedgerError`` (what was found, what to do) unless ``verify_chain()`` is clean."""
        problems = self.verify_chain()
        if problems:
            raise refusal(problems)

    def rewitness(self, acknowledge: bool = False) -> tuple[witness.Witness, list[str]]:
        """Accept the ledger as it is now: record its head as the witness and the high-water mark.

        For an installation upgraded from a Privet version without them, or restored on purpose. Refused
        when the hash chain itself is broken (an edited ledger stays refused), and without ``acknowledge``.
        The re-witnessing is itself appended to the ledger with every problem it accepted (for example
        "the ledger holds 8 entries but had 12"), so entries it cannot bring back are never forgotten
        silently. Returns the new head and the problems accepted.
        """
        chain = self._chain_problems()
        if chain:
            raise refusal(chain)
        accepted = self.verify_chain()
        if not acknowledge:
            listed = "".join(f"\n  - {p}" for p in accepted) or " none (the ledger passes its check)"
            raise PrivetError(
                "Re-witnessing accepts the ledger exactly as it is now, including any entries it has lost, which "
                "cannot be brought back (their spent budget is then no longer counted). Problems it would accept:"
                + listed,
                "Restore the data folder from a backup if you can. Only if this installation was upgraded from a "
                "Privet version without a witness, or you restored it on purpose and accept the loss, run "
                "`privet ledger --rewitness --acknowledge-unverifiable-history` (it is recorded in the ledger).",
            )
        note = ("; ".join(accepted) if accepted else "no problem found")
        self._append("release", LEDGER_EVENTS, stage="rewitness",
                     description=f"ledger re-witnessed by the custodian; accepted: {note}")
        self._record_head(force=True)
        return self._head_now(), accepted

    def check_head(self, head: dict[str, Any]) -> list[str]:
        """Problems if this ledger no longer holds the row a certificate saw as its newest.

        A certificate records the ledger head (sequence number and row hash) at export time; a
        ledger that was cut back or rebuilt since then cannot reproduce that row.
        """
        seq, expected = head.get("seq"), head.get("row_hash")
        if not isinstance(seq, int) or seq == 0:
            return []
        row = self.db.execute("SELECT row_hash FROM charges WHERE seq = ?", [seq]).fetchone()
        if row is None:
            return [f"the ledger has no row {seq}, which the certificate saw: it was cut back or replaced"]
        if row[0] != expected:
            return [f"ledger row {seq} differs from the one the certificate saw: the ledger was rewritten"]
        return []

    def verify_chain(self) -> list[str]:
        """Problems found in the ledger: hash chain, triggers, caps and witness (empty list: intact)."""
        try:
            problems = self._chain_problems()
            rows = self.db.conn.execute("SELECT COUNT(*) FROM charges").fetchone()[0]
            return (problems + witness.witness_problems(self.path, rows, self._row_hash_at)
                    + highwater.mark_problems(self.path, rows, self._row_hash_at))
        except sqlite3.DatabaseError as exc:
            return [f"the ledger file {self.path.name} is damaged and cannot be read ({exc})"]

    def _chain_problems(self) -> list[str]:
        problems: list[str] = []
        conn = self.db.conn
        present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
        for name in TRIGGERS:
            if name not in present:
                problems.append(f"the append-only trigger {name} has been removed")
        prev = GENESIS_HASH
        expected_seq = 1
        last_caps: dict[str, tuple[float, float]] = {}
        for row in conn.execute(f"SELECT {', '.join(HASHED_FIELDS)}, row_hash FROM charges ORDER BY seq"):
            data = dict(zip((*HASHED_FIELDS, "row_hash"), row))
            seq = data["seq"]
            if seq != expected_seq:
                problems.append(f"rows {expected_seq}..{seq - 1} are missing (deleted)")
            if data["prev_hash"] != prev:
                problems.append(f"row {seq}: its link to the previous row is broken (a row before it was changed or removed)")
            if row_hash(data["prev_hash"], data) != data["row_hash"]:
                problems.append(f"row {seq}: its contents were changed after it was written")
            if data["kind"] == "cap":
                last_caps[data["dataset_fp"]] = (data["epsilon"], data["delta"])
            prev = data["row_hash"]
            expected_seq = seq + 1
        counter = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'charges'").fetchone()
        if counter and counter[0] >= expected_seq:
            problems.append(f"rows {expected_seq}..{counter[0]} at the end of the ledger are missing (deleted)")
        current = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT dataset_fp, epsilon, delta FROM caps")}
        if current != last_caps:
            problems.append("the current caps differ from the last cap recorded in the chain (caps table edited)")
        return problems



def _is_missing(path: Path) -> bool:
    return not path.exists() or (path.is_file() and path.stat().st_size == 0)


def check_before_run(path: Path | None = None) -> None:
    """Refuse (``LedgerError``) unless the installation's ledger passes every check; creates nothing.

    A run calls this before it loads anything: a missing ledger is fine on a fresh installation,
    but not when its witness says it had entries.
    """
    if path is None:
        path = default_path()
    path = Path(path)
    if _is_missing(path):
        problems = witness.missing_ledger_problems(path) + highwater.missing_ledger_mark_problems(path)
        if problems:
            raise refusal(problems)
        return
    with LedgerFile(path) as ledger:
        ledger.require_intact()
