"""The installation's privacy-budget ledger: an append-only, hash-chained SQLite table.

Every stage of a run is charged here *before* it draws noise (a crashed or cancelled run stays
charged), every export is recorded as a release, and every change of a custodian's cap is logged.
All three kinds of row live in the table ``charges``:

- SQLite triggers abort any ``UPDATE`` or ``DELETE`` on it, so ordinary code cannot rewrite history;
- each row stores ``row_hash = SHA-256(prev_hash || RFC 8785 JSON of the row's fields)``, so an edit
  made after dropping the triggers breaks the chain and ``verify_chain()`` names the row.

Removing the newest rows cannot be seen from the chain alone; ``verify_chain()`` also compares the
chain with SQLite's AUTOINCREMENT counter and with the ledger's *witness* (``core.ledger_witness``:
the head kept outside the database, authenticated with the installation key, updated at every
append), and every certificate records the ledger head it saw. A wiped, deleted, cut-back or junk
ledger is refused (``LedgerError``); ``check_before_run()`` runs these checks without creating files.

Caps are settings: the table ``caps`` holds the current cap per dataset and may be overwritten, and
each change is also appended to the chain (kind ``"cap"``) so that the history of caps is kept.

Datasets are budgeted by *identity* (core/corpus/identity.py): the column ``dataset_fp`` of new rows
holds the identity's budget key, and the table ``views`` maps the fingerprint of every loaded view of
the data (another id column, person column, truncation, a dropped row) to that key, so all views share
one budget. Every method that takes a dataset accepts the identity key or the fingerprint of any view
registered under it (rows of older ledgers, keyed by a fingerprint, count towards its identity).
The cap is enforced in the same SQLite transaction as the charge (``BEGIN IMMEDIATE``): two runs that
both passed ``check_plan`` cannot both charge past the cap, and ``charge`` itself refuses to exceed it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import socket
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import rfc8785
import sqlite_utils

from core import ledger_highwater as highwater
from core import ledger_witness as witness
from core.errors import BudgetError, PrivetError
from core.paths import data_dir
from core.privacy.budget import DatasetSpend, dataset_spend
from core.privacy.conversion import eps_to_rho
from core.private_files import private_file, private_folder, touch_private

GENESIS_HASH = "0" * 64
LEDGER_EVENTS = "(ledger)"  # the dataset key of rows about the ledger itself (a re-witnessing), not a dataset
KINDS = ("charge", "release", "cap")
HASHED_FIELDS = (
    "seq", "kind", "created_at", "dataset_fp", "run_id", "stage",
    "rho", "delta", "epsilon", "description", "export_path", "prev_hash",
)

_SCHEMA = """
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
    row_hash TEXT NOT NULL
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
_TRIGGERS = ("charges_no_update", "charges_no_delete")
_IDENTITY_SCHEMA = """
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
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""


def row_hash(prev_hash: str, row: dict[str, Any]) -> str:
    """The chain hash of one row: SHA-256 over the previous hash and the canonical row fields."""
    payload = {name: row[name] for name in HASHED_FIELDS}
    return hashlib.sha256(prev_hash.encode("ascii") + rfc8785.dumps(payload)).hexdigest()


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


class Ledger:
    """Append-only budget ledger in ``path`` (default: ``data_dir()/ledger.db``)."""

    def __init__(self, path: Path | None = None) -> None:
        if path is None:
            path = data_dir() / "ledger.db"
        self.path = Path(path)
        private_folder(self.path.parent)
        fresh = _is_missing(self.path)
        if fresh:  # a new ledger, unless its witness or high-water mark says there was one (deleted or wiped)
            problems = witness.missing_ledger_problems(self.path) + highwater.missing_ledger_mark_problems(self.path)
            if problems:
                raise witness.refusal(problems)
            touch_private(self.path)  # 0600 before SQLite writes anything (its journals copy the mode)
        try:
            conn = sqlite3.connect(str(self.path), isolation_level=None, timeout=30.0)
        except sqlite3.DatabaseError as exc:
            raise witness.refusal([f"the ledger file {self.path} cannot be opened ({exc})"]) from None
        self.db = sqlite_utils.Database(conn)
        try:
            if not self.db["charges"].exists():
                # Only a new ledger gets its schema here: triggers missing from an existing ledger are
                # evidence of tampering that ``verify_chain`` reports, not something to paper over.
                conn.executescript(_SCHEMA)
                if fresh:
                    self._record_head()
            conn.executescript(_IDENTITY_SCHEMA)  # settings tables (not part of the chain); added to older ledgers
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise witness.refusal([f"the ledger file {self.path.name} is not a readable database ({exc})"]) from None
        private_file(self.path)

    def __enter__(self) -> "Ledger":
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
                "created_at": _now(),
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
        now = self._head_now()
        highwater.raise_mark(self.path, highwater.HighWater(now.rows, now.head_seq, now.head_hash),
                             self._row_hash_at, force=force)

    def charge(self, dataset_fp: str, run_id: str, stage: str, rho: float, delta: float, description: str,
               reserve: float = 0.0) -> None:
        """Charge ``rho`` for one stage; call it *before* the stage draws any noise.

        Refused with ``BudgetError`` (nothing written) if the dataset's spend plus ``max(rho, reserve)``
        would exceed its cap; ``reserve`` is what the run still plans to charge, this charge included.
        The check and the charge are one transaction.
        """
        key = self.dataset_key(dataset_fp)
        need = max(float(rho), float(reserve))
        self._append("charge", key, run_id=run_id, stage=stage, rho=rho, delta=delta, description=description,
                     guard=lambda: self._refuse_over_cap(key, need, run_id=run_id))

    # ----------------------------------------------------------------- reservations (the cap race)
    def reserve(self, dataset_fp: str, run_id: str, rho: float) -> None:
        """Reserve ``rho`` of the dataset's cap for ``run_id`` before its first stage, atomically.

        Refused (``BudgetError``, nothing charged or reserved) when the spend so far, plus what other runs
        in progress have reserved and not yet charged, plus ``rho`` would exceed the cap. Two runs that
        race can therefore not both start when only one fits: the loser is refused before it is charged.
        A reservation is not a charge (it is a setting, outside the hash chain); ``release_reservation``
        drops it when the run ends, and a reservation whose process is gone is dropped by the next check.
        """
        key = self.dataset_key(dataset_fp)
        conn = self.db.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            self._drop_stale_reservations()
            self._refuse_over_cap(key, float(rho), run_id=run_id)
            conn.execute(
                "INSERT OR REPLACE INTO reservations (run_id, dataset_id, rho, pid, host, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [run_id, key, float(rho) + self.run_rho(key, run_id), os.getpid(), socket.gethostname(), _now()],
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def release_reservation(self, run_id: str) -> None:
        self.db.execute("DELETE FROM reservations WHERE run_id = ?", [run_id])

    def reserved_by_others(self, dataset_fp: str, run_id: str = "") -> float:
        """What other runs in progress on this dataset have reserved and not yet charged (rho)."""
        keys = self._keys(dataset_fp)
        rows = self.db.execute(
            f"SELECT run_id, rho FROM reservations WHERE run_id != ? AND dataset_id IN ({', '.join('?' * len(keys))})",
            [run_id, *keys]).fetchall()
        return sum(max(float(rho) - self.run_rho(dataset_fp, str(other)), 0.0) for other, rho in rows)

    def _drop_stale_reservations(self) -> None:
        host = socket.gethostname()
        for run_id, pid, where in self.db.conn.execute("SELECT run_id, pid, host FROM reservations").fetchall():
            if where == host and not _process_alive(int(pid)):
                self.db.conn.execute("DELETE FROM reservations WHERE run_id = ?", [run_id])

    def release(self, dataset_fp: str, run_id: str, epsilon: float, delta: float, export_path: str,
                fingerprint: str = "") -> None:
        """Record that a run's output was exported (spends nothing: the stages were charged already).

        ``fingerprint`` is the exported view's dataset fingerprint; it is kept in the row's description.
        """
        note = f" (data fingerprint {fingerprint})" if fingerprint else ""
        self._append("release", self.dataset_key(dataset_fp), run_id=run_id, stage="export", epsilon=epsilon,
                     delta=delta, description="synthetic corpus and certificate exported" + note,
                     export_path=str(export_path))

    def set_cap(self, dataset_fp: str, epsilon: float, delta: float) -> None:
        """Set (or change) the custodian's total budget for one dataset; the change is logged in the chain."""
        if not (epsilon > 0) or not (0 < delta < 1):
            raise PrivetError(
                f"A cap of epsilon={epsilon}, delta={delta} is not valid.",
                "Give epsilon > 0 and 0 < delta < 1.",
            )
        dataset_fp = self.dataset_key(dataset_fp)
        self._append("cap", dataset_fp, stage="cap", epsilon=epsilon, delta=delta,
                     description=f"budget cap set to epsilon={epsilon:g} at delta={delta:g}")
        self.db.table("caps").upsert(
            {"dataset_fp": dataset_fp, "epsilon": float(epsilon), "delta": float(delta), "updated_at": _now()},
            pk="dataset_fp",
        )

    # ----------------------------------------------------------------- dataset identities
    def register_view(
        self, dataset_id: str, name: str, fingerprint: str, source: str, dry_run: bool = False,
        sketch: list[int] | None = None,
    ) -> list[str]:
        """Budget the view ``fingerprint`` (loaded from ``source``) under the identity ``dataset_id`` (named ``name``).

        Returns warnings for the custodian's screen. Refuses (``PrivetError``) a fingerprint that is already
        budgeted under another identity: the same data cannot get a fresh budget under a new name.
        ``dry_run``: check and warn only, write nothing (a plan, or a run not yet past its cap check).
        """
        conn = self.db.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            bound = conn.execute("SELECT dataset_id FROM views WHERE fingerprint = ?", [fingerprint]).fetchone()
            if bound and bound[0] != dataset_id:
                other = self.dataset_name(bound[0]) or bound[0][:16]
                raise PrivetError(
                    f"Exactly this data is already budgeted under the dataset name '{other}', not '{name}'.",
                    f"Set [data] dataset_name = \"{other}\" in the run spec (the wizard's dataset name) so that it "
                    "is charged to the budget it already has; the same data cannot get a fresh budget under a new name.",
                )
            others = conn.execute(
                "SELECT DISTINCT dataset_id FROM views WHERE source = ? AND dataset_id != ?", [source, dataset_id]
            ).fetchall()
            warnings = [
                f"The file or folder {source} was loaded before under the dataset name "
                f"'{self.dataset_name(row[0]) or row[0][:16]}'; it is now budgeted separately as '{name}'. If it holds "
                "the same people or documents, use the earlier name so that both share one budget."
                for row in others
            ]
            conn.execute("INSERT OR IGNORE INTO datasets (dataset_id, name, created_at) VALUES (?, ?, ?)",
                         [dataset_id, name, _now()])
            conn.execute("INSERT OR IGNORE INTO views (fingerprint, dataset_id, source, created_at) VALUES (?, ?, ?, ?)",
                         [fingerprint, dataset_id, source, _now()])
            if sketch:
                conn.execute("INSERT OR IGNORE INTO sketches (fingerprint, dataset_id, sketch) VALUES (?, ?, ?)",
                             [fingerprint, dataset_id, json.dumps(sketch)])
            conn.execute("ROLLBACK" if dry_run else "COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return warnings

    def name_dataset(self, dataset_id: str, name: str) -> None:
        """Record that ``dataset_id`` is the identity named ``name`` (a cap set before its first run)."""
        self.db.execute("INSERT OR IGNORE INTO datasets (dataset_id, name, created_at) VALUES (?, ?, ?)",
                        [dataset_id, name, _now()])

    def sketches(self) -> list[tuple[str, list[int]]]:
        """``(dataset_id, content sketch)`` of every view registered with one (core.corpus.fingerprint)."""
        return [(r[0], json.loads(r[1])) for r in self.db.execute("SELECT dataset_id, sketch FROM sketches")]

    def identity_of_name(self, name: str) -> str | None:
        """The identity key of a dataset registered under ``name`` (case and spacing ignored); ``None`` if none."""
        wanted = " ".join(name.split()).casefold()
        for dataset_id, known in self.db.execute("SELECT dataset_id, name FROM datasets"):
            if " ".join(str(known).split()).casefold() == wanted:
                return str(dataset_id)
        return None

    def known_datasets(self) -> list[tuple[str, str]]:
        """``(name, identity key)`` of every registered dataset, by name; plus unnamed keys that hold rows."""
        named = {str(r[0]): str(r[1]) for r in self.db.execute("SELECT dataset_id, name FROM datasets")}
        out = sorted(((name, key) for key, name in named.items()), key=lambda p: p[0].casefold())
        out += [("", key) for key in self.datasets() if key not in named]
        return out

    def resolve_dataset(self, text: str) -> str:
        """The identity key of the dataset ``text`` names (its name, key, a view's fingerprint, or a unique
        prefix of a key); refuses (``PrivetError``, listing the known datasets) anything else."""
        if text in {key for _name, key in self.known_datasets()} or self.dataset_key(text) != text:
            return self.dataset_key(text)
        by_name = self.identity_of_name(text)
        if by_name is not None:
            return by_name
        matches = sorted({key for _name, key in self.known_datasets() if key.startswith(text)}) if len(text) >= 4 else []
        if len(matches) == 1:
            return matches[0]
        known = self.known_datasets()
        listed = "; ".join(f"'{name}' ({key[:12]})" if name else key[:12] for name, key in known) or "none yet"
        if len(matches) > 1:
            raise PrivetError(f"'{text}' matches {len(matches)} datasets.", f"Give more characters. Known datasets: {listed}.")
        raise PrivetError(
            f"No dataset named '{text}' is known to this ledger, so a cap set on it would protect nothing.",
            f"Give the name (or key) of a known dataset: {listed}. To cap data that has never been run, give "
            "the dataset name its run spec will use ([data] dataset_name, else the file name) and add --new-dataset.",
        )

    def dataset_key(self, dataset: str) -> str:
        """The budget key of ``dataset``: an identity key, or the fingerprint of a view registered under one."""
        row = self.db.execute("SELECT dataset_id FROM views WHERE fingerprint = ?", [dataset]).fetchone()
        return row[0] if row else dataset

    def dataset_name(self, dataset: str) -> str | None:
        """The name a dataset (identity key or view fingerprint) is budgeted under; ``None`` if unknown."""
        row = self.db.execute("SELECT name FROM datasets WHERE dataset_id = ?", [self.dataset_key(dataset)]).fetchone()
        return row[0] if row else None

    def _keys(self, dataset: str) -> list[str]:
        """The identity key and the fingerprints of its views (rows of older ledgers are keyed by these)."""
        key = self.dataset_key(dataset)
        views = [r[0] for r in self.db.execute("SELECT fingerprint FROM views WHERE dataset_id = ?", [key])]
        return [key, *views]

    # ----------------------------------------------------------------- reading
    def entries(self, dataset_fp: str | None = None) -> list[dict[str, Any]]:
        """All rows (oldest first), or those of one dataset (identity key or view fingerprint)."""
        if dataset_fp is None:
            return list(self.db["charges"].rows_where(order_by="seq"))
        keys = self._keys(dataset_fp)
        return list(self.db["charges"].rows_where(f"dataset_fp IN ({', '.join('?' * len(keys))})", keys, order_by="seq"))

    def datasets(self) -> list[str]:
        rows = self.db.execute("SELECT DISTINCT dataset_fp FROM charges ORDER BY dataset_fp").fetchall()
        return sorted({self.dataset_key(r[0]) for r in rows} - {LEDGER_EVENTS})

    def spent_rho(self, dataset_fp: str, exclude_run: str | None = None) -> float:
        """Total rho charged on a dataset (optionally leaving out one run)."""
        keys = self._keys(dataset_fp)
        sql = f"SELECT COALESCE(SUM(rho), 0.0) FROM charges WHERE kind = 'charge' AND dataset_fp IN ({', '.join('?' * len(keys))})"
        params: list[Any] = list(keys)
        if exclude_run is not None:
            sql += " AND run_id != ?"
            params.append(exclude_run)
        return float(self.db.execute(sql, params).fetchone()[0])

    def run_rho(self, dataset_fp: str, run_id: str) -> float:
        keys = self._keys(dataset_fp)
        sql = (f"SELECT COALESCE(SUM(rho), 0.0) FROM charges WHERE kind = 'charge' "
               f"AND dataset_fp IN ({', '.join('?' * len(keys))}) AND run_id = ?")
        return float(self.db.execute(sql, [*keys, run_id]).fetchone()[0])

    def cap(self, dataset_fp: str) -> tuple[float, float] | None:
        """The dataset's cap (epsilon, delta): its identity's, else the strictest set on one of its views."""
        keys = self._keys(dataset_fp)
        rows = {r[0]: (float(r[1]), float(r[2])) for r in self.db.execute(
            f"SELECT dataset_fp, epsilon, delta FROM caps WHERE dataset_fp IN ({', '.join('?' * len(keys))})", keys)}
        if keys[0] in rows or not rows:
            return rows.get(keys[0])
        return min(rows.values(), key=lambda c: eps_to_rho(c[0], c[1], "tight"))

    def summary(self, dataset_fp: str, delta: float | None = None) -> DatasetSpend:
        """What this ledger holds for one dataset: spent ρ and ε, cap, counts (``core.privacy.budget``).

        The one summary the desktop and ``privet ledger`` show; ε is at ``delta`` when given, else at the
        cap's δ, else at the latest charge's δ.
        """
        return dataset_spend(self, dataset_fp, delta)

    def claim_problems(self, dataset: str, run_id: str, rho_total: float, delta: float) -> list[str]:
        """Why a privacy record or certificate that claims ``rho_total`` at ``delta`` for ``run_id`` on
        ``dataset`` disagrees with what this ledger charged that run (empty list: it agrees)."""
        rows = [r for r in self.entries(dataset) if r["kind"] == "charge" and r["run_id"] == run_id]
        if not rows:
            return [f"this ledger holds no charge for run {run_id} on this dataset, so its budget cannot be confirmed"]
        problems = []
        charged = sum(float(r["rho"]) for r in rows)
        if not math.isclose(charged, float(rho_total), rel_tol=1e-9, abs_tol=1e-12):
            problems.append(f"the ledger charged run {run_id} rho={charged:.6g}, but the record or certificate "
                            f"states rho={float(rho_total):.6g}")
        if any(not math.isclose(float(r["delta"]), float(delta), rel_tol=1e-9) for r in rows):
            problems.append(f"the ledger charged run {run_id} at delta={float(rows[-1]['delta']):.3g}, but the record "
                            f"or certificate states delta={float(delta):.3g}")
        return problems

    def head(self) -> dict[str, Any]:
        """The newest row's sequence number and hash (certificates record it)."""
        row = self.db.execute("SELECT seq, row_hash FROM charges ORDER BY seq DESC LIMIT 1").fetchone()
        return {"seq": row[0], "row_hash": row[1]} if row else {"seq": 0, "row_hash": GENESIS_HASH}

    def check_plan(self, dataset_fp: str, planned_rho: float, delta: float) -> None:
        """Raise ``BudgetError`` if the spend so far plus ``planned_rho`` would exceed the dataset's cap.

        The cap (epsilon, delta) is converted to rho with the tight conversion. Every charge is in
        rho-zCDP, whose composition does not involve delta, so the run's own ``delta`` (the one its
        certificate reports) does not enter the decision: the whole history on the dataset satisfies
        (cap epsilon, cap delta)-DP whenever the summed rho stays within the cap's rho.
        """
        self._refuse_over_cap(dataset_fp, planned_rho)

    def _refuse_over_cap(self, dataset_fp: str, needed_rho: float, run_id: str = "") -> None:
        limit = self.cap(dataset_fp)
        if limit is None:
            return
        cap_eps, cap_delta = limit
        cap_rho = eps_to_rho(cap_eps, cap_delta, "tight")
        spent = self.spent_rho(dataset_fp)
        others = self.reserved_by_others(dataset_fp, run_id)
        if spent + others + needed_rho > cap_rho * (1 + 1e-12):
            left = max(cap_rho - spent - others, 0.0)
            held = (f"; other runs in progress have reserved rho={others:.4g} more" if others > 0 else "")
            already = self.run_rho(dataset_fp, run_id) if run_id else 0.0
            outcome = (f"This run was already charged rho={already:.4g} for the stages it started (that stays "
                       "spent); nothing more was charged." if already > 0 else "Nothing was charged.")
            raise BudgetError(
                f"This run needs rho={needed_rho:.4g} but only rho={left:.4g} of the cap "
                f"(epsilon={cap_eps:g} at delta={cap_delta:g}, i.e. rho={cap_rho:.4g}) is left for this dataset; "
                f"runs so far spent rho={spent:.4g}{held}. {outcome}",
                "Lower epsilon for this run, wait for the other runs to finish, or (if the custodian agrees) raise "
                "the cap with `privet ledger DATASET --set-cap EPS --delta D`.",
            )

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
            raise witness.refusal(problems)

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
            raise witness.refusal(chain)
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
        for name in _TRIGGERS:
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


def _process_alive(pid: int) -> bool:
    """Whether the process that reserved budget still runs (Windows: assumed, os.kill would signal it)."""
    if os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _is_missing(path: Path) -> bool:
    return not path.exists() or (path.is_file() and path.stat().st_size == 0)


def check_before_run(path: Path | None = None) -> None:
    """Refuse (``LedgerError``) unless the installation's ledger passes every check; creates nothing.

    A run calls this before it loads anything: a missing ledger is fine on a fresh installation,
    but not when its witness says it had entries.
    """
    if path is None:
        path = data_dir() / "ledger.db"
    path = Path(path)
    if _is_missing(path):
        problems = witness.missing_ledger_problems(path) + highwater.missing_ledger_mark_problems(path)
        if problems:
            raise witness.refusal(problems)
        return
    with Ledger(path) as ledger:
        ledger.require_intact()
