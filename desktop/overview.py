"""What the main window lists: recent runs and the budget ledger per dataset (Qt-free)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from core.errors import PrivetError
from core.paths import data_dir
from desktop.controller import WizardController, optional_module

RECORD_FILE = "privacy_record.json"
SYNTHETIC_FILE = "synthetic.jsonl"


@dataclass(frozen=True)
class RunInfo:
    run_dir: Path
    run_id: str
    started_at: str
    method: str
    data_path: str
    status: str  # "finished" or "interrupted"


@dataclass(frozen=True)
class DatasetBudget:
    fingerprint: str
    spent_rho: float
    spent_epsilon: float
    delta: float
    cap_epsilon: float | None
    n_runs: int
    n_releases: int


def recent_runs(limit: int = 50) -> list[RunInfo]:
    """Runs in the data folder, newest first (read from each run's run.json)."""
    runs_dir = data_dir() / "runs"
    if not runs_dir.is_dir():
        return []
    runs = []
    for folder in sorted(runs_dir.iterdir(), reverse=True):
        meta_path = folder / "run.json"
        if not meta_path.is_file():
            continue
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        spec = meta.get("spec", {})
        done = (folder / RECORD_FILE).is_file() and (folder / SYNTHETIC_FILE).is_file()
        runs.append(RunInfo(folder, str(meta.get("run_id", folder.name)), str(meta.get("started_at", "")),
                            str(spec.get("method", "")), str(spec.get("data", {}).get("path", "")),
                            "finished" if done else "interrupted"))
        if len(runs) >= limit:
            break
    return runs


def ledger_overview() -> list[DatasetBudget]:
    """Spent budget per dataset fingerprint; ε is given at the δ of the dataset's latest charge."""
    ledger_mod = optional_module("core.ledger")
    if ledger_mod is None:
        return []
    try:
        ledger = ledger_mod.Ledger()
    except PrivetError:  # a wiped or damaged ledger: every run is refused with the full message
        return []
    out = []
    for fp in ledger.datasets():
        rows = ledger.entries(fp)
        charges = [r for r in rows if r["kind"] == "charge"]
        delta = float(charges[-1]["delta"]) if charges else 1e-5
        spent = ledger.spent_rho(fp)
        cap = ledger.cap(fp)
        out.append(DatasetBudget(fp, spent, WizardController.rho_to_eps(spent, delta) if delta > 0 else 0.0, delta,
                                 cap[0] if cap else None, len({r["run_id"] for r in charges}),
                                 sum(1 for r in rows if r["kind"] == "release")))
    return out
