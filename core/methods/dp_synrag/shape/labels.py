"""Labels by topic, step 2 (docs/method.md §6.3): each synthetic document's label from its topic's released label counts.

Post-processing of the counts released by ``release/topic_labels.py`` (step 2c):

Each synthetic document takes a label from its topic's released counts. A
topic stands for one cluster or, merged, several: its counts are summed, then lowered by
``NOISE_SIGMAS`` times their noise's standard deviation (σ_t·√clusters) and clipped at 0, so a label
counts in a topic only where its noisy count clears the noise (the matrix is mostly small counts and
noise: a label spread thinly over a topic would otherwise be written on its documents at random). A
topic's documents are then split among the labels in proportion, by systematic sampling (one uniform draw
per topic from ``ctx.rng()``): each label gets ⌊n·p⌋ or ⌈n·p⌉ of the topic's n documents, n·p on average.
Splitting in proportion keeps a topic's label mix in its documents; the one draw makes a topic of one
document take each label with its probability. A topic with no count left takes the class shares.
With N documents asked (``[dp_synrag] documents`` ≠ 0) the labels come first instead
(:func:`label_allocation`, used by ``corpus_shape.labelled_shape``): the N documents split among the labels by the
released class counts, each label's among the topics by its estimated units there, and every document written
for its label (``write/writer_prompt.labelled_task``). (``core.methods.class_conditional.TopicLabelled`` then keeps,
per label, documents in proportion to the released class counts.)

Everything in step 2 reads released values (the label counts, the class counts, the shape) and synthetic
documents only."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from core.methods.base import MethodContext, SyntheticDoc
from core.methods.dp_synrag.release.topic_labels import ClusterLabels
from core.methods.dp_synrag.shape.released_topics import ReleasedTopic

if TYPE_CHECKING:  # the shape imports this module (labels first, then writing)
    from core.methods.dp_synrag.shape.corpus_shape import CorpusShape

NOISE_SIGMAS = 2.0  # a label counts in a topic only above this many standard deviations of its noise


def topic_weights(shape: CorpusShape, released: ClusterLabels, sigmas: float = NOISE_SIGMAS) -> np.ndarray:
    """Per topic of the shape, its label counts: the sum over the clusters it stands for, less ``sigmas`` times
    the sum's noise (σ_t·√clusters), clipped at 0 (released values and public constants only)."""
    return weights_of(shape.topics, released, sigmas)


def weights_of(topics: Sequence[ReleasedTopic], released: ClusterLabels, sigmas: float = NOISE_SIGMAS) -> np.ndarray:
    """:func:`topic_weights` for a sequence of topics."""
    width = len(released.labels)
    rows = [released.noisy[list(t.clusters)].sum(axis=0) - sigmas * released.sigma * math.sqrt(len(t.clusters))
            if t.clusters else np.zeros(width) for t in topics]
    return np.clip(np.asarray(rows, dtype=np.float64).reshape(len(topics), width), 0.0, None)


def largest_remainders(total: int, weights: Sequence[float] | np.ndarray) -> list[int]:
    """``total`` split in proportion to ``weights`` (negative ones as 0; all 0: equally), by largest remainders
    (ties to the earlier); no minimum per entry."""
    w = np.clip(np.asarray(weights, dtype=np.float64), 0.0, None)
    if len(w) == 0 or total <= 0:
        return [0] * len(w)
    if not w.sum() > 0.0:
        w = np.ones(len(w))
    exact = total * w / w.sum()
    quotas = [math.floor(float(x)) for x in exact]
    order = sorted(range(len(w)), key=lambda i: (-(exact[i] - quotas[i]), i))
    for i in order[: total - sum(quotas)]:
        quotas[i] += 1
    return quotas


def topic_label_estimates(topics: Sequence[ReleasedTopic], released: ClusterLabels,
                          sigmas: float = NOISE_SIGMAS) -> np.ndarray:
    """Per topic and label, how many of the topic's units carry the label, estimated from released values only:
    the label's count where it clears the noise (:func:`weights_of`), plus the topic's units no such count
    explains (its estimated units, ``ReleasedTopic.size``, less those counts, at least 0) shared by the released class shares
    (a label whose count in a topic is lost in the noise is assumed spread like the corpus's labels)."""
    v = weights_of(topics, released, sigmas)
    shares = np.asarray(released.shares, dtype=np.float64).clip(0.0, None)
    shares = shares / shares.sum() if shares.sum() > 0 else np.full(len(shares), 1.0 / max(len(shares), 1))
    counts = np.asarray([max(float(t.size), 0.0) for t in topics], dtype=np.float64)
    residual = np.clip(counts - v.sum(axis=1), 0.0, None) if len(topics) else counts
    return v + np.outer(residual, shares)


def label_allocation(topics: Sequence[ReleasedTopic], released: ClusterLabels, total: int) -> np.ndarray:
    """Labels first (docs/method.md §6.3): ``total`` documents split among the labels in proportion to the
    released class counts, and each label's documents among the topics in proportion to the label's estimated
    units in each (:func:`topic_label_estimates`). A (topics × labels) matrix of document counts; its column
    sums follow the class counts (largest remainders), so no document is written only to be cut. Released values
    and public settings only."""
    estimates = topic_label_estimates(topics, released)
    quotas = largest_remainders(total, released.shares)
    out = np.zeros((len(topics), len(released.labels)), dtype=np.int64)
    for j, q in enumerate(quotas):
        if q and len(topics):
            out[:, j] = largest_remainders(q, estimates[:, j])
    return out


def label_probabilities(weights: np.ndarray, shares: Sequence[float]) -> np.ndarray:
    """Each topic's row of weights over its sum; a row with nothing left takes the class shares (uniform when
    they are all 0)."""
    fallback = np.asarray(shares, dtype=np.float64)
    fallback = fallback / fallback.sum() if fallback.sum() > 0 else np.full(len(fallback), 1.0 / max(len(fallback), 1))
    sums = weights.sum(axis=1, keepdims=True)
    return np.where(sums > 0, weights / np.where(sums > 0, sums, 1.0), fallback)


def systematic_labels(probs: np.ndarray, n: int, u: float) -> list[int]:
    """``n`` documents split among the labels by systematic sampling with offset ``u`` ∈ [0, 1): label j gets
    ⌊n·p_j⌋ or ⌈n·p_j⌉ of them, n·p_j in expectation."""
    edges = np.cumsum(probs) * n / probs.sum()
    points = u + np.arange(n)
    return [min(int(j), len(probs) - 1) for j in np.searchsorted(edges, points, side="right")]


def label_documents(documents: Sequence[SyntheticDoc], shape: CorpusShape, released: ClusterLabels | None,
                    ctx: MethodContext) -> list[SyntheticDoc]:
    """Every document labelled from its topic's released label counts (post-processing; none without the stage).
    A shape whose documents were given their labels before writing (:func:`label_allocation`) is left as it is:
    each document carries its entry's label already."""
    if released is None or not documents or any(t.label for t in shape.documents):
        return list(documents)
    by_topic: dict[int, list[int]] = {}
    for i, doc in enumerate(documents):
        by_topic.setdefault(doc.group, []).append(i)
    probs = label_probabilities(topic_weights(shape, released), released.shares)
    rng = ctx.rng()
    labels = [""] * len(documents)
    for g, indices in sorted(by_topic.items()):
        for i, j in zip(indices, systematic_labels(probs[g], len(indices), float(rng.random()))):
            labels[i] = released.labels[j]
    return [replace(doc, label=label) for doc, label in zip(documents, labels)]
