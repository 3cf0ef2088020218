"""How many documents, how many per topic, and which co-keywords each mentions (docs/method.md §6.2).

All of it is post-processing of released values and public settings, so it costs nothing:

* **the total** N (:func:`document_total`): ``[dp_synrag] documents`` = 0 writes one document per topic;
  N > 0 writes N; ``documents = -1`` (``CORPUS_SIZE``) writes about as many as the corpus holds units: the
  released DP size count n̂ (or the custodian's public ``size_bound``), never the true n; ``-2``
  (``AUTOMATIC_DOCUMENTS``, the default) the same, at least one per topic and at most
  ``AUTOMATIC_MOST_DOCUMENTS`` (200, a public bound on the writer's calls) unless the topics are more, and never
  more than the units the topics' clusters hold add up to (``ReleasedTopic.size``, from released counts; a
  corpus whose only released topic is held by about 35 units gets about 35 documents about it, not 200);
* **the allocation** (:func:`allocate`): N split across the topics in proportion to the units their released
  counts say each cluster holds (``released_topics.unclaimed_units``), by largest remainders, every topic at
  least one while N ≥ |W|;
* **each document's co-keywords** (:func:`sample_co_keywords`): each released co-keyword of its topic
  independently with probability clip(c'/u, 0, 1), its noisy vote count over the cluster's estimated units, at
  least one, in random order, so the combinations vary as the released counts say they do in the corpus.

The randomness is not a mechanism (it reads nothing private): OS entropy, or the test mode's generator.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from core.specs.dp_synrag import AUTOMATIC_DOCUMENTS, AUTOMATIC_MOST_DOCUMENTS, CORPUS_SIZE, MAX_DOCUMENTS

ONE_PER_TOPIC = 0  # ``documents = 0``: one document per topic
__all__ = ["AUTOMATIC_DOCUMENTS", "CORPUS_SIZE", "MAX_DOCUMENTS", "ONE_PER_TOPIC", "allocate", "automatic_total",
           "document_total", "sample_co_keywords"]


def automatic_total(size: float, topics: int, supported: float | None = None) -> int:
    """The automatic number of documents: about ``size`` (the released DP size count or a public bound), at most
    AUTOMATIC_MOST_DOCUMENTS and at most ``supported`` (the topics' released counts added up: the units the
    released topics stand for), and never fewer than one per topic."""
    most = AUTOMATIC_MOST_DOCUMENTS if supported is None else min(AUTOMATIC_MOST_DOCUMENTS, round(supported))
    return max(min(round(max(float(size), 1.0)), most), int(topics))


def document_total(setting: int, topics: int, size: float | None, supported: float | None = None) -> int:
    """N, the documents to write: ``topics`` for 0, the setting itself for N > 0, round(size) for -1 (the
    released DP size count or the public bound; at least one per topic is not promised then), and for -2
    :func:`automatic_total` (``supported``: the topics' released counts added up). At most MAX_DOCUMENTS; 0 when
    there is no topic."""
    if topics <= 0:
        return 0
    if setting == ONE_PER_TOPIC:
        total = topics
    elif setting in (CORPUS_SIZE, AUTOMATIC_DOCUMENTS):
        if size is None:
            raise ValueError(f"documents = {setting} needs the released size count (or a public size_bound)")
        total = round(max(float(size), 1.0)) if setting == CORPUS_SIZE else automatic_total(size, topics, supported)
    elif setting > 0:
        total = int(setting)
    else:
        raise ValueError(f"documents must be -1, 0 or a positive number, got {setting}")
    return int(min(total, MAX_DOCUMENTS))


def allocate(counts: Sequence[float], total: int) -> list[int]:
    """``total`` documents split across topics in proportion to their released counts (largest remainders;
    ties to the earlier topic). While ``total`` ≥ the number of topics every topic gets at least one: a topic
    whose share is below one is given exactly one and the rest is shared among the others in proportion.
    Counts below 0 weigh 0; when none is positive the topics share equally."""
    n = len(counts)
    if n == 0 or total <= 0:
        return [0] * n
    weights = [max(float(c), 0.0) for c in counts]
    if not sum(weights) > 0.0:
        weights = [1.0] * n
    pinned: set[int] = set()
    while total >= n:
        rest = [i for i in range(n) if i not in pinned]
        free = total - len(pinned)
        mass = sum(weights[i] for i in rest)
        low = {i for i in rest if (free * weights[i] / mass if mass > 0 else free / len(rest)) < 1.0}
        if not low:
            break
        pinned |= low
    rest = [i for i in range(n) if i not in pinned]
    quotas = [1 if i in pinned else 0 for i in range(n)]
    free = total - len(pinned)
    mass = sum(weights[i] for i in rest)
    exact = {i: (free * weights[i] / mass if mass > 0 else free / len(rest)) for i in rest}
    for i in rest:
        quotas[i] = math.floor(exact[i])
    order = sorted(rest, key=lambda i: (-(exact[i] - quotas[i]), i))
    for i in order[: free - sum(quotas[i] for i in rest)]:
        quotas[i] += 1
    return quotas


def sample_co_keywords(words: Sequence[str], rates: Sequence[float], rng: np.random.Generator) -> tuple[str, ...]:
    """One document's co-keywords: each of ``words`` independently with its rate, at least one (drawn in
    proportion to the rates, or uniformly when all are 0), in random order. () when there is none."""
    if not words:
        return ()
    p = np.clip(np.asarray(rates, dtype=np.float64), 0.0, 1.0)
    chosen = [i for i, coin in enumerate(rng.random(len(words)) < p) if coin]
    if not chosen:
        weights = p / p.sum() if p.sum() > 0 else np.full(len(words), 1.0 / len(words))
        chosen = [int(rng.choice(len(words), p=weights))]
    return tuple(words[chosen[i]] for i in rng.permutation(len(chosen)))

