"""What the main window lists: recent runs, the budget ledger per dataset and each dataset's runs (Qt-free).

Every ε here is read from the ledger (``core.ledger.view``); nothing is recomputed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from core.common.errors import PrivetError
from core.common.paths import data_dir
from core.ledger import Ledger
from core.ledger.schema import RELEASE_STAGE
from core.ledger.view import DatasetSpend, all_datasets, run_spend

RECORD_FILE = "privacy_record.json"
SYNTHETIC_FILE = "synthetic.jsonl"


@dataclass(frozen=True)
class RunInfo:
    run_dir: Path
    run_id: str
    started_at: str
    method: str
    data_path: str
    status: str  # "finished", "finished, no documents" or "interrupted"


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
        status = ("finished" if _has_documents(folder / SYNTHETIC_FILE) else "finished, no documents") if done \
            else "interrupted"
        runs.append(RunInfo(folder, str(meta.get("run_id", folder.name)), str(meta.get("started_at", "")),
                            str(spec.get("method", "")), str(spec.get("data", {}).get("path", "")), status))
    runs.sort(key=lambda r: (r.started_at, r.run_id), reverse=True)  # newest first, by when each run started
    return runs[:limit]


def _has_documents(path: Path) -> bool:
    """Whether a synthetic.jsonl holds at least one document (reads up to its first non-empty line)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return any(line.strip() for line in handle)
    except OSError:
        return False


def ledger_overview() -> list[DatasetSpend]:
    """Spent budget per dataset (``core.ledger.view.all_datasets``: ε at the cap's δ, else the latest charge's)."""
    try:
        with Ledger() as ledger:
            spends = all_datasets(ledger)
    except PrivetError:  # a wiped or damaged ledger: every run is refused with the full message
        return []
    return spends


@dataclass(frozen=True)
class DatasetRun:
    """One run charged to a dataset: when, its ε at its own δ (``core.ledger.view.run_spend``, the figure its
    certificate states) and how many times it was exported."""

    run_id: str
    date: str
    epsilon: float
    delta: float
    releases: int


def dataset_runs(key: str) -> list[DatasetRun]:
    """The runs charged to one dataset (identity key or view fingerprint), oldest first, from the ledger rows."""
    try:
        with Ledger() as ledger:
            rows = ledger.entries(key)
            first: dict[str, str] = {}
            exported: dict[str, int] = {}
            for row in rows:
                run = str(row["run_id"])
                if row["kind"] == "charge":
                    first.setdefault(run, str(row.get("created_at", ""))[:10])
                elif row["kind"] == "release" and row["stage"] == RELEASE_STAGE:
                    exported[run] = exported.get(run, 0) + 1
            spends = {run: run_spend(ledger, run) for run in first}
    except PrivetError:
        return []
    return [DatasetRun(run, date, spends[run].epsilon, spends[run].delta, exported.get(run, 0))
            for run, date in first.items()]
