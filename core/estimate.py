"""How long a run will take: the work it does (units, R, k, T, K, L, model size) over this computer's speed.

``estimate(spec, n_units)`` splits a run into its stages and prices each one in model rows × tokens.
The speed is a built-in figure for the packaged SmolLM2 on 2 CPU cores (README, "Benchmarks",
~110 row-tokens/s) scaled by model size, multiplied by the factor measured on this computer in its
last run (``calibration.json`` in the data folder). During a run, ``EtaTracker`` refines the overall
time left from the stages that have finished and the progress of the current one, and records the
measured factor for the next estimate. Estimates never look at document text; only counts enter.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.paths import data_dir

CPU_PREFILL_TOKENS_S = 700.0  # prompt tokens per second, packaged SmolLM2-135M, 2 CPU cores
CPU_DECODE_ROW_TOKENS_S = 100.0  # generated row-tokens per second (bench/private_prediction.py: ~110)
CPU_EMBED_UNITS_S = 40.0  # documents embedded per second by the packaged MiniLM
GPU_SPEEDUP = 40.0
REFERENCE_MODEL_BYTES = 270e6  # SmolLM2-135M in 16-bit
MODEL_LOAD_S_PER_GB = 8.0
CALIBRATION_FILE = "calibration.json"
MIN_STAGE_S_FOR_CALIBRATION = 5.0  # stages shorter than this say little about speed
CALIBRATION_BOUNDS = (0.05, 50.0)


@dataclass(frozen=True)
class Estimate:
    """Seconds per stage in run order, and what the speed figure is based on."""

    stages: list[tuple[str, float]]
    basis: str

    @property
    def total_s(self) -> float:
        return sum(s for _, s in self.stages)

    def to_dict(self) -> dict[str, Any]:
        return {"stages": [list(p) for p in self.stages], "basis": self.basis}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Estimate:
        return cls([(str(s), float(v)) for s, v in data.get("stages", [])], str(data.get("basis", "")))


def _device_kind(device: str) -> str:
    return "gpu" if device.startswith("cuda") else "cpu"


def calibration_path() -> Path:
    return data_dir() / CALIBRATION_FILE


def load_calibration(device: str) -> tuple[float, str] | None:
    """(factor, when measured) for this kind of device, or None when no run has been measured yet."""
    try:
        data = json.loads(calibration_path().read_text(encoding="utf-8"))
        entry = data[_device_kind(device)]
        factor = float(entry["factor"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    lo, hi = CALIBRATION_BOUNDS
    return (factor, str(entry.get("measured_at", ""))) if lo <= factor <= hi else None


def save_calibration(device: str, factor: float) -> None:
    """Remember how much slower (> 1) or faster (< 1) than the built-in figures this computer ran."""
    lo, hi = CALIBRATION_BOUNDS
    factor = min(max(factor, lo), hi)
    path = calibration_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            data = {}
    except (OSError, ValueError):
        data = {}
    data[_device_kind(device)] = {"factor": factor,
                                  "measured_at": datetime.now(UTC).isoformat(timespec="seconds")}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
    tmp.replace(path)


def _model_bytes(spec: Any) -> float:
    """Size of the chosen language model's weights (the packaged model's when it cannot be found)."""
    path = Path(spec.llm.path).expanduser() if getattr(spec.llm, "path", "") else None
    try:
        if path is not None and path.is_file():
            return float(path.stat().st_size)
        if path is not None and path.is_dir():
            return float(sum(p.stat().st_size for p in path.glob("*.safetensors")) or REFERENCE_MODEL_BYTES)
    except OSError:
        pass
    return REFERENCE_MODEL_BYTES


def estimate(spec: Any, n_units: int, model_bytes: float | None = None, calibrate: bool = True) -> Estimate:
    """Seconds per stage of a run of ``spec`` on ``n_units`` units."""
    size = model_bytes if model_bytes is not None else _model_bytes(spec)
    slow = max(size / REFERENCE_MODEL_BYTES, 0.25)  # bigger models: proportionally slower per token
    speedup = GPU_SPEEDUP if spec.llm.device.startswith("cuda") else 1.0
    prefill = CPU_PREFILL_TOKENS_S * speedup / slow
    decode = CPU_DECODE_ROW_TOKENS_S * speedup / slow
    embed = CPU_EMBED_UNITS_S * speedup
    factor, basis = 1.0, "built-in speed figures for this kind of computer (no run measured here yet)"
    measured = load_calibration(spec.llm.device) if calibrate else None
    if measured is not None:
        factor, when = measured
        basis = f"the speed measured on this computer in its last run ({when[:10]})"
    p = spec.dp_synrag
    prompt = min(p.max_prompt_tokens, 200)
    n = max(int(n_units), 0)

    def llm(prompt_tokens: float, row_tokens: float) -> float:
        return factor * (prompt_tokens / prefill + row_tokens / decode)

    stages: list[tuple[str, float]] = [("models", 3.0 + MODEL_LOAD_S_PER_GB * size / 1e9)]
    if spec.method == "rpsg":
        r = spec.rpsg
        stages += [
            ("rpsg_mask", n * 0.005),
            ("rpsg_abstract", llm(n * r.m * prompt, n * r.m * r.max_new_tokens)),
            ("embedding", factor * n * (r.m + 1) / embed),
            ("rpsg_selection", n * 0.001),
            ("rpsg_generate", llm(n * (r.n_variants + 1) * prompt, n * (r.n_variants + 1) * r.max_new_tokens)),
            ("rpsg_refine", llm(n * (r.n_variants + 1) * prompt, 0)),
        ]
    elif spec.method == "dp_synrag":
        rows = min(n * p.L, p.R * min(p.k, n)) + (p.R if p.public_anchor else 0)  # k: typical cluster size
        keywords = n * 0.002 if p.keywords == "vocabulary" else llm(n * prompt, n * (6 * p.K + 4))
        if p.discover_phrases:  # step 0: n-grams of each unit ranked by public word frequencies (no model)
            stages += [("phrases", n * 0.006)]  # measured 6 ms per demo note on a loaded 2-core machine
        stages += [("keywords", keywords)]
        if p.refine:
            stages += [("embedding", factor * n / embed), ("retrieval", 1.0 + p.R * 0.02 + n * p.R * 2e-6)]
        if p.realisation:  # public writer: up to two drafts per topic (realisation.ATTEMPTS)
            stages += [("realisation", llm(2 * p.R * prompt, 2 * p.R * p.realisation_tokens))]
        if p.token_stage:
            stages += [("private_prediction", llm(rows * prompt, rows * p.T))]
        length = p.realisation_tokens if p.text == "realised" else p.T
        if p.self_filter:
            stages.append(("self_filter", llm(p.R * (prompt + length), p.R * 4)))
    elif spec.method == "aug_pe":  # public generation dominates: every candidate text the model writes
        a = spec.aug_pe
        texts = a.population + (a.iterations - 1) * (a.population // (1 + a.variations)) * a.variations
        stages += [
            ("aug_pe_generation", llm(texts * (a.max_new_tokens + 60), texts * a.max_new_tokens)),
            ("embedding", factor * (n + texts) / embed),
        ]
    else:  # dp_synth and methods without a model of their own: one generation per unit
        stages += [("private_prediction", llm(n * prompt, n * p.T))]
    return Estimate([(s, float(v)) for s, v in stages], basis)


@dataclass
class EtaTracker:
    """Refines the overall time left from progress events (``ProgressEvent.to_dict()`` dicts).

    A stage that finished tells how much slower or faster than estimated this computer is (the
    calibration factor); the current stage's own rate gives its time left; stages still to come are
    their estimate times the factor.
    """

    estimate: Estimate
    clock: Callable[[], float] = time.monotonic
    _started: dict[str, float] = field(default_factory=dict)
    _actual: dict[str, float] = field(default_factory=dict)
    _progress: dict[str, tuple[int, int, float]] = field(default_factory=dict)
    _current: str = ""

    def update(self, event: dict[str, Any]) -> None:
        stage, kind, now = str(event.get("stage", "")), event.get("kind"), self.clock()
        if kind == "stage_start":
            self._started[stage] = now
            self._current = stage
        elif kind == "progress" and stage in self._started:
            self._progress[stage] = (int(event.get("done", 0)), int(event.get("total", 0)), now)
            self._current = stage
        elif kind == "stage_end" and stage in self._started:
            self._actual[stage] = now - self._started[stage]
            if self._current == stage:
                self._current = ""

    def factor(self) -> float:
        """Measured time / estimated time over the stages long enough to say something (1.0 before any)."""
        planned = dict(self.estimate.stages)
        est = act = 0.0
        for stage, seconds in self._actual.items():
            if stage in planned and max(planned[stage], seconds) >= MIN_STAGE_S_FOR_CALIBRATION:
                est += planned.get(stage, 0.0)
                act += seconds
        stage = self._current
        if stage in self._progress and planned.get(stage, 0.0) > 0:
            done, total, when = self._progress[stage]
            elapsed = when - self._started[stage]
            if done > 0 and total > 0 and elapsed >= 1.0:
                est += planned[stage] * done / total
                act += elapsed
        if est <= 0 or act <= 0:
            return 1.0
        lo, hi = CALIBRATION_BOUNDS
        return min(max(act / est, lo), hi)

    def stage_remaining_s(self, stage: str) -> float | None:
        planned = dict(self.estimate.stages)
        if stage in self._actual:
            return 0.0
        if stage in self._progress:
            done, total, when = self._progress[stage]
            elapsed = when - self._started[stage]
            if done > 0 and total >= done:
                return elapsed / done * (total - done) - (self.clock() - when)
        if stage not in planned:
            return None
        spent = self.clock() - self._started[stage] if stage in self._started else 0.0
        return max(planned[stage] * self.factor() - spent, 0.0)

    def remaining_s(self) -> float:
        """Seconds left for the whole run (never negative)."""
        total = 0.0
        for stage, _ in self.estimate.stages:
            if stage in self._actual:
                continue
            left = self.stage_remaining_s(stage)
            total += max(left or 0.0, 0.0)
        return total

    def finished_factor(self) -> float | None:
        """The factor to remember after the run, or None when no stage was long enough to measure."""
        planned = dict(self.estimate.stages)
        pairs = [(planned[s], a) for s, a in self._actual.items()
                 if s in planned and max(planned[s], a) >= MIN_STAGE_S_FOR_CALIBRATION]
        est = sum(e for e, _ in pairs)
        act = sum(a for _, a in pairs)
        return act / est if est > 0 and act > 0 else None


def duration_words(seconds: float | None) -> str:
    """'about 40 seconds', 'about 12 minutes', 'about 2.5 hours' ('' for None)."""
    if seconds is None:
        return ""
    if seconds < 90:
        return f"about {max(seconds, 1):.0f} seconds"
    if seconds < 5400:
        return f"about {seconds / 60:.0f} minutes"
    return f"about {seconds / 3600:.1f} hours"
