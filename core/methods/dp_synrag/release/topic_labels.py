"""Labels by topic (docs/method.md §6.3, ``[data] label_mode = "topic_labels"``, the default for DP-SynRAG).

DP-SynRAG runs once over all units; then

1. **release** (step 2c, a charged Gaussian stage, ``core.privacy.class_counts.TopicLabelsPlan``): for every
   cluster C_r the vector of its units' label counts over the labels the class-count stage released (public
   by then: the class counts come first). Each unit lies in at most L clusters and carries at most one label,
   so one unit changes at most L entries of the R × |labels| matrix by 1: L2 sensitivity √L. Charged before
   its draw and checkpointed (``topic_labels``): a resume loads it and neither charges nor draws again;
2. **post-processing** (free, ``shape/labels.py``): each synthetic document takes a label from its topic's
   released counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.corpus import Unit
from core.methods.base import MethodContext
from core.methods.dp_synrag.release.clusters import SUPPORT_SIGMAS
from core.privacy.release import run_release

# The R × |labels| noisy counts are released once, saved under the stage's name, never redrawn (the stage's plan
# and the released class counts come in ``ctx.label_stage``: core.privacy.class_counts.TopicLabelStage)


@dataclass(frozen=True)
class ClusterLabels:
    """The released label counts of every cluster (rows: clusters in W's order; columns: ``labels``), and the
    released class shares the documents should follow."""

    labels: tuple[str, ...]
    noisy: np.ndarray
    shares: tuple[float, ...]
    sigma: float = 0.0  # σ_t of every entry (public)

    def holds(self, r: int, sigmas: float = SUPPORT_SIGMAS) -> bool:
        """Whether cluster r's released label counts show that it holds units (post-processing): their noisy total
        clears ``sigmas`` standard deviations of the total's noise, σ_t·√|labels|. Each unit of the cluster adds 1
        to the total, so a cluster of a few dozen units shows here even where its co-keyword votes, spread over
        4|W| noisy candidates, do not (docs/method.md §6.2)."""
        return bool(self.noisy[r].sum() >= sigmas * self.sigma * math.sqrt(len(self.labels)))


def cluster_label_counts(units: Sequence[Unit], clusters: Sequence[Sequence[int]], labels: Sequence[str]) -> np.ndarray:
    """How many units of each cluster carry each label (private: only the noisy release may leave). A unit whose
    label is not among ``labels`` counts nowhere."""
    column = {label: j for j, label in enumerate(labels)}
    counts = np.zeros((len(clusters), len(labels)), dtype=np.float64)
    for r, members in enumerate(clusters):
        for i in members:
            j = column.get(units[i].label)
            if j is not None:
                counts[r, j] += 1.0
    return counts


def check_memberships(clusters: Sequence[Sequence[int]], L: int) -> None:
    """The sensitivity √L holds only if no unit lies in more than L clusters: refuse before any charge if one does."""
    seen: dict[int, int] = {}
    for members in clusters:
        for i in set(members):
            seen[i] = seen.get(i, 0) + 1
    if seen and max(seen.values()) > L:
        raise ValueError(f"a unit lies in {max(seen.values())} clusters, more than the L = {L} the stage is planned for")


def _exact(units: Sequence[Unit], clusters: Sequence[Sequence[int]], labels: Sequence[str], L: int) -> np.ndarray:
    check_memberships(clusters, L)
    return cluster_label_counts(units, clusters, labels)


def release_cluster_labels(units: Sequence[Unit], clusters: Sequence[Sequence[int]], ctx: MethodContext
                           ) -> ClusterLabels | None:
    """Step 2c: the checkpoint, or charge, then N(0, σ_t²) on every entry (None without the stage)."""
    stage = ctx.label_stage
    if stage is None or not stage.counts.labels:  # no label released: nothing to count (and nothing charged)
        return None
    release, labels = stage.plan.release(), stage.counts.labels

    def load(saved: Any) -> np.ndarray:
        return np.asarray(saved, dtype=np.float64).reshape(len(clusters), len(labels))

    noisy = run_release(
        release, ctx, lambda: _exact(units, clusters, labels, stage.plan.L),
        noise=lambda exact: release.noise(exact, ctx.test_rng()), dump=lambda out: out.tolist(), load=load,
        detail=f"{len(clusters)} clusters x {len(labels)} labels",
    )
    shares = stage.counts.shares()
    return ClusterLabels(tuple(labels), noisy, tuple(shares.get(label, 0.0) for label in labels), stage.plan.sigma)


