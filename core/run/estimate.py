"""How long a run will take: the work it does (units, R, k, T, K, L, model size) over this computer's speed.

``estimate(spec, n_units)`` splits a run into its stages and prices each one in model rows × tokens
(each method's stages and their work are in its package: ``core.specs.method_catalogue.MethodFacts.work``,
called with this module's ``_Speeds``).
The speed is a built-in figure for the packaged SmolLM2 on 2 idle CPU cores (the realised writer priced per
batch, not per row), scaled by model size and by a speed test taken when the plan is made, multiplied per
stage by the factor measured on this computer for the same kind of device and model in earlier runs
(``calibration.json`` in the data folder: one factor per stage, and one for the whole run for stages not
measured yet). During a run, ``EtaTracker``
refines the time left from the stages already done (how much slower or faster than planned they ran)
and from the current stage's own progress, counting down between events (per group and per token
step); it records the measured factors for the next estimate. Estimates never look at document text;
only counts enter. ``bench/estimate.py`` measures estimate ÷ actual (docs/bench/estimate.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.specs import method_catalogue
from core.run.calibration import clamp_factor, calibration_key, load_calibration

# The built-in figures: the packaged SmolLM2-135M and MiniLM on the 2-core development machine, idle, torch's
# default two threads, measured on 2026-12-04 beside the speed test's reference rate
# (core.run.machine_speed.REFERENCE_ROUNDS_S); every CPU figure is divided by the speed test's slowdown at plan time.
# The private-prediction engine: 171 row-tokens/s with prefill, 48 rows x 32 tokens after ~160-token prompts
# (bench/private_prediction.py --skip llamacpp,naive,dp_rag_style), which these two figures reproduce.
CPU_PREFILL_TOKENS_S = 2000.0  # prompt tokens per second
CPU_DECODE_ROW_TOKENS_S = 290.0  # generated row-tokens per second
CPU_EMBED_UNITS_S = 90.0  # documents embedded per second by the packaged MiniLM (200 documents of ~45 words: 96/s)
# The realised writer prices batches, not rows: a decoding step of a batch of r rows takes WRITER_STEP_S +
# r x WRITER_ROW_STEP_S, prefill included (the writer's batch of bench/realisation.py, 80 tokens: 1 row 2.4-3.3 s,
# 16 rows 9.9 s, 24 rows 11.7 s). A full batch of 16 costs about a fifth per row of what a batch of one does.
WRITER_STEP_S = 0.029
WRITER_ROW_STEP_S = 0.0059
GPU_SPEEDUP = 40.0
REFERENCE_MODEL_BYTES = 270e6  # SmolLM2-135M in 16-bit
MODEL_LOAD_S_PER_GB = 8.0
MIN_STAGE_S_FOR_CALIBRATION = 5.0  # stages shorter than this say little about speed
TRUST_RATE_AFTER = 0.1  # share of a stage after which its own rate alone says how long it takes
NOT_COMPUTE = frozenset({"models"})  # stages whose speed is not the model's (start-up, loading weights)
# Start-up of the run process (imports, tokenizers, both packaged models) before the weights' size counts: 19 s
# in a run of a 200-note file on the idle machine (bench/estimate.py --cases clinic-200, one torch thread).
MODEL_LOAD_BASE_S = 15.0


@dataclass(frozen=True)
class Estimate:
    """Seconds per stage in run order, and what the speed figure is based on. ``raw`` holds the same stages
    before this computer's calibration (what a measured time is compared with to calibrate the next run)."""

    stages: list[tuple[str, float]]
    basis: str
    raw: list[tuple[str, float]] = field(default_factory=list)
    items: dict[str, float] = field(default_factory=dict)  # planned work items per stage (groups, units)

    @property
    def total_s(self) -> float:
        return sum(s for _, s in self.stages)

    def to_dict(self) -> dict[str, Any]:
        return {"stages": [list(p) for p in self.stages], "basis": self.basis, "raw": [list(p) for p in self.raw],
                "items": dict(self.items)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Estimate:
        return cls([(str(s), float(v)) for s, v in data.get("stages", [])], str(data.get("basis", "")),
                   [(str(s), float(v)) for s, v in data.get("raw", [])],
                   {str(s): float(v) for s, v in dict(data.get("items", {})).items()})


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


@dataclass(frozen=True)
class _Speeds:
    """This computer's assumed speeds for the chosen model, and the prompt length a stage is costed at."""

    prefill: float  # prompt tokens per second
    decode: float  # row tokens per second
    embed: float  # units embedded per second
    prompt: int  # tokens of a typical prompt
    step: float = WRITER_STEP_S  # seconds of one decoding step of a writer's batch, whatever its rows
    row_step: float = WRITER_ROW_STEP_S  # seconds each row adds to that step
    busy: float = 1.0  # how many times slower than the built-in figures' computer plain CPU work runs now

    def llm(self, prompt_tokens: float, row_tokens: float) -> float:
        return prompt_tokens / self.prefill + row_tokens / self.decode

    def batches(self, rows: Sequence[float], tokens: int) -> float:
        """Seconds for the writer to decode batches of these many rows, ``tokens`` steps each."""
        return sum(tokens * (self.step + self.row_step * r) for r in rows if r > 0)

    def cpu(self, seconds: float) -> float:
        """Work with no model (counting, masking) that takes ``seconds`` on the built-in figures' computer."""
        return seconds * self.busy


def estimate(spec: Any, n_units: int, model_bytes: float | None = None, calibrate: bool = True,
             topics: float | None = None, busy: float = 1.0) -> Estimate:
    """Seconds per stage of a run of ``spec`` on ``n_units`` units; ``topics``: the documents DP-SynRAG is
    expected to write (``core.run.planning.run_estimate`` passes its forecast), else R; ``busy``: how many times
    slower than the built-in figures' computer this one is now (``core.run.machine_speed.busy_factor``)."""
    size = model_bytes if model_bytes is not None else _model_bytes(spec)
    slow = max(size / REFERENCE_MODEL_BYTES, 0.25) * busy  # bigger models: proportionally slower per token
    speedup = GPU_SPEEDUP if spec.llm.device.startswith("cuda") else 1.0
    speeds = _Speeds(
        CPU_PREFILL_TOKENS_S * speedup / slow, CPU_DECODE_ROW_TOKENS_S * speedup / slow,
        CPU_EMBED_UNITS_S * speedup / busy,
        min(spec.writing.max_prompt_tokens, 200), WRITER_STEP_S * slow / speedup, WRITER_ROW_STEP_S * slow / speedup,
        busy,
    )
    factor, per_stage = 1.0, {}
    basis = "built-in speed figures for this kind of computer (no run with this model measured here yet)"
    if abs(busy - 1.0) >= 0.25:
        basis = (f"built-in speed figures for this kind of computer, scaled by a speed test just now (this computer "
                 f"ran it {_times(busy)} the reference one; no run with this model measured here yet)")
    measured = load_calibration(calibration_key(spec)) if calibrate else None
    if measured is not None:
        factor, per_stage = measured.factor, measured.stages
        basis = f"the speed measured on this computer in earlier runs with this model ({measured.measured_at[:10]})"
        if abs(busy - 1.0) >= 0.25:
            basis += f", and a speed test just now ({_times(busy)} the reference computer)"
    n = max(int(n_units), 0)
    stages: list[tuple[str, float]] = [("models", (MODEL_LOAD_BASE_S + MODEL_LOAD_S_PER_GB * size / 1e9) * busy)]
    facts = method_catalogue.facts(spec.method)  # each method's work model is in its package
    stages += facts.work(spec, n, speeds, topics)
    items = {"keywords": float(n), "embedding": float(n)}
    groups = facts.work_groups(spec, topics)
    if groups is not None:  # the per-document stages count groups (DP-SynRAG: one per topic), not units
        items.update(private_prediction=groups, self_filter=groups, realisation=groups)
    return Estimate([(s, float(v) * per_stage.get(s, factor)) for s, v in stages], basis,
                    [(s, float(v)) for s, v in stages], items)


def _times(busy: float) -> str:
    return f"{busy:.1f}× slower than" if busy >= 1 else f"{1 / busy:.1f}× faster than"


@dataclass
class EtaTracker:
    """Refines the time left from progress events (``ProgressEvent.to_dict()`` dicts).

    A finished stage, and the current one once a tenth of it is done, tell how much slower or faster than
    estimated this computer is (the factor applied to the stages still to come); the current stage's time
    left blends its estimate with its own rate, trusting the rate alone after a tenth of the stage, and
    counts down between events. A stage that starts
    marks every earlier planned stage that never reported as done (skipped, or finished before a resume).
    A stage still running once its estimate is used up is said to take "a little longer than planned"
    (:meth:`stage_words`, :meth:`run_words`), never a frozen "about 1 second".
    """

    estimate: Estimate
    clock: Callable[[], float] = time.monotonic
    _started: dict[str, float] = field(default_factory=dict)
    _actual: dict[str, float] = field(default_factory=dict)
    _skipped: set[str] = field(default_factory=set)
    _progress: dict[str, tuple[float, float]] = field(default_factory=dict)  # stage -> (fraction done, when)
    _current: str = ""
    _finished: bool = False
    _totals: dict[str, int] = field(default_factory=dict)  # work items each stage reported (e.g. its groups)

    def update(self, event: dict[str, Any]) -> None:
        stage, kind, now = str(event.get("stage", "")), event.get("kind"), self.clock()
        if kind == "stage_start":
            self._started[stage] = now
            self._actual.pop(stage, None)
            self._progress.pop(stage, None)
            self._current = stage
            self._skip_before(stage)
        if kind in ("stage_start", "progress") and int(event.get("total", 0) or 0) > 0:
            self._totals[stage] = int(event["total"])
        if kind == "progress" and stage in self._started:
            fraction = event.get("fraction")
            if fraction is None:
                done, total = int(event.get("done", 0)), int(event.get("total", 0))
                fraction = done / total if total > 0 else 0.0
            self._progress[stage] = (min(max(float(fraction), 0.0), 1.0), now)
            self._current = stage
        elif kind == "stage_end" and stage in self._started:
            self._actual[stage] = now - self._started[stage]
            if self._current == stage:
                self._current = ""
        elif kind == "done" and stage == "run":
            self._finished = True

    def started(self, stage: str) -> bool:
        return stage in self._started

    @property
    def refined(self) -> bool:
        """True once this run's own progress has entered the figure (a stage finished or reported progress)."""
        return bool(self._actual or self._progress)

    def _skip_before(self, stage: str) -> None:
        order = [s for s, _ in self.estimate.stages]
        if stage not in order:
            return
        for earlier in order[: order.index(stage)]:
            if earlier not in self._started:
                self._skipped.add(earlier)

    def _planned(self) -> dict[str, float]:
        """Each stage's estimate, rescaled once the stage says how many items it really has (the topics that
        cleared the noise are known only when private prediction starts)."""
        planned = dict(self.estimate.stages)
        return {stage: seconds * self._scale(stage) for stage, seconds in planned.items()}

    def _scale(self, stage: str) -> float:
        expected = self.estimate.items.get(stage, 0.0)
        total = self._totals.get(stage)
        return total / expected if total is not None and expected > 0 else 1.0

    def factor(self) -> float:
        """Measured ÷ estimated time over the stages long enough to say something (1.0 before any)."""
        planned = self._planned()
        est = act = 0.0
        for stage, seconds in self._actual.items():
            if stage in NOT_COMPUTE:  # loading says nothing about how fast the model computes
                continue
            if stage in planned and max(planned[stage], seconds) >= MIN_STAGE_S_FOR_CALIBRATION:
                est += planned[stage]
                act += seconds
        stage = self._current
        fraction, when = self._progress.get(stage, (0.0, 0.0))
        if stage in planned and stage not in NOT_COMPUTE and fraction >= TRUST_RATE_AFTER and stage in self._started:
            est += planned[stage] * fraction  # the stage under way says how fast this computer is right now
            act += when - self._started[stage]
        if est <= 0 or act <= 0:
            return 1.0
        return clamp_factor(act / est)

    def stage_remaining_s(self, stage: str) -> float | None:
        """Seconds left in one stage (0 when done, None when it is not part of the estimate and not running)."""
        if stage in self._actual or stage in self._skipped or self._finished:
            return 0.0
        planned = self._planned().get(stage)
        if stage not in self._started:
            return None if planned is None else planned * self.factor()
        now = self.clock()
        elapsed = now - self._started[stage]
        expected = (planned or 0.0) * self.factor()
        fraction, when = self._progress.get(stage, (0.0, now))
        if fraction > 0.0:
            at_event = when - self._started[stage]
            measured = at_event / fraction  # the whole stage at the rate seen so far
            trust = 1.0 if planned is None else min(fraction / TRUST_RATE_AFTER, 1.0)
            expected = trust * measured + (1.0 - trust) * expected
        elif planned is None:
            return None
        return max(expected - elapsed, 0.0)

    def running(self, stage: str) -> bool:
        """Whether ``stage`` has started and not ended (and the run is not done)."""
        return stage in self._started and stage not in self._actual and not self._finished

    def overdue(self, stage: str) -> bool:
        """``stage`` is still running past its estimate: the estimate is used up, the stage is not done."""
        left = self.stage_remaining_s(stage)
        return self.running(stage) and left is not None and left <= 0.0

    def stage_words(self, stage: str) -> str:
        """The time left of one stage in words: "about 3 minutes left", "done", or, once its estimate is used
        up while it still runs, "a little longer than planned" (never a frozen "about 1 second")."""
        if stage in self._actual or stage in self._skipped or self._finished:
            return "done"
        if self.overdue(stage):
            return LONGER_THAN_PLANNED
        left = self.stage_remaining_s(stage)
        return "" if left is None else f"{duration_words(left)} left"

    def run_words(self) -> str:
        """The whole run's time left in words; while the current stage runs past its estimate, what follows
        it is stated separately ("about 2 minutes left after this stage, which is taking longer than planned")."""
        if self._finished:
            return "finished"
        left = self.remaining_s()
        if self._current and self.overdue(self._current):
            if left < 1.0:
                return LONGER_THAN_PLANNED
            return f"{duration_words(left)} left after this stage, which is taking longer than planned"
        return f"{duration_words(left)} left"

    def remaining_s(self) -> float:
        """Seconds left for the whole run (never negative; 0 once the run is done)."""
        if self._finished:
            return 0.0
        total = 0.0
        for stage, _ in self.estimate.stages:
            total += self.stage_remaining_s(stage) or 0.0
        if self._current and self._current not in self._planned():
            total += self.stage_remaining_s(self._current) or 0.0
        return total

    def _measured(self) -> list[tuple[str, float, float]]:
        """(stage, uncalibrated estimate, measured seconds) of the stages long enough to say something."""
        raw = {s: v * self._scale(s) for s, v in self.estimate.raw} or self._planned()
        return [(s, raw[s], a) for s, a in self._actual.items()
                if s in raw and raw[s] > 0 and max(self._planned().get(s, 0.0), a) >= MIN_STAGE_S_FOR_CALIBRATION]

    def _compute_measured(self) -> list[tuple[str, float, float]]:
        return [m for m in self._measured() if m[0] not in NOT_COMPUTE]

    def finished_factor(self) -> float | None:
        """Measured ÷ uncalibrated estimate over the measured stages (to remember), or None."""
        pairs = self._compute_measured()
        est = sum(e for _, e, _ in pairs)
        act = sum(a for _, _, a in pairs)
        return act / est if est > 0 and act > 0 else None

    def stage_factors(self) -> dict[str, float]:
        """Per stage: measured ÷ uncalibrated estimate (to remember for the next estimate)."""
        return {s: a / e for s, e, a in self._measured()}


LONGER_THAN_PLANNED = "a little longer than planned"  # a stage past its estimate, still running


def duration_words(seconds: float | None) -> str:
    """'about 1 second', 'about 40 seconds', 'about 12 minutes', 'about 2.5 hours' ('' for None)."""
    if seconds is None:
        return ""
    if seconds < 90:
        return "about " + _count(round(max(seconds, 1)), "second")
    if seconds < 5400:
        return "about " + _count(round(seconds / 60), "minute")
    return f"about {seconds / 3600:.1f} hours"


def _count(n: int, unit: str) -> str:
    """'1 second', '2 seconds'."""
    return f"{n} {unit}{'' if n == 1 else 's'}"
