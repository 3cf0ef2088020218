"""Checkpoints of *released* DP outputs, so an interrupted run resumes without redrawing.

Only outputs that are already differentially private are kept here (the noisy histogram,
the clusters' noisy centres and thresholds, finished synthetic texts, and each document the public
writer has finished, post-processing of released topics: ``realised-<topic index>``). They live in
the run folder, which is never exported. Every write is atomic (temporary file, then rename).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.common.private_files import private_folder, write_private


@dataclass(frozen=True)
class Checkpoints:
    folder: Path

    def __post_init__(self) -> None:
        private_folder(self.folder)

    def path(self, name: str) -> Path:
        return self.folder / f"{name}.json"

    def has(self, name: str) -> bool:
        return self.path(name).exists()

    def load(self, name: str) -> Any:
        return json.loads(self.path(name).read_text(encoding="utf-8"))

    def save(self, name: str, value: Any) -> None:
        write_private(self.path(name), json.dumps(value))
