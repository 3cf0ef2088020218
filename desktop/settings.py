"""Desktop preferences (models folder, signing identity), kept as JSON in the data folder."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from core.common.paths import data_dir

FILE_NAME = "desktop_settings.json"


@dataclass
class DesktopSettings:
    models_folder: str = ""
    custodian: str = ""
    organisation: str = ""
    irb_protocol: str = ""

    @classmethod
    def load(cls, path: Path | None = None) -> "DesktopSettings":
        path = path or data_dir() / FILE_NAME
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        known = {f.name for f in fields(cls)}
        return cls(**{k: str(v) for k, v in raw.items() if k in known})

    def save(self, path: Path | None = None) -> Path:
        path = path or data_dir() / FILE_NAME
        path.write_text(json.dumps(asdict(self), indent=2), encoding="utf-8")
        return path

    def apply_to_environment(self) -> None:
        """Point core's model listing (and the run child processes) at the chosen models folder."""
        if self.models_folder:
            os.environ["PRIVET_MODELS_DIR"] = self.models_folder
        else:
            os.environ.pop("PRIVET_MODELS_DIR", None)

    def identity(self) -> dict[str, str]:
        return {"custodian": self.custodian, "organisation": self.organisation, "irb_protocol": self.irb_protocol}
