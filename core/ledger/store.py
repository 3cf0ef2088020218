"""The installation's privacy-budget ledger: charges, releases, caps and reservations, per dataset.

Every stage of a run is charged here *before* it draws noise (a crashed or cancelled run stays charged),
every export is recorded as a release, and every change of a custodian's cap is logged; all three are
rows of the hash chain (``core.ledger.chain``), budgeted by dataset identity (``core.ledger.identities``).

Caps are settings: the table ``caps`` holds the current cap per dataset and may be overwritten, and each
change is also appended to the chain (kind ``"cap"``) so that the history of caps is kept. The cap is
enforced in the same SQLite transaction as the charge (``BEGIN IMMEDIATE``): two runs that both passed
``check_plan`` cannot both charge past the cap, and ``charge`` itself refuses to exceed it.
"""

from __future__ import annotations

import math
import os
import socket
from typing import Any

from core.common.errors import BudgetError, PrivetError
from core.ledger.identities import DatasetIdentities
from core.ledger.schema import RECORD_STAGE, now
from core.ledger.total import COMBINING_WORDS, Total, dataset_total
from core.ledger.view import DatasetSpend, dataset_spend
from core.privacy.conversion import eps_to_rho


CAP_REASON = "; reason: "  # in a cap row's description, what follows is the custodian's reason for the change


class Ledger(DatasetIdentities):
    """Append-only budget ledger in ``path`` (default: ``data_dir()/ledger.db``)."""

    def charge(self, dataset_fp: str, run_id: str, stage: str, rho: float, delta: float, description: str,
               reserve: float = 0.0, delta_part: float = 0.0, reserve_delta_part: float = 0.0) -> None:
        """Charge ``rho`` (and ``delta_part``, the δ an (ε, δ) stage spends outright) for one stage; call it
        *before* the stage draws any noise. ``delta`` is the run's δ, the one its certificate states.

        Refused with ``BudgetError`` (nothing written) if the dataset's total plus ``max(rho, reserve)`` and
        ``max(delta_part, reserve_delta_part)`` would exceed its cap; ``reserve*`` is what the run still plans
        to charge, this charge included. The check and the charge are one transaction.
        """
        key = self.dataset_key(dataset_fp)
        need = max(float(rho), float(reserve))
        need_part = max(float(delta_part), float(reserve_delta_part))
        self._append("charge", key, run_id=run_id, stage=stage, rho=rho, delta=delta, description=description,
                     delta_part=delta_part,
                     guard=lambda: self._refuse_over_cap(key, need, run_id=run_id, needed_delta_part=need_part))

    # ----------------------------------------------------------------- reservations (the cap race)
    def reserve(self, dataset_fp: str, run_id: str, rho: float, delta_part: float = 0.0) -> None:
        """Reserve ``rho`` and ``delta_part`` of the dataset's cap for ``run_id`` before its first stage, atomically.

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
            self._refuse_over_cap(key, float(rho), run_id=run_id, needed_delta_part=float(delta_part))
            conn.execute(
                "INSERT OR REPLACE INTO reservations (run_id, dataset_id, rho, delta_part, pid, host, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [run_id, key, float(rho) + self.run_rho(key, run_id),
                 float(delta_part) + self.run_delta_part(key, run_id), os.getpid(), socket.gethostname(), now()],
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def release_reservation(self, run_id: str) -> None:
        self.db.execute("DELETE FROM reservations WHERE run_id = ?", [run_id])

    def reserved_by_others(self, dataset_fp: str, run_id: str = "") -> float:
        """What other runs in progress on this dataset have reserved and not yet charged (rho)."""
        return self._reserved(dataset_fp, run_id)[0]

    def _reserved(self, dataset_fp: str, run_id: str = "") -> tuple[float, float]:
        """(ρ, δ_p) that other runs in progress on this dataset have reserved and not yet charged."""
        keys = self._keys(dataset_fp)
        rows = self.db.execute(
            f"SELECT run_id, rho, delta_part FROM reservations WHERE run_id != ? "
            f"AND dataset_id IN ({', '.join('?' * len(keys))})", [run_id, *keys]).fetchall()
        rho = sum(max(float(r) - self.run_rho(dataset_fp, str(other)), 0.0) for other, r, _p in rows)
        part = sum(max(float(p) - self.run_delta_part(dataset_fp, str(other)), 0.0) for other, _r, p in rows)
        return rho, part

    def _drop_stale_reservations(self) -> None:
        host = socket.gethostname()
        for run_id, pid, where in self.db.conn.execute("SELECT run_id, pid, host FROM reservations").fetchall():
            if where == host and not _process_alive(int(pid)):
                self.db.conn.execute("DELETE FROM reservations WHERE run_id = ?", [run_id])

    def release(self, dataset_fp: str, run_id: str, epsilon: float, delta: float, export_path: str,
                fingerprint: str = "", record_hash: str = "") -> None:
        """Record that a run's output was exported (spends nothing: the stages were charged already).

        ``fingerprint`` is the exported view's dataset fingerprint; it is kept in the row's description.
        ``record_hash`` binds the exported privacy record (``PrivacyRecord.content_hash``): its unit kind and
        every ε and δ are then fixed by the hash chain, not only by the record's own seal.
        """
        note = f" (data fingerprint {fingerprint})" if fingerprint else ""
        self._append("release", self.dataset_key(dataset_fp), run_id=run_id, stage="export", epsilon=epsilon,
                     delta=delta, description="synthetic corpus and certificate exported" + note,
                     export_path=str(export_path), record_hash=record_hash)

    def bind_record(self, dataset_fp: str, run_id: str, record_hash: str, epsilon: float, delta: float) -> None:
        """Record, in the hash chain, the hash of the privacy record a run has just written
        (``PrivacyRecord.claim_hash``: its unit of privacy, every stage's ρ and δ, its ε and δ). The export
        refuses a record that no longer matches it, and ``privet verify --ledger`` a certificate."""
        self._append("release", self.dataset_key(dataset_fp), run_id=run_id, stage=RECORD_STAGE, epsilon=epsilon,
                     delta=delta, description="privacy record written (the ledger keeps its hash: unit of privacy, "
                     "every rho, delta and epsilon)", record_hash=record_hash)

    def bound_record_hash(self, dataset_fp: str, run_id: str) -> str | None:
        """The record hash the ledger holds for ``run_id`` (the newest one written); ``None`` for a run that
        finished before records were bound."""
        hashes = [str(r.get("record_hash") or "") for r in self.entries(dataset_fp)
                  if r["kind"] == "release" and r["run_id"] == run_id and r["stage"] == RECORD_STAGE]
        hashes = [h for h in hashes if h]
        return hashes[-1] if hashes else None

    def set_cap(self, dataset_fp: str, epsilon: float, delta: float, reason: str = "") -> None:
        """Set (or change) the custodian's total budget for one dataset; the change is logged in the chain.

        A cap is a ceiling: one below what the dataset has already spent (at the cap's δ), or whose δ the
        dataset's phrase stages have already spent, is refused with the spent figure. ``reason`` (why the cap
        was set or raised, in the custodian's words) is kept in the chained cap row's description, after
        ``CAP_REASON``, and so appears on every later certificate of the dataset."""
        if not (epsilon > 0 and math.isfinite(epsilon)) or not (0 < delta < 1):
            raise PrivetError(
                f"A cap of epsilon={epsilon}, delta={delta} is not valid.",
                "Give epsilon > 0 and 0 < delta < 1.",
            )
        dataset_fp = self.dataset_key(dataset_fp)
        spent = dataset_total(self.entries(dataset_fp), (float(epsilon), float(delta)))
        if spent.epsilon > epsilon * (1 + 1e-12):
            already = (f"ε = {spent.epsilon:.4g} at δ = {delta:g}" if spent.finite else
                       f"δ = {spent.delta_part:.3g} outright by phrase discovery, which is not below δ = {delta:g}")
            raise PrivetError(
                f"A cap of ε = {epsilon:g} at δ = {delta:g} is below what this dataset has already spent: {already}.",
                "A cap is a ceiling on the total: choose an ε at least the amount spent (or a larger δ).",
            )
        self._append("cap", dataset_fp, stage="cap", epsilon=epsilon, delta=delta,
                     description=f"budget cap set to epsilon={epsilon:g} at delta={delta:g}"
                     + (f"{CAP_REASON}{' '.join(reason.split())}" if reason.strip() else ""))
        self.db.table("caps").upsert(
            {"dataset_fp": dataset_fp, "epsilon": float(epsilon), "delta": float(delta), "updated_at": now()},
            pk="dataset_fp",
        )


    # ----------------------------------------------------------------- reading
    def entries(self, dataset_fp: str | None = None) -> list[dict[str, Any]]:
        """All rows (oldest first), or those of one dataset (identity key or view fingerprint)."""
        if dataset_fp is None:
            return list(self.db["charges"].rows_where(order_by="seq"))
        keys = self._keys(dataset_fp)
        return list(self.db["charges"].rows_where(f"dataset_fp IN ({', '.join('?' * len(keys))})", keys, order_by="seq"))


    def spent_rho(self, dataset_fp: str, exclude_run: str | None = None) -> float:
        """Total rho charged on a dataset (optionally leaving out one run)."""
        keys = self._keys(dataset_fp)
        sql = f"SELECT COALESCE(SUM(rho), 0.0) FROM charges WHERE kind = 'charge' AND dataset_fp IN ({', '.join('?' * len(keys))})"
        params: list[Any] = list(keys)
        if exclude_run is not None:
            sql += " AND run_id != ?"
            params.append(exclude_run)
        return float(self.db.execute(sql, params).fetchone()[0])

    def spent_delta_part(self, dataset_fp: str) -> float:
        """Total δ spent outright by (ε, δ) stages (phrase discovery's δ_p) on a dataset."""
        keys = self._keys(dataset_fp)
        sql = (f"SELECT COALESCE(SUM(delta_part), 0.0) FROM charges WHERE kind = 'charge' "
               f"AND dataset_fp IN ({', '.join('?' * len(keys))})")
        return float(self.db.execute(sql, keys).fetchone()[0])

    def run_delta_part(self, dataset_fp: str, run_id: str) -> float:
        keys = self._keys(dataset_fp)
        sql = (f"SELECT COALESCE(SUM(delta_part), 0.0) FROM charges WHERE kind = 'charge' "
               f"AND dataset_fp IN ({', '.join('?' * len(keys))}) AND run_id = ?")
        return float(self.db.execute(sql, [*keys, run_id]).fetchone()[0])

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
        """What this ledger holds for one dataset: spent ρ, δ_p and ε, cap, counts (``core.ledger.view``).

        The one summary the desktop and ``privet ledger`` show; ε is the dataset's total (``core.ledger.total``)
        at the cap's δ, else at the sum of its runs' δ (or at ``delta`` when given).
        """
        return dataset_spend(self, dataset_fp, delta)

    def total(self, dataset_fp: str, plus_rho: float = 0.0, plus_delta_part: float = 0.0,
              plus_run_delta: float = 0.0) -> Total:
        """The dataset's total as one (ε, δ) statement, and with what a planned run would add (``core.ledger.total``)."""
        return dataset_total(self.entries(dataset_fp), self.cap(dataset_fp), plus_rho, plus_delta_part, plus_run_delta)

    def claim_problems(self, dataset: str, run_id: str, rho_total: float, delta: float,
                       delta_part: float | None = None) -> list[str]:
        """Why a privacy record or certificate that claims ``rho_total`` at ``delta`` (and ``delta_part`` spent
        outright by its (ε, δ) stages) for ``run_id`` on ``dataset`` disagrees with what this ledger charged that
        run (empty list: it agrees)."""
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
        part = math.fsum(float(r.get("delta_part", 0.0) or 0.0) for r in rows)
        if delta_part is not None and not math.isclose(part, float(delta_part), rel_tol=1e-9, abs_tol=1e-15):
            problems.append(f"the ledger charged run {run_id} delta_p={part:.3g} (the δ its phrase stage spends), but "
                            f"the record or certificate states delta_p={float(delta_part):.3g}")
        return problems

    def check_plan(self, dataset_fp: str, planned_rho: float, delta: float, delta_part: float = 0.0) -> None:
        """Raise ``BudgetError`` if the dataset's total with a run of ``planned_rho`` and ``delta_part`` would
        exceed its cap.

        The total is the one of ``core.ledger.total``: Σρ converted at the cap's δ − Σδ_p, plus Σδ_p. The
        run's own ``delta`` (the one its certificate reports) is only where its own ε is stated; what the
        dataset spends is its ρ and its δ_p, and a run that would take Σδ_p to the cap's δ is refused.
        """
        self._refuse_over_cap(dataset_fp, planned_rho, needed_delta_part=delta_part)

    def _refuse_over_cap(self, dataset_fp: str, needed_rho: float, run_id: str = "",
                         needed_delta_part: float = 0.0) -> None:
        limit = self.cap(dataset_fp)
        if limit is None:
            return
        cap_eps, cap_delta = limit
        others_rho, others_part = self._reserved(dataset_fp, run_id)
        rows = self.entries(dataset_fp)  # read once: this runs inside every charge's transaction
        before = dataset_total(rows, limit)
        after = dataset_total(rows, limit, others_rho + needed_rho, others_part + needed_delta_part)
        if after.finite and after.epsilon <= cap_eps * (1 + 1e-12):
            return
        held = (" Other runs in progress on this dataset have reserved part of what is left."
                if others_rho > 0 or others_part > 0 else "")
        already = self.run_rho(dataset_fp, run_id) if run_id else 0.0
        outcome = ("This run was already charged for the stages it started (that stays spent); nothing more was "
                   "charged." if already > 0 else "Nothing was charged.")
        if not after.finite:
            raise BudgetError(
                f"This run's phrase discovery would spend δ = {needed_delta_part:.3g} outright; with the "
                f"δ = {before.delta_part + others_part:.3g} already spent that way, the dataset would reach its cap's "
                f"δ = {cap_delta:g}, beyond which no ε can be stated.{held} {outcome}",
                "Run without phrase discovery ([dp_synrag] discover_phrases = false), give it a smaller share of δ "
                "(phrases_delta_fraction), lower δ for this run, or (if the custodian agrees) raise the cap's δ.",
            )
        raise BudgetError(
            f"This run would bring the dataset's total to ε = {after.epsilon:.3g} (at δ = {cap_delta:g}), over its "
            f"cap of ε = {cap_eps:g}; the runs so far have spent ε = {before.epsilon:.3g}.{held} {outcome} "
            + COMBINING_WORDS,
            "Lower ε for this run, wait for the other runs to finish, or (if the custodian agrees) raise "
            "the cap with `privet ledger DATASET --set-cap EPS --delta D`.",
        )


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


