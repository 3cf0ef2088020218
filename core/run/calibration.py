"""What this computer's runs measured, remembered for the next estimate (``core.run.estimate``): per kind of device
and model, measured time ÷ estimated time, for the whole run and per stage, in the data folder's
``calibration.json``. Timings only: no text, no setting of the run."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.common.paths import data_dir

CALIBRATION_FILE = "calibration.json"
CALIBRATION_BOUNDS = (0.05, 50.0)


def _device_kind(device: str) -> str:
    return "gpu" if device.startswith("cuda") else "cpu"


def calibration_key(spec: Any) -> str:
    """Speeds are remembered per kind of device and per model: a test model's speed says nothing about another."""
    llm = spec.llm
    model = llm.source if llm.source != "hf" and llm.source != "gguf" else f"{llm.source}:{Path(llm.path).name}"
    return f"{_device_kind(llm.device)}/{model}"


def calibration_path() -> Path:
    return data_dir() / CALIBRATION_FILE


@dataclass(frozen=True)
class Calibration:
    """Measured time ÷ estimated time on this computer: for the whole run, and per stage where measured."""

    factor: float
    stages: dict[str, float]
    measured_at: str


def clamp_factor(factor: float) -> float:
    """``factor`` within ``CALIBRATION_BOUNDS`` (a measured slowdown, or one read back from the file)."""
    lo, hi = CALIBRATION_BOUNDS
    return min(max(float(factor), lo), hi)


def _read_calibrations() -> dict[str, Any]:
    try:
        data = json.loads(calibration_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load_calibration(key: str) -> Calibration | None:
    """The calibration of ``calibration_key(spec)``, or None when no run of it has been measured yet."""
    entry = _read_calibrations().get(key)
    try:
        factor = float(entry["factor"])  # type: ignore[index]
        stages = {str(k): clamp_factor(v) for k, v in dict(entry.get("stages", {})).items()}  # type: ignore[union-attr]
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    lo, hi = CALIBRATION_BOUNDS
    if not lo <= factor <= hi:
        return None
    return Calibration(factor, stages, str(entry.get("measured_at", "")))  # type: ignore[union-attr]


def _averaged(earlier: Any, measured: float) -> float:
    """The factor remembered: the geometric mean of the earlier one (when there is one) and this run's. One run's
    speed per document moves with its draw (the forms released, the documents' lengths): four 200-patient runs on
    this machine spent 1.18-1.50 s per document idle and 2.73-2.88 busy (docs/bench/estimate.md)."""
    try:
        return clamp_factor(math.sqrt(clamp_factor(float(earlier)) * clamp_factor(measured)))
    except (TypeError, ValueError):
        return clamp_factor(measured)


def save_calibration(key: str, factor: float, stages: dict[str, float] | None = None) -> None:
    """Remember how much slower (> 1) or faster (< 1) than the built-in figures this computer ran, per stage,
    averaged with what was remembered before (``_averaged``). Stages measured before and not in this run keep their
    earlier factor."""
    data = _read_calibrations()
    old = data.get(key) if isinstance(data.get(key), dict) else {}
    merged = {str(k): clamp_factor(v) for k, v in dict(old.get("stages", {})).items()}  # type: ignore[union-attr]
    merged.update({k: _averaged(merged.get(k), v) for k, v in (stages or {}).items()})
    data[key] = {"factor": _averaged(old.get("factor"), factor), "stages": merged,
                 "measured_at": datetime.now(UTC).isoformat(timespec="seconds")}
    path = calibration_path()
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
    tmp.replace(path)
