"""One DP release (docs/method.md §1): what a stage draws, what it costs, and the one way it runs.

A :class:`Release` declares a stage's mechanism, its sensitivity, its noise σ or ε, its parallel
factor (L when it runs once on each of overlapping subsets) and its plain description, and carries
its privacy map (:meth:`Release.event`, the accountant's formula for its mechanism): ``rho``, the
stage's cost, is computed from those parameters, never stored beside them. A plan is a list of
releases: the accountant (:func:`accountant_of`), the ledger's charge (:meth:`Release.charge`), the
record's stage rows and the certificate all read that list, so what is planned, charged and certified cannot disagree.

:func:`run_release` is how every stage with one checkpoint runs: its checkpointed output (already
charged, so nothing is charged or drawn again), or compute → charge → noise → save. ``compute`` is
the exact statistic (it draws nothing and releases nothing; a run cancelled there is charged
nothing); the charge comes before the first draw, and a checkpoint means "charged and released".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np

from core.privacy.accountant import (
    Accountant,
    PrivacyEvent,
    bounded_range_event,
    gaussian_event,
    sparse_histogram_event,
)
from core.privacy.gaussian import gaussian_noise

GAUSSIAN = "gaussian"
BOUNDED_RANGE = "bounded_range"
SPARSE_HISTOGRAM = "gaussian_sparse_histogram"

class Charge(Protocol):
    """charge(stage, rho, words, delta_part): records the spend in the ledger before the stage draws;
    ``delta_part`` is the δ an (ε, δ) stage (a sparse histogram) spends outright, 0 for the others."""

    def __call__(self, stage: str, rho: float, description: str, delta_part: float = 0.0) -> None: ...


@dataclass(frozen=True)
class Release:
    """One DP stage of a plan: its mechanism and the parameters its privacy map reads (:meth:`event`); ``rho``,
    the stage's total (count and parallel factor included), is computed from them, never stored.

    ``description`` is the record's and the certificate's plain words; ``ledger_words`` the ledger
    row's (with the derived noise parameters). ``sensitivity`` is the L2 sensitivity of a Gaussian
    release (√K for a sparse histogram of ≤ K items per unit); ``epsilon`` the ε of a bounded-range one.
    """

    stage: str
    mechanism: str
    description: str
    ledger_words: str
    sensitivity: float = 1.0
    sigma: float = math.inf
    epsilon: float = 0.0
    count: int = 1
    parallel: int = 1
    delta: float = 0.0  # the δ an (ε, δ) stage adds (sparse histogram)
    threshold: float = math.inf  # release threshold of a sparse histogram
    items_per_unit: int = 0  # K of a sparse histogram
    checkpoint: str = ""  # the run folder's name for the released output ("": the stage's name)
    clip: float = 0.0  # c of a token stage: logits clipped to c at temperature τ make each token (2c/τ)-bounded-range

    def event(self, parallel: int | None = None) -> PrivacyEvent:
        """The stage's privacy map: its event, whose ρ follows from the mechanism's parameters (Δ and σ, ε, or
        K and σ); ``parallel`` evaluates it on fewer overlapping subsets than the plan's L."""
        groups = self.parallel if parallel is None else parallel
        if self.mechanism == GAUSSIAN:
            return gaussian_event(self.stage, self.sensitivity, self.sigma, self.count, groups, self.description)
        if self.mechanism == BOUNDED_RANGE:
            return bounded_range_event(self.stage, self.epsilon, self.count, groups, self.description)
        if self.mechanism == SPARSE_HISTOGRAM:
            if self.count != 1 or groups != 1:
                raise ValueError(f"stage {self.stage!r}: a sparse histogram is one release on the whole corpus")
            return sparse_histogram_event(
                self.stage, self.items_per_unit, self.sigma, self.delta, self.threshold, self.description
            )
        raise ValueError(f"unknown mechanism {self.mechanism!r}")

    @property
    def key(self) -> str:
        """The checkpoint the stage's released output is saved under (a resume reads it, old runs' too)."""
        return self.checkpoint or self.stage

    @property
    def rho(self) -> float:
        """The stage's ρ (its privacy map's), what the ledger charges and the certificate states."""
        return self.event().total_rho

    def record(self, acc: Accountant) -> None:
        """Record the stage's event (its privacy map) in ``acc`` (the plan's accountant)."""
        acc.record(self.event())

    def charge(self, charge: Charge, parallel: int | None = None, detail: str = "") -> None:
        """Charge the stage's ρ (its map's; on ``parallel`` overlapping groups for a resume that redraws fewer
        than the plan's L); ``detail`` adds what only the run knows (how many clusters) to the ledger row's words."""
        words = f"{self.ledger_words}, {detail}" if detail else self.ledger_words
        charge(self.stage, self.event(parallel).total_rho, words, delta_part=self.delta)

    def noise(self, values: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """``values`` + N(0, σ²) on every coordinate, same shape (the Gaussian mechanism of this stage;
        OpenDP's exact sampler unless ``rng``, which only the test mode passes)."""
        if self.mechanism != GAUSSIAN:
            raise ValueError(f"stage {self.stage!r} is not a Gaussian release")
        array = np.asarray(values, dtype=np.float64)
        noisy = gaussian_noise(array.ravel(), self.sigma, rng=rng, sensitivity=self.sensitivity)
        return np.asarray(noisy).reshape(array.shape)


def accountant_of(releases: Sequence[Release]) -> Accountant:
    """The events a run with this plan records, in stage order."""
    acc = Accountant()
    for release in releases:
        release.record(acc)
    return acc


def per_stage(releases: Sequence[Release]) -> dict[str, float]:
    """The plan's ρ per stage, in stage order."""
    return {r.stage: r.rho for r in releases}


def find(releases: Sequence[Release], stage: str) -> Release:
    """The release of ``stage`` in a plan."""
    for release in releases:
        if release.stage == stage:
            return release
    raise KeyError(f"the plan has no stage {stage!r}")


class CheckpointStore(Protocol):
    def has(self, name: str) -> bool: ...

    def load(self, name: str) -> Any: ...

    def save(self, name: str, value: Any) -> None: ...


class StageContext(Protocol):
    """What a stage needs from the method's context: the ledger's charge and the run's checkpoints."""

    @property
    def charge(self) -> Charge: ...

    @property
    def checkpoints(self) -> CheckpointStore: ...


class _NothingKept:
    """The checkpoints of a stage whose output is never reused: nothing is found, nothing is kept."""

    def has(self, name: str) -> bool:
        return False

    def load(self, name: str) -> Any:
        raise KeyError(name)

    def save(self, name: str, value: Any) -> None:
        return None


NOTHING_KEPT: CheckpointStore = _NothingKept()


@dataclass(frozen=True)
class Unkept:
    """The context of a stage that is charged and drawn on every run and never checkpointed (RPSG's selection:
    its candidates are written afresh by each run, so an earlier run's choice among them means nothing)."""

    charge: Charge
    checkpoints: CheckpointStore = NOTHING_KEPT


Exact = TypeVar("Exact")
Released = TypeVar("Released")


def run_release(
    stages: Release | Sequence[Release],
    ctx: StageContext,
    compute: Callable[[], Exact],
    noise: Callable[[Exact], Released],
    dump: Callable[[Released], Any] = lambda out: out,
    load: Callable[[Any], Released] = lambda saved: saved,
    detail: str = "",
) -> Released:
    """The stage's released output: its checkpoint (``Release.key``), or compute → charge → noise → save.

    Every release in ``stages`` is charged (several when one output is two mechanisms, e.g. a noisy
    centre and a threshold per cluster, which then name one checkpoint) after the exact statistic is
    computed and before ``noise`` draws anything.
    """
    releases = [stages] if isinstance(stages, Release) else list(stages)
    keys = {release.key for release in releases}
    if len(keys) != 1:
        raise ValueError(f"one output is saved under one checkpoint, not {sorted(keys)}")
    (key,) = keys
    if ctx.checkpoints.has(key):
        return load(ctx.checkpoints.load(key))
    exact = compute()
    for stage in releases:
        stage.charge(ctx.charge, detail=detail)
    released = noise(exact)
    ctx.checkpoints.save(key, dump(released))
    return released


def checkpointed(ctx: StageContext, key: str, compute: Callable[[], Any]) -> Any:
    """A step that draws no private randomness but must not change on a resume (public texts,
    random batches): its checkpoint, or computed now and saved."""
    if ctx.checkpoints.has(key):
        return ctx.checkpoints.load(key)
    value = compute()
    ctx.checkpoints.save(key, value)
    return value
