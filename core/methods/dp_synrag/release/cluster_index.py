"""Soft clustering and co-keyword counting in time linear in the corpus (docs/method.md §2.2, §2.2b).

The definitions are those of ``clusters.soft_clusters`` and ``clusters.cluster_keyword_counts``;
only the loops change. The direct loops visit every unit for every one of the R words
(O(n·R) Python steps: hours at 10^6 units); here each unit's keywords are read once:

* an inverted index (word of W -> the units holding it, in unit order) makes C_r a masked slice
  of that list, with a membership counter per unit (numpy);
* each unit's candidate keywords are ranked once by public English frequency into a padded
  integer matrix, so a cluster's votes are a masked slice of it and one ``bincount``.

Same clusters (same order of members) and the same count matrix as the direct loops (tested).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np


def soft_clusters_indexed(keywords: Sequence[Sequence[str]], W: Sequence[str], L: int) -> list[list[int]]:
    """C_1..C_R (indices into the units), rarest word first; each unit in at most L clusters."""
    wanted = set(W)
    postings: dict[str, list[int]] = {w: [] for w in wanted}
    for u, words in enumerate(keywords):
        for word in set(words):
            if word in wanted:
                postings[word].append(u)
    arrays = {w: np.asarray(p, dtype=np.int64) for w, p in postings.items()}
    membership = np.zeros(len(keywords), dtype=np.int64)
    clusters: list[list[int]] = [[] for _ in W]
    for r in range(len(W) - 1, -1, -1):
        holders = arrays[W[r]]
        members = holders[membership[holders] < L]
        membership[members] += 1
        clusters[r] = members.tolist()
    return clusters


def ranked_candidates(
    keywords: Sequence[Sequence[str]], candidates: Sequence[str], specificity: Callable[[str], float]
) -> tuple[np.ndarray, np.ndarray]:
    """Each unit's candidate keywords as ranks, most specific first, padded with -1: [n, width].

    A candidate's rank is its position when the candidates are sorted by (specificity, word), the
    order ``cluster_keyword_votes`` uses. Also returns rank -> candidate index."""
    order = sorted(range(len(candidates)), key=lambda j: (specificity(candidates[j]), candidates[j]))
    rank_of = {candidates[j]: rank for rank, j in enumerate(order)}
    rows = [sorted({rank_of[w] for w in words if w in rank_of}) for words in keywords]
    width = max((len(r) for r in rows), default=0)
    matrix = np.full((len(rows), max(width, 1)), -1, dtype=np.int32)
    for u, ranks in enumerate(rows):
        matrix[u, : len(ranks)] = ranks
    return matrix, np.asarray(order, dtype=np.int64)


def cluster_keyword_counts_indexed(
    keywords: Sequence[Sequence[str]],
    clusters: Sequence[Sequence[int]],
    W: Sequence[str],
    candidates: Sequence[str],
    M: int,
    specificity: Callable[[str], float],
) -> np.ndarray:
    """The R x |candidates| vote counts: each member of C_r votes for its M most specific candidate
    keywords other than w_r (the definition of ``clusters.cluster_keyword_counts``)."""
    counts = np.zeros((len(W), len(candidates)), dtype=np.float64)
    if not len(candidates) or M < 1:
        return counts
    ranks, rank_to_index = ranked_candidates(keywords, candidates, specificity)
    rank_by_word = {candidates[int(j)]: rank for rank, j in enumerate(rank_to_index)}
    for r, members in enumerate(clusters):
        if not len(members):
            continue
        rows = ranks[np.asarray(members, dtype=np.int64)]
        valid = (rows >= 0) & (rows != rank_by_word.get(W[r], -2))
        chosen = rows[valid & (np.cumsum(valid, axis=1) <= M)]
        counts[r] = np.bincount(rank_to_index[chosen], minlength=len(candidates))
    return counts
