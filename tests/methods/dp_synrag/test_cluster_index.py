"""The indexed soft clustering and co-keyword counts equal the direct loops of SPEC §2.2 / docs/method.md §2.2b."""

from __future__ import annotations

import numpy as np
import pytest

from core.methods.dp_synrag.release.cluster_index import cluster_keyword_counts_indexed, soft_clusters_indexed
from core.methods.dp_synrag.release.clusters import cluster_keyword_votes, soft_clusters

WORDS = [f"w{i:02d}" for i in range(40)]


def specificity(word: str) -> float:
    return float(int(word[1:]) % 7)  # ties on purpose: the order then falls back to the word


def reference_clusters(keywords, W, L):
    """SPEC §2.2 as written: for r = R..1, every unit holding w_r that is in fewer than L clusters."""
    sets = [set(words) for words in keywords]
    membership = [0] * len(sets)
    clusters = [[] for _ in W]
    for r in range(len(W) - 1, -1, -1):
        for u, words in enumerate(sets):
            if membership[u] < L and W[r] in words:
                clusters[r].append(u)
                membership[u] += 1
    return clusters


def reference_counts(keywords, clusters, W, candidates, M):
    index = {w: j for j, w in enumerate(candidates)}
    counts = np.zeros((len(W), len(candidates)))
    for r, members in enumerate(clusters):
        for u in members:
            mine = sorted({w for w in keywords[u] if w in index and w != W[r]}, key=lambda w: (specificity(w), w))
            for w in mine[:M]:
                counts[r, index[w]] += 1
    return counts


def random_keywords(rng, n, K):
    return [list(rng.choice(WORDS, size=int(rng.integers(0, K + 1)), replace=True)) for _ in range(n)]


@pytest.mark.parametrize("seed", range(5))
def test_indexed_clusters_and_counts_equal_the_direct_loops(seed):
    rng = np.random.default_rng(seed)
    keywords = random_keywords(rng, 300, 8)  # duplicates inside a unit on purpose
    W = list(rng.choice(WORDS, size=12, replace=False))
    candidates = list(rng.choice(WORDS, size=25, replace=False))
    for L in (1, 2, 5):
        clusters = soft_clusters_indexed(keywords, W, L)
        assert clusters == reference_clusters(keywords, W, L)
        for M in (1, 3, 5):
            got = cluster_keyword_counts_indexed(keywords, clusters, W, candidates, M, specificity)
            np.testing.assert_array_equal(got, reference_counts(keywords, clusters, W, candidates, M))


def test_algorithm_uses_the_index_and_each_unit_votes_at_most_M_per_cluster():
    keywords = [["tusfosemia", "insomnia", "rash", "fever"], ["tusfosemia", "rash"], ["fever"]]
    assert soft_clusters(keywords, ["fever", "tusfosemia"], L=2) == [[0, 2], [0, 1]]
    counts = cluster_keyword_counts_indexed(keywords, [[0, 1]], ["tusfosemia"], ["insomnia", "rash", "fever"], 2,
                                            lambda w: 0.0)
    assert counts.sum(axis=1).tolist() == [3.0]  # unit 0: 2 votes (M = 2), unit 1: 1 vote
    votes = cluster_keyword_votes(keywords[0], "tusfosemia", {"insomnia": 0, "rash": 1, "fever": 2}, 2)
    assert len(votes) == 2


def test_empty_inputs():
    assert soft_clusters_indexed([], ["a"], 3) == [[]]
    assert cluster_keyword_counts_indexed([["a"]], [[0]], ["a"], [], 5, specificity).shape == (1, 0)
