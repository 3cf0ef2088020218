"""What the main window lists: recent runs and the budget ledger per dataset (Qt-free)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from core.errors import PrivetError
from core.paths import data_dir
from core.ledger import Ledger
from core.ledger.view import DatasetSpend, all_datasets

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
