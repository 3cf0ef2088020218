"""The ledger file: an append-only, hash-chained SQLite table and the checks that it is whole.

Every row of the table ``charges`` (``core.ledger.schema``) stores ``row_hash = SHA-256(prev_hash || RFC
8785 JSON of the row's fields)``, and SQLite triggers abort any ``UPDATE`` or ``DELETE``, so ordinary code
cannot rewrite history and an edit made after dropping the triggers breaks the chain (``verify_chain()``
names the row).

Removing the newest rows cannot be seen from the chain alone; ``verify_chain()`` also compares the chain
with SQLite's AUTOINCREMENT counter, with the ledger's *witness* (``core.ledger.witness``: the head kept
beside the database, authenticated with the installation key, updated at every append) and with its
*high-water mark* (``core.ledger.highwater``: the same head kept outside the data folder, with each
dataset's totals), and every certificate records the ledger head it saw. A wiped, deleted, cut-back or junk
ledger is refused (``LedgerError``); ``check_before_run()`` runs these checks without creating files.

An acknowledged re-witnessing (``LedgerFile.rewitness``) accepts the ledger as it is, but never lowers a
dataset's total below the mark's floors: what the ledger lost is appended again as chained carry-over
charges, and the caps the mark knew are restored (``core.ledger.recovery`` does the same for a new history
after the data folder was lost).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import sqlite_utils

from core.common.errors import LedgerError, PrivetError
from core.ledger import highwater, witness
from core.ledger.floors import as_strict, chained_caps, ledger_floors, owed, shortfall
from core.ledger.head import record_problems
from core.ledger.schema import (
    ADDED_COLUMNS, CHAIN_SCHEMA, CHAINED_FIELDS, GENESIS_HASH, IDENTITY_SCHEMA, KINDS, LEDGER_EVENTS, TRIGGERS, now,
    row_hash,
)
from core.common.paths import data_dir
from core.common.private_files import private_file, private_folder, touch_private

TAMPER_FIX = (
    "Do not run anything until this is resolved: restore the data folder (ledger.db and ledger.witness "
    "together) from your backup, or contact your Privet administrator. Only if this installation was "
    "upgraded from a Privet version without a witness or high-water mark: accept the ledger as it is with "
    "`privet ledger --rewitness --acknowledge-unverifiable-history` (recorded in the ledger; it cannot bring back "
    "entries that were removed, but no dataset's total falls below the one kept outside the data folder). If the "
    "data folder was lost and there is no backup: start a new history with `privet ledger "
    "--recover-lost-data-folder --acknowledge-lost-history` (docs/using.md)."
)
REWITNESS_STAGE = "rewitness"  # the stage of the row (dataset LEDGER_EVENTS) that records a re-witnessing
CARRIED_STAGE = "carried over (history could not be verified)"


@dataclass(frozen=True)
class Carried:
    """What one dataset's totals were brought back to (a carry-over charge) or its cap restored to."""

    dataset: str  # the dataset key the carry-over row is written under
    name: str
    rho: float  # the carry-over charge (0.0: the ledger held the floor already)
    delta_part: float
    cap: tuple[float, float] | None = None  # the cap restored, if it was restored


@dataclass(frozen=True)
class Rewitnessed:
    """An acknowledged re-witnessing: the new head, the problems accepted and what was carried over."""

    head: witness.Witness
    accepted: list[str]
    carried: list[Carried]


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

    def __init__(self, path: Path | None = None, *, new_history: bool = False) -> None:
        """Open (or create) the ledger; ``new_history``: create one although its high-water mark says a ledger
        was lost here (only ``core.ledger.recovery``, which carries the mark's totals into it)."""
        if path is None:
            path = default_path()
        self.path = Path(path)
        private_folder(self.path.parent)
        fresh = _is_missing(self.path)
        if fresh:  # a new ledger, unless its witness or high-water mark says there was one (deleted or wiped)
            problems = head_record_problems(self.path, None, lambda _seq: None)
            if problems and not new_history:
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
            _add_new_columns(conn)
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
                guard: Callable[[], None] | None = None, delta_part: float = 0.0, record_hash: str = "") -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown ledger row kind {kind!r}")
        if not dataset_fp:
            raise PrivetError("A ledger entry needs a dataset fingerprint.", "This is a bug in the caller.")
        if not (rho >= 0.0):  # also refuses NaN
            raise PrivetError(f"A charge of rho={rho} is not allowed.", "Charges must be non-negative numbers.")
        if not (0.0 <= delta_part < 1.0):
            raise PrivetError(f"A charge of delta={delta_part} is not allowed.", "This is a bug in the caller.")
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
                "delta_part": float(delta_part),
                "record_hash": record_hash,
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

    def _record_head(self, force: bool = False, replace_floors: bool = False) -> None:
        witness.record_head(self.path, self._head_now, self._row_hash_at, force=force)
        head = self._head_now()
        highwater.raise_mark(self.path, highwater.HighWater(head.rows, head.head_seq, head.head_hash, self.floors()),
                             self._row_hash_at, force=force, replace_floors=replace_floors)

    def floors(self) -> dict[str, highwater.Floor]:
        """Per dataset key (as the rows hold it): Σρ, Σδ spent outright and Σ of the runs' δ of its charges,
        its cap and its name: what the high-water mark keeps as floors (``core.ledger.floors``)."""
        return ledger_floors(self.db.conn)

    # ----------------------------------------------------------------- carrying totals over
    def record_event(self, stage: str, description: str) -> int:
        """Append a row about the ledger itself (dataset ``LEDGER_EVENTS``); returns its sequence number."""
        self._append("release", LEDGER_EVENTS, stage=stage, description=description)
        return int(self.head()["seq"])

    def carry_floors(self, floors: Mapping[str, highwater.Floor], run_id: str, stage: str, why: str,
                     keys: Mapping[str, str] | None = None) -> list[Carried]:
        """Bring every dataset up to its floor: a chained charge row for what the ledger now lacks (Σρ, Σδ spent
        outright, Σ of the runs' δ) and the floor's cap where the ledger's current cap is missing or looser.

        ``keys`` maps a floor's key to the dataset key to write under (default: the same key). Written with the
        low-level append, not ``Ledger.charge``: a carry-over is not a new spend, so the cap check (which may
        well refuse it, the history having reached the cap) does not apply."""
        have = self.floors()
        caps = chained_caps(self.db.conn)
        carried = []
        for old_key, floor in sorted(floors.items()):
            key = (keys or {}).get(old_key, old_key)
            had = have.get(key, highwater.Floor(0.0))
            rho, part, run_delta = (shortfall(floor.rho, had.rho), shortfall(floor.delta_part, had.delta_part),
                                    shortfall(floor.run_delta, had.run_delta))
            cap = floor.cap if floor.cap and not as_strict(caps.get(key), floor.cap) else None
            if cap is not None:
                self._restore_cap(key, cap, why)
            if rho or part or run_delta:
                self._append("charge", key, run_id=run_id, stage=stage, rho=rho, delta=run_delta, delta_part=part,
                             description=f"{why}: rho={rho:.6g} and delta={part:.3g} spent outright, charged before "
                                         "and no longer in the ledger, carried over so the total does not fall")
            if rho or part or run_delta or cap is not None:
                carried.append(Carried(key, floor.name, rho, part, cap))
        return carried

    def start_new_history_mark(self) -> None:
        """Record this new ledger's head as its witness and high-water mark, the mark's floors replaced by this
        ledger's (``core.ledger.recovery``, once every old floor has been carried over under its new key)."""
        self._record_head(force=True, replace_floors=True)

    def _restore_cap(self, key: str, cap: tuple[float, float], why: str) -> None:
        epsilon, delta = cap
        self._append("cap", key, stage="cap", epsilon=epsilon, delta=delta,
                     description=f"budget cap restored to epsilon={epsilon:g} at delta={delta:g} ({why})")
        self.db.conn.execute(
            "INSERT OR REPLACE INTO caps (dataset_fp, epsilon, delta, updated_at) VALUES (?, ?, ?, ?)",
            [key, epsilon, delta, now()])

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

    def rewitness(self, acknowledge: bool = False) -> Rewitnessed:
        """Accept the ledger as it is now: record its head as the witness and the high-water mark.

        For an installation upgraded from a Privet version without them, or restored on purpose. Refused
        when the hash chain itself is broken (an edited ledger stays refused), and without ``acknowledge``.
        The re-witnessing is itself appended to the ledger with every problem it accepted (for example
        "the ledger holds 8 entries but had 12"), so entries it cannot bring back are never forgotten
        silently. It never lowers a total: for every dataset whose floor in the high-water mark exceeds what
        the ledger now holds, a carry-over charge with the difference is appended, and caps the mark knew
        are restored (``carry_floors``). Returns the new head, the problems accepted and what was carried.
        """
        chain = self._chain_problems()
        if chain:
            raise refusal(chain)
        accepted = self.verify_chain()
        mark, mark_problem = highwater.read_mark(self.path)
        floors = dict(mark.floors) if mark is not None else {}
        owing = sorted(k for k, f in floors.items() if owed(f, self.floors().get(k)))
        if mark is None:
            kept = ("No totals are kept outside the data folder for this ledger" + (f" ({mark_problem})" if mark_problem
                    else "") + ", so the budget spent by entries it has lost is no longer counted.")
        else:
            kept = ("The totals kept with the high-water mark outside the data folder are carried over, so no "
                    f"dataset's total falls below what was charged ({len(owing)} dataset(s) get a carry-over entry).")
        if not acknowledge:
            listed = "".join(f"\n  - {p}" for p in accepted) or " none (the ledger passes its check)"
            raise PrivetError(
                "Re-witnessing accepts the ledger exactly as it is now, including any entries it has lost, which "
                f"cannot be brought back. {kept} Problems it would accept:" + listed,
                "Restore the data folder from a backup if you can. Only if this installation was upgraded from a "
                "Privet version without a witness, or you restored it on purpose and accept the loss, run "
                "`privet ledger --rewitness --acknowledge-unverifiable-history` (it is recorded in the ledger).",
            )
        note = ("; ".join(accepted) if accepted else "no problem found")
        seq = self.record_event(REWITNESS_STAGE, f"ledger re-witnessed by the custodian; accepted: {note}. {kept}")
        carried = self.carry_floors(floors, run_id=f"(rewitness {seq})", stage=CARRIED_STAGE,
                                    why=f"re-witnessed at ledger entry {seq}")
        self._record_head(force=True)
        return Rewitnessed(self._head_now(), accepted, carried)

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
            return problems + head_record_problems(self.path, rows, self._row_hash_at)
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
        for row in conn.execute(f"SELECT {', '.join(CHAINED_FIELDS)}, row_hash FROM charges ORDER BY seq"):
            data = dict(zip((*CHAINED_FIELDS, "row_hash"), row))
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


def _add_new_columns(conn: sqlite3.Connection) -> None:
    """Give a ledger written by an older version the columns added since (``schema.ADDED_COLUMNS``); their
    defaults are what older rows meant (no δ spent outright, no record hash), so no row hash changes."""
    for table, column, ddl in ADDED_COLUMNS:
        present = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        if present and column not in present:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {ddl}")










def head_record_problems(path: Path, rows: int | None, row_hash_at: Callable[[int], str | None]) -> list[str]:
    """Tampering or rollback a ledger of ``rows`` rows (None: its file is missing or empty) shows against its
    witness and its high-water mark, the two outside records of its head (empty list: consistent)."""
    return (record_problems(witness.read_witness(path), rows, row_hash_at, witness.witness_words(path))
            + record_problems(highwater.read_mark(path), rows, row_hash_at, highwater.mark_words(path)))




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
        problems = head_record_problems(path, None, lambda _seq: None)
        if problems:
            raise refusal(problems)
        return
    with LedgerFile(path) as ledger:
        ledger.require_intact()
