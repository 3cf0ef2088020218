"""Checkpoints of *released* DP outputs, so an interrupted run resumes without redrawing.

Only outputs that are already differentially private are kept here (the noisy histogram,
the clusters' noisy centres and thresholds, finished synthetic texts). They live in the run
folder, which is never exported. Every write is atomic (temporary file, then rename).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Checkpoints:
    folder: Path

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)

    def path(self, name: str) -> Path:
        return self.folder / f"{name}.json"

    def has(self, name: str) -> bool:
        return self.path(name).exists()

    def load(self, name: str) -> Any:
        return json.loads(self.path(name).read_text(encoding="utf-8"))

    def save(self, name: str, value: Any) -> None:
        target = self.path(name)
        tmp = target.with_suffix(".json.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(value, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
