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

from core.errors import BudgetError, PrivetError
from core.ledger.identities import DatasetIdentities
from core.ledger.schema import now
from core.ledger.view import DatasetSpend, dataset_spend
from core.privacy.conversion import eps_to_rho


class Ledger(DatasetIdentities):
    """Append-only budget ledger in ``path`` (default: ``data_dir()/ledger.db``)."""

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
                [run_id, key, float(rho) + self.run_rho(key, run_id), os.getpid(), socket.gethostname(), now()],
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
        """What this ledger holds for one dataset: spent ρ and ε, cap, counts (``core.ledger.view``).

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


