"""DP-SynRAG's steps (SPEC §2) on small hand-made inputs."""

from __future__ import annotations

import numpy as np
import pytest

from core.methods.dp_synrag.release.clusters import soft_clusters
from core.methods.dp_synrag.release.histogram import keyword_histogram, top_words
from core.methods.dp_synrag.release.refinement import cosine_to, select_members
from core.methods.dp_synrag.vocab.vocabulary import Vocabulary, postprocess_keywords


def vocab_of(words):
    words = tuple(sorted(words))
    return Vocabulary(words=words, index={w: i for i, w in enumerate(words)})


def test_histogram_counts_each_unit_at_most_once_per_word():
    vocab = vocab_of(["fever", "cough", "rash"])
    h = keyword_histogram([["fever", "cough"], ["fever"], ["rash", "rash"]], vocab)
    assert h[vocab.index["fever"]] == 2
    assert h[vocab.index["rash"]] == 1  # a unit's keyword set is a set: sensitivity stays sqrt(K)
    assert h.sum() == 4


def test_keyword_postprocessing_keeps_only_public_vocabulary_words():
    vocab = vocab_of(["fever", "cough", "rash"])
    words = postprocess_keywords("Fever, COUGH, Zorblax, fever, rash", vocab, K=2)
    assert words == ["fever", "cough"]  # out-of-V dropped, de-duplicated, capped at K


def test_top_words_orders_by_noisy_count():
    vocab = vocab_of(["a1", "b2", "c3", "d4"])
    noisy = np.array([0.5, 3.0, 2.0, -1.0])
    assert top_words(noisy, vocab, 2) == ["b2", "c3"]


def test_soft_clusters_visit_rarest_first_and_cap_membership_at_L():
    W = ["common", "mid", "rare"]  # most frequent first
    keywords = [
        ["common", "mid", "rare"],
        ["common", "mid", "rare"],
        ["common"],
        ["mid"],
    ]
    clusters = soft_clusters(keywords, W, L=2)
    assert clusters[2] == [0, 1]  # rare: visited first
    assert clusters[1] == [0, 1, 3]
    assert clusters[0] == [2]  # units 0 and 1 already in L=2 clusters
    counts = np.bincount([u for c in clusters for u in c], minlength=4)
    assert counts.max() <= 2


def test_select_members_uses_cosine_to_the_noisy_centre():
    emb = np.array([[1.0, 0.0], [0.0, 1.0], [0.7071, 0.7071]])
    mu = np.array([10.0, 0.0])
    sims = cosine_to(emb, mu)
    assert sims == pytest.approx([1.0, 0.0, 0.7071], abs=1e-4)
    assert select_members([0, 1, 2], emb, mu, theta=0.5) == [0, 2]
    assert cosine_to(emb[:0], mu).shape == (0,)
