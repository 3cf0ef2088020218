"""What every method shares: the Method protocol, its context and its results (docs/method.md §1.7).

The pipeline drives every method through :class:`Method`; a method receives a :class:`MethodContext`
(models, the charge callback, checkpoints, test-mode randomness) and returns :class:`SyntheticDoc` s.
:class:`PlanSummary` is what a run would spend, shown before anything is charged."""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Iterable
from typing import Protocol

import numpy as np

from core.common.checkpoints import Checkpoints
from core.corpus import Corpus
from core.methods.compute_backend import LOCAL, ComputeBackend
from core.models.base import Embedder, LanguageModel
from core.privacy.accountant import PrivacyEvent
from core.privacy.class_counts import TopicLabelStage
from core.privacy.conversion import approx_rho_to_eps
from core.privacy.forecast import TopicForecast
from core.privacy.mechanisms import SAMPLER_DESCRIPTIONS, TokenSampler
from core.privacy import release
from core.privacy.randomness import secure_rng, test_mode_rng, test_mode_torch_generator
from core.common.progress import Reporter
from core.specs.runspec import RunSpec

COMMON_NOTES = (
    "Randomness: every noise draw and every sampled token comes from the operating system's entropy "
    "source; no seed is recorded.",
)


MethodOutput = tuple[list["SyntheticDoc"], dict[str, int], list[str]]
"""What ``Method.run`` returns: the synthetic documents, private diagnostics (on screen only), notes."""


class Method(Protocol):
    name: str

    def plan_summary(self, spec: RunSpec, delta: float, n_units: int) -> PlanSummary: ...

    def run(self, corpus: Corpus, spec: RunSpec, delta: float, ctx: MethodContext) -> MethodOutput: ...

    def record_stages(self, spec: RunSpec, delta: float) -> list[dict]: ...

    def parameters(self, spec: RunSpec, summary: PlanSummary) -> dict: ...

    def samplers(self) -> list[str]: ...


def stages_from_events(events: Iterable[PrivacyEvent]) -> list[dict]:
    return [
        {
            "stage": e.stage,
            "mechanism": e.mechanism,
            "rho": e.total_rho,
            "count": e.count,
            "parallel": e.parallel_multiplier,
            "parameters": dict(e.parameters),
            "description": e.description,
            **({"delta": e.delta} if e.delta else {}),
        }
        for e in events
    ]


def sampler_descriptions(*keys: str) -> list[str]:
    return [SAMPLER_DESCRIPTIONS[k] for k in keys if k in SAMPLER_DESCRIPTIONS]


@dataclass
class PlanSummary:
    """What a run would spend, shown before anything is charged (no private text)."""

    method: str
    epsilon: float
    delta: float
    rho_total: float
    stages: list[tuple[str, float]]
    derived: dict[str, float]
    warnings: list[str]
    n_units: int  # shown on screen only; never exported
    estimate_seconds: float | None = None
    estimate_memory_mb: float | None = None
    end_to_end_dp: bool = True
    dataset_name: str = ""  # the name the data are budgeted under in the ledger (on screen)
    delta_spent: float = 0.0  # the part of δ spent by (ε, δ) stages (phrase discovery); the rest is the conversion's
    topic_forecast: TopicForecast | None = None  # expected topics (DP-SynRAG; core.privacy.forecast; on screen)
    forecast_advice: tuple[str, ...] = ()  # what would help when about 0 topics are expected
    # The forecast at the custodian's stated public upper bound on the units (core.run.planning.spending_gate), the
    # only one that may refuse a run (SPEC §6: never the true count); None when no bound is stated.
    gate_forecast: TopicForecast | None = None
    budget_outlook: tuple[str, ...] = ()  # the dataset's total after this run, and a cap refusal (core.run.planning)
    # The method's settings as the adaptive default is expected to choose them for this corpus (DP-SynRAG: R
    # and k from the custodian's own count of units; on screen only, the run chooses from its DP size count).
    expected_settings: object | None = None
    # How many times slower than the built-in speed figures' computer this one ran a short public workload when
    # the plan was made (core.run.machine_speed; the estimate's CPU speeds are divided by it).
    busy_factor: float = 1.0

    @property
    def documents_range(self) -> tuple[int, int] | None:
        """How many documents the run is expected to write (DP-SynRAG's forecast), or None when unknown."""
        return None if self.topic_forecast is None else self.topic_forecast.documents_range

    @property
    def documents_words(self) -> str | None:
        """The same forecast in words (``TopicForecast.documents_words``), or None when unknown."""
        return None if self.topic_forecast is None else self.topic_forecast.documents_words()

    @property
    def spends_for_nothing(self) -> bool:
        """About 0 topics are expected at the loaded count: the run would spend its budget and release nothing a
        public model could not write. On screen only (a warning); whether a run is refused is
        ``needs_spend_anyway``'s, from public values."""
        return self.topic_forecast is not None and self.topic_forecast.about_zero

    @property
    def needs_spend_anyway(self) -> bool:
        """The run is refused unless the custodian says spend anyway: about 0 topics are expected even at the
        stated public bound on the units (``gate_forecast``). Decided from public values only: the on-screen
        forecast at the loaded count (``spends_for_nothing``) warns but never refuses."""
        return self.gate_forecast is not None and self.gate_forecast.about_zero

    @property
    def epsilon_loose(self) -> float:
        """The seed's looser conversion of the same rho, shown for comparison."""
        return approx_rho_to_eps(self.rho_total, self.delta, self.delta_spent, "loose")


Charge = release.Charge  # charge(stage, rho, description, delta_part=0.0), before the stage draws


@dataclass
class SyntheticDoc:
    id: str
    text: str
    group: int
    label: str = ""  # with a label column: the class it was synthesised for (core.methods.class_conditional)


@dataclass
class MethodContext:
    """Everything a method needs besides the units. Built by ``core.run.pipeline``.

    ``test_seed`` is set only in the explicit non-private test mode (export refused);
    otherwise every mechanism draws from OS entropy and nothing is seeded.
    """

    llm: LanguageModel
    embedder: Embedder
    task: str
    charge: Charge
    reporter: Reporter
    checkpoints: Checkpoints
    test_seed: int | None = None
    max_prompt_tokens: int = 256
    batch_rows: int = 256
    compute: ComputeBackend = LOCAL  # where the model work runs (core.methods.compute_backend): here, or Ray's
    # [data] label_mode = "topic_labels": DP-SynRAG releases every cluster's label counts (its step 2c) and labels
    # each document from them (core.methods.dp_synrag.release.topic_labels); None = no such stage
    label_stage: TopicLabelStage | None = None
    _test_rng: np.random.Generator | None = field(default=None, repr=False)

    def test_rng(self) -> np.random.Generator | None:
        """The seeded generator of the test mode, or None (mechanisms then use OS entropy)."""
        if self.test_seed is None:
            return None
        if self._test_rng is None:
            self._test_rng = test_mode_rng(self.test_seed)
        return self._test_rng

    def rng(self) -> np.random.Generator:
        """A generator for non-mechanism randomness (e.g. random batches)."""
        return self.test_rng() or secure_rng()

    def token_sampler(self, tau: float) -> TokenSampler:
        generator = None
        if self.test_seed is not None:
            generator = test_mode_torch_generator(self.test_seed, self.llm.device)
        return TokenSampler(tau, generator)
