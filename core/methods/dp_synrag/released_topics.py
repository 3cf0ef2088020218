"""The released topics as one record each (docs/method.md §6.2): what the shape of the corpus is made from.

A :class:`ReleasedTopic` holds only released values: the cluster word w_r (step 1), its released count
h'(w_r) (the noisy histogram), and its released co-keywords with their noisy vote counts (step 2b). Every
step that shapes the corpus (merging, allocating documents, sampling each document's co-keywords) reads
these records and public constants only: post-processing, no privacy cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from core.methods.dp_synrag.clusters import CoKeywords


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

    def mention_rates(self) -> np.ndarray:
        """How often a document of this topic mentions each co-keyword: its noisy count over the topic's,
        clipped to [0, 1] (released counts only; a topic whose noisy count is not positive gives each 1)."""
        counts = np.asarray(self.co_counts, dtype=np.float64)
        if self.count <= 0.0:
            return np.ones(counts.shape, dtype=np.float64)
        return np.clip(counts / self.count, 0.0, 1.0)


def released_topics(W: Sequence[str], counts: Sequence[float], related: CoKeywords) -> list[ReleasedTopic]:
    """One record per cluster r, from the released W, h'(w_r) and step 2b's co-keywords and counts."""
    return [
        ReleasedTopic(w, float(c), tuple(words), tuple(float(x) for x in noisy), (r,))
        for r, (w, c, words, noisy) in enumerate(zip(W, counts, related.words, related.counts))
    ]
