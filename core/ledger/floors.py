"""Each dataset's totals as the ledger's chain holds them: the floors its high-water mark keeps, and what a
ledger lacks of a floor (``core.ledger.chain.LedgerFile.carry_floors`` appends the difference).

A floor (``core.ledger.highwater.Floor``) is, per dataset key as the rows hold it, Σρ of its charges, Σδ spent
outright, Σ of the runs' δ, its cap (the chain's last cap row) and its name (the settings tables). The ledger's
own events (dataset ``LEDGER_EVENTS``) are not a dataset.
"""

from __future__ import annotations

import math
import sqlite3
from typing import Any

from core.ledger import highwater
from core.ledger.schema import LEDGER_EVENTS
from core.ledger.total import run_deltas


def ledger_floors(conn: sqlite3.Connection) -> dict[str, highwater.Floor]:
    """Per dataset key: Σρ, Σδ spent outright and Σ of the runs' δ of its charges, its cap and its name."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    columns = {r[1] for r in conn.execute("PRAGMA table_info(charges)")}
    part = "delta_part" if "delta_part" in columns else "0.0"
    rows: dict[str, list[dict[str, Any]]] = {}
    for key, run_id, stage, rho, delta, delta_part in conn.execute(
            f"SELECT dataset_fp, run_id, stage, rho, delta, {part} FROM charges WHERE kind = 'charge' ORDER BY seq"):
        rows.setdefault(str(key), []).append(
            {"run_id": run_id, "stage": stage, "rho": float(rho), "delta": float(delta),
             "delta_part": float(delta_part or 0.0)})
    caps = chained_caps(conn)
    names = _names(conn, tables)
    out: dict[str, highwater.Floor] = {}
    for key in sorted((set(rows) | set(caps)) - {LEDGER_EVENTS}):
        charges = rows.get(key, [])
        out[key] = highwater.Floor(
            rho=math.fsum(r["rho"] for r in charges), delta_part=math.fsum(r["delta_part"] for r in charges),
            run_delta=math.fsum(run_deltas(charges).values()), name=names.get(key, ""), cap=caps.get(key))
    return out


def chained_caps(conn: sqlite3.Connection) -> dict[str, tuple[float, float]]:
    """Each dataset's cap by the chain's last cap row (the caps table is written just after that row)."""
    return {str(r[0]): (float(r[1]), float(r[2])) for r in conn.execute(
        "SELECT dataset_fp, epsilon, delta FROM charges WHERE kind = 'cap' ORDER BY seq")}


def _names(conn: sqlite3.Connection, tables: set[str]) -> dict[str, str]:
    """The dataset name of every identity key and view fingerprint (the settings tables, when they exist yet)."""
    if not {"datasets", "views"} <= tables:
        return {}
    names = {str(k): str(n) for k, n in conn.execute("SELECT dataset_id, name FROM datasets")}
    for fingerprint, key in conn.execute("SELECT fingerprint, dataset_id FROM views"):
        if str(key) in names:
            names.setdefault(str(fingerprint), names[str(key)])
    return names


def shortfall(floor: float, had: float) -> float:
    """What ``had`` lacks of ``floor`` (0.0 within rounding: a carried sum is never exactly the floor)."""
    gap = floor - had
    return gap if gap > 1e-12 * max(abs(floor), 1e-300) and gap > 0.0 else 0.0


def as_strict(current: tuple[float, float] | None, floor_cap: tuple[float, float]) -> bool:
    """Whether the ledger's ``current`` cap is at least as strict as the one the mark knew, in ε and in δ."""
    return current is not None and current[0] <= floor_cap[0] and current[1] <= floor_cap[1]


def owed(floor: highwater.Floor, had: highwater.Floor | None) -> bool:
    """Whether the ledger holds less of a dataset than its floor (a carry-over entry will be written)."""
    had = had or highwater.Floor(0.0)
    return bool(shortfall(floor.rho, had.rho) or shortfall(floor.delta_part, had.delta_part)
                or shortfall(floor.run_delta, had.run_delta))
