"""The class counts of a label column, released with Gaussian noise (docs/method.md §6.3).

Each unit carries at most one label (``core.corpus.labels``), so adding or removing one unit changes one
class count by 1: the count vector has L2 sensitivity 1.

* **Typed labels** (``[data] labels``, public): every typed label's count gets N(0, σ²), zeros included; a
  Gaussian mechanism with ρ_c = 1/(2σ²).
* **Labels not typed**: the labels themselves must be released with DP, by the DP set union of phrase
  discovery (``core.privacy.set_union``) with one item per unit: noise on every non-zero count, a label is
  released (with its noisy count) only above τ. It is δ_c-approximately ρ_c-zCDP with ρ_c = 1/(2σ²) and
  δ_c = Φ̄((τ − 1)/σ), a share ``LABELS_DELTA_FRACTION`` of the run's δ; the run converts at δ − δ_c − δ_p.

The stage takes ``LABEL_SHARE`` of the run's ρ; the method's own stages get the rest
(``core.methods.class_conditional``). What follows from the released counts (which classes are synthesised,
how many documents each keeps) is post-processing.

**Topic label counts** (``[data] label_mode = "topic_labels"``, DP-SynRAG; ``core.methods.topic_labelled``):
for every cluster C_r the vector of its units' label counts, over the labels the class-count stage released
(public by then). Each unit lies in at most L clusters and carries at most one label, so adding or removing
one unit changes at most L entries of the R × |labels| matrix, by 1 each: L2 sensitivity √L, and N(0, σ_t²)
on every entry (zeros included) costs ρ_t = L/(2σ_t²). The stage takes ``TOPIC_LABEL_SHARE`` of the run's ρ.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.privacy.mechanisms import gaussian_sparse_histogram
from core.privacy.release import GAUSSIAN, SPARSE_HISTOGRAM, Release
from core.privacy.set_union import release_threshold

STAGE_CLASS_COUNTS = "class_counts"
STAGE_TOPIC_LABELS = "topic_labels"
TOPIC_LABEL_SHARE = 0.05  # the topic label counts' share of the run's ρ (label_mode "topic_labels")
LABEL_SHARE = 0.02  # the class counts' share of the run's ρ (σ ≈ 4.1 at ε = 10, 9.2 at ε = 4; δ = 1e-6)
LABELS_DELTA_FRACTION = 0.1  # the label set union's share of δ, when the labels are not typed


@dataclass(frozen=True)
class ClassCountsPlan:
    """The class-count stage of a run: its ρ, σ and, for labels not typed, its release threshold and δ."""

    rho: float
    sigma: float
    typed: tuple[str, ...]  # the public labels; () when they are released by the set union
    delta: float = 0.0  # δ_c of the set union (0 for typed labels)
    tau: float = math.inf  # release threshold of the set union

    def release(self) -> Release:
        """The stage as the plan, the ledger and the certificate read it."""
        if self.typed:
            return Release(
                STAGE_CLASS_COUNTS, GAUSSIAN,
                f"How many units carry each of the {len(self.typed)} typed labels, with Gaussian noise (each unit "
                "has one label, so one unit changes one count by 1: sensitivity 1); the classes are synthesised "
                "apart and keep documents in proportion to these counts.",
                f"class counts of {len(self.typed)} typed labels, sigma={self.sigma:.4g} (sensitivity 1)",
                sensitivity=1.0, sigma=self.sigma,
            )
        return Release(
            STAGE_CLASS_COUNTS, SPARSE_HISTOGRAM,
            "The labels and how many units carry each, released by a DP set union (each unit proposes its one "
            "label; Gaussian noise on every count; a label is released only when its noisy count clears a "
            f"threshold); besides rho it spends delta={self.delta:.3g} of delta, the largest chance that a label "
            "carried by one unit alone is released.",
            f"labels and class counts (set union), sigma={self.sigma:.4g}, released above tau={self.tau:.4g} "
            f"(delta={self.delta:.3g})",
            sensitivity=1.0, sigma=self.sigma, delta=self.delta, threshold=self.tau, items_per_unit=1,
        )


def labels_delta(delta: float, typed: Sequence[str]) -> float:
    """δ_c: the part of the run's δ the label set union spends (0 when the labels are typed)."""
    return 0.0 if typed else LABELS_DELTA_FRACTION * delta


def plan_class_counts(rho: float, delta_c: float, typed: Sequence[str]) -> ClassCountsPlan:
    """The stage that spends ``rho`` (and ``delta_c`` when the labels are not typed)."""
    sigma = math.sqrt(1.0 / (2.0 * rho))
    if typed:
        return ClassCountsPlan(rho, sigma, tuple(typed))
    return ClassCountsPlan(rho, sigma, (), delta_c, release_threshold(sigma, 1, delta_c))


@dataclass(frozen=True)
class ClassCounts:
    """The released labels and their noisy counts (DP outputs), in label order."""

    labels: tuple[str, ...]
    noisy: tuple[float, ...]

    def as_dict(self) -> dict[str, float]:
        return dict(zip(self.labels, self.noisy))

    def shares(self) -> dict[str, float]:
        """Each label's share of the released counts (negative counts as 0): post-processing."""
        clipped = {label: max(0.0, n) for label, n in zip(self.labels, self.noisy)}
        total = sum(clipped.values())
        if total <= 0.0:
            return {label: 1.0 / len(clipped) for label in clipped} if clipped else {}
        return {label: n / total for label, n in clipped.items()}


def exact_counts(unit_labels: Sequence[str], typed: Sequence[str]) -> dict[str, int]:
    """How many units carry each label (typed: every typed label, zeros included; else the labels present).
    Private: only the noisy release may leave."""
    counted = Counter(label for label in unit_labels if label)
    if typed:
        return {label: counted.get(label, 0) for label in typed}
    return dict(counted)


def noisy_counts(plan: ClassCountsPlan, exact: dict[str, int], rng: np.random.Generator | None = None) -> ClassCounts:
    """The release: Gaussian noise on the typed labels' counts, or the set union (``rng``: test mode only)."""
    if plan.typed:
        values = np.asarray([float(exact[label]) for label in plan.typed])
        noisy = plan.release().noise(values, rng)
        return ClassCounts(plan.typed, tuple(float(v) for v in noisy))
    released = gaussian_sparse_histogram(exact, plan.sigma, plan.tau, 1, rng)
    return ClassCounts(released.items, released.noisy_counts)


@dataclass(frozen=True)
class TopicLabelsPlan:
    """The topic-label stage: every cluster's label counts with N(0, σ²) on each entry (L2 sensitivity √L)."""

    rho: float
    sigma: float
    L: int  # clusters per unit at most (public)

    def release(self) -> Release:
        return Release(
            STAGE_TOPIC_LABELS, GAUSSIAN,
            f"How many units of each topic's cluster carry each label, with Gaussian noise on every count of every "
            f"cluster at once (each unit is in at most {self.L} clusters and has one label, so one unit changes at "
            f"most {self.L} counts by 1: sensitivity sqrt({self.L})); each synthetic document takes its label from "
            "its topic's released counts.",
            f"label counts of every cluster, sigma={self.sigma:.4g} (sensitivity sqrt({self.L}))",
            sensitivity=math.sqrt(self.L), sigma=self.sigma,
        )


def plan_topic_labels(rho: float, L: int) -> TopicLabelsPlan:
    """The topic-label stage that spends ``rho``: σ = √(L / (2ρ))."""
    if rho <= 0 or L < 1:
        raise ValueError("the topic-label stage needs rho > 0 and L >= 1")
    return TopicLabelsPlan(rho, math.sqrt(L / (2.0 * rho)), int(L))


@dataclass(frozen=True)
class TopicLabelStage:
    """What the topic-label stage needs at run time: its plan, and the released labels with their noisy class
    counts (the class-count stage runs first: the label vector's coordinates must be public)."""

    plan: TopicLabelsPlan
    counts: ClassCounts
