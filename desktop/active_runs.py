"""The runs going on in this application: at most one per dataset, visible to the main window."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal


@dataclass(frozen=True)
class ActiveRun:
    fingerprint: str
    run_dir: Path
    owner: Any  # the RunWizard that runs it


class ActiveRuns(QObject):
    """Claims a dataset for one run at a time; ``changed`` fires when a run starts or ends."""

    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._runs: dict[str, ActiveRun] = {}

    def busy_message(self, fingerprint: str, owner: Any = None) -> str:
        """Why a run on this dataset cannot start now ('' when it can)."""
        run = self._runs.get(fingerprint)
        if run is None or run.owner is owner:
            return ""
        return (f"Another run on this dataset is in progress ({run.run_dir.name}). Only one run per dataset can "
                "run at a time. Wait for it to finish (the main window shows it), or stop it first.")

    def claim(self, fingerprint: str, run_dir: Path, owner: Any) -> str:
        problem = self.busy_message(fingerprint, owner)
        if not problem:
            self._runs[fingerprint] = ActiveRun(fingerprint, Path(run_dir), owner)
            self.changed.emit()
        return problem

    def release(self, owner: Any) -> None:
        before = len(self._runs)
        self._runs = {fp: run for fp, run in self._runs.items() if run.owner is not owner}
        if len(self._runs) != before:
            self.changed.emit()

    def runs(self) -> list[ActiveRun]:
        return list(self._runs.values())

    def owner_of(self, run_dir: Path) -> Any:
        return next((r.owner for r in self._runs.values() if Path(r.run_dir) == Path(run_dir)), None)
