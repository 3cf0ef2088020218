"""The released topics as one record each (docs/method.md §6.2): what the shape of the corpus is made from.

A :class:`ReleasedTopic` holds only released values: the cluster word w_r (step 1), its released count
h'(w_r) (the noisy histogram), and its released co-keywords with their noisy vote counts (step 2b), and the
units its cluster holds as those released values estimate them (:func:`unclaimed_units`). Every step that
shapes the corpus (merging, allocating documents, sampling each document's co-keywords) reads these records
and public constants only: post-processing, no privacy cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from core.methods.dp_synrag.release.clusters import CoKeywords


@dataclass(frozen=True)
class ReleasedTopic:
    """One topic: its word, its released count h'(w_r), its released co-keywords and their noisy counts, and
    the clusters r it stands for (one, or several once merged: ``merge.py``, which also keeps the merged topics'
    words, released cluster words, as words every document of the topic names)."""

    word: str
    count: float
    co_keywords: tuple[str, ...] = ()
    co_counts: tuple[float, ...] = ()
    clusters: tuple[int, ...] = ()
    merged_words: tuple[str, ...] = ()  # the words of the topics merged into this one: every document names them
    units: float | None = None  # the units its cluster(s) hold, estimated (:func:`unclaimed_units`); None: count

    @property
    def size(self) -> float:
        """The units this topic stands for, estimated from released values: ``units``, or h'(w_r) without it."""
        return self.count if self.units is None else self.units

    def mention_rates(self) -> np.ndarray:
        """How often a document of this topic mentions each co-keyword: its noisy count over the topic's units,
        clipped to [0, 1] (released counts only; a topic whose estimate is not positive gives each 1)."""
        counts = np.asarray(self.co_counts, dtype=np.float64)
        if self.size <= 0.0:
            return np.ones(counts.shape, dtype=np.float64)
        return np.clip(counts / self.size, 0.0, 1.0)


def unclaimed_units(W: Sequence[str], counts: Sequence[float], related: CoKeywords, L: int) -> list[float]:
    """How many units each cluster C_r holds, estimated from released values only (docs/method.md §6.2).

    Clusters are visited from the end of W and, with L = 1, a unit joins only the first one whose word it holds
    (``soft_clusters``). The units of w_r that a cluster visited before C_r took are not in C_r, and those that
    voted w_r there are counted by that cluster's released co-keyword count of w_r. So C_r holds about h'(w_r)
    less those counts, and at least its own largest released co-keyword count (every vote is a member's): on
    the demo clinic a drug visited after its condition keeps almost none of its h' (its notes are the
    condition's), and allocated by h' it took a sixth of the documents, each naming the drug alone. With L > 1
    a unit may be in both clusters, so the estimate is h'(w_r)."""
    if L != 1:
        return [float(c) for c in counts]
    out = []
    for r, (word, count) in enumerate(zip(W, counts)):
        claimed = sum(c for s in range(r + 1, len(W)) for w, c in zip(related.words[s], related.counts[s])
                      if w == word)
        out.append(max(float(count) - claimed, max(related.counts[r], default=0.0), 0.0))
    return out


def released_topics(W: Sequence[str], counts: Sequence[float], related: CoKeywords, L: int = 1
                    ) -> list[ReleasedTopic]:
    """One record per cluster r, from the released W, h'(w_r) and step 2b's co-keywords and counts, with the units
    each cluster holds as they estimate them (:func:`unclaimed_units`; L, the clusters a unit may join)."""
    units = unclaimed_units(W, counts, related, L)
    return [
        ReleasedTopic(w, float(c), tuple(words), tuple(float(x) for x in noisy), (r,), (), u)
        for r, (w, c, words, noisy, u) in enumerate(zip(W, counts, related.words, related.counts, units))
    ]


@dataclass(frozen=True)
class Topic:
    """A released topic: the cluster word w_r and its released co-keywords (all public)."""

    keyword: str
    related: tuple[str, ...] = ()
    label: str = ""  # labels by topic: the label the document is written for (released or typed; docs/method.md §6.3)

    @property
    def words(self) -> tuple[str, ...]:
        return (self.keyword, *self.related)
