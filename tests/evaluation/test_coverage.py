"""Coverage scores (issue 22) on tiny inputs with known answers (a fake embedder)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.evaluation.coverage import (
    common_content_words,
    content_word_share,
    content_words,
    coverage_scores,
    mean_best_cosine,
    real_sample_mmd2,
)


def test_content_words_drop_stop_words_short_words_and_numbers() -> None:
    assert content_words("The 3 big floods in 2019 hit the towns of Ely") == {"big", "floods", "hit", "towns", "ely"}


def test_common_content_words_rank_by_document_frequency() -> None:
    held = ["flood rain town", "flood rain", "flood storm", "election vote"]
    assert common_content_words(held, top=2) == ["flood", "rain"]
    assert content_word_share(["a flood came"], ["flood", "rain"]) == 0.5
    assert content_word_share([], ["flood"]) == 0.0
    assert math.isnan(content_word_share(["x"], []))


def test_mean_best_cosine_takes_each_held_out_rows_nearest_corpus_row() -> None:
    held = np.array([[1.0, 0.0], [0.0, 2.0]])
    corpus = np.array([[1.0, 0.0], [1.0, 1.0]])
    # row 1: nearest is [1,0] (cos 1); row 2: nearest is [1,1] (cos 1/√2)
    assert mean_best_cosine(held, corpus) == pytest.approx((1.0 + 1 / math.sqrt(2)) / 2)
    assert math.isnan(mean_best_cosine(held, np.zeros((0, 2))))


def test_a_real_sample_scores_near_the_held_out_set_and_a_shifted_corpus_far() -> None:
    rng = np.random.default_rng(0)
    members = rng.normal(size=(200, 4))
    held = rng.normal(size=(100, 4))
    shifted = rng.normal(size=(20, 4)) + 3.0
    same = real_sample_mmd2(members, held, 20, np.random.default_rng(1))
    far = coverage_scores("shifted", "synthetic", 10.0, ["word"] * 20, shifted, held, ["word"], members,
                          np.random.default_rng(1))
    assert far.mmd2 > 5 * same
    assert far.mmd2_real == pytest.approx(same)
    assert far.n_documents == 20 and far.content_words == 1.0


def test_coverage_scores_of_an_empty_corpus_are_nan_not_a_crash() -> None:
    held = np.eye(3)
    scores = coverage_scores("empty", "synthetic", 1.0, [], np.zeros((0, 3)), held, ["flood"], held,
                             np.random.default_rng(0))
    assert scores.n_documents == 0 and math.isnan(scores.best_cosine) and math.isnan(scores.mmd2)
    assert math.isnan(scores.mmd2_real) and math.isnan(scores.junk_rate) and scores.content_words == 0.0


def test_junk_distinct_and_mean_words_are_the_corpus_figures() -> None:
    texts = ["Document: Source: the rephrased text", "The council voted to extend the night bus service today."]
    emb = np.eye(2)
    scores = coverage_scores("c", "synthetic", 4.0, texts, emb, emb, ["council"], emb, np.random.default_rng(0))
    assert scores.junk_rate == 0.5
    assert scores.mean_words == pytest.approx((5 + 10) / 2)
    assert 0.0 < scores.distinct_2 <= 1.0
