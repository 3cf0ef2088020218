"""The corpus's shape (docs/method.md §6.2, issue 33): documents allocated by the released counts, each
document's co-keywords sampled from its topic's released co-keyword counts, topics that describe the same
thing merged, near-duplicates dropped. All post-processing: what is read is released or public, and the
charges stay those of the plan."""

from __future__ import annotations

import math
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from tests.helpers import TINY_SIZES, statistical, tiny_spec

from core.common.checkpoints import Checkpoints
from core.corpus import Unit
from core.ledger import Ledger
from core.methods.base import MethodContext
from core.methods.dp_synrag.algorithm import run_dp_synrag
from core.methods.dp_synrag.release.budget import plan_dp_synrag
from core.methods.dp_synrag.release.clusters import CoKeywords, soft_clusters, supported_clusters
from core.methods.dp_synrag.release.histogram import keyword_histogram, topic_words
from core.methods.dp_synrag.release.keywords import extract_keywords
from core.methods.dp_synrag.release.length import MAX_WORDS, MIN_WORDS, release_length, unit_lengths
from core.methods.dp_synrag.release.plan import STAGE_LENGTH
from core.methods.dp_synrag.release.row_bound import cluster_counts
from core.methods.dp_synrag.release.topic_labels import ClusterLabels
from core.methods.dp_synrag.shape.allocation import allocate, document_total, sample_co_keywords
from core.methods.dp_synrag.shape.corpus_shape import (
    CHECKPOINT_SHAPE,
    FEWEST_TOPICS,
    Releases,
    held_topics,
    released_allocation,
    shape_corpus,
    target_words,
)
from core.methods.dp_synrag.method import generation_notes
from core.methods.dp_synrag.shape.examples import form_length
from core.methods.dp_synrag.shape.merge import merge_topics, merged, same_thing
from core.methods.dp_synrag.shape.released_topics import ReleasedTopic, unclaimed_units
from core.methods.dp_synrag.vocab.vocabulary import Vocabulary
from core.methods.dp_synrag.write.dedup import drop_near_duplicates, jaccard, shingles
from core.methods.dp_synrag.write.drafts import fit_length
from core.run.pipeline import plan, run_pipeline
from core.run.planning import run_estimate
from core.privacy.forecast import forecast_topics
from core.privacy.planner import STAGE_SIZE
from core.common.progress import NULL_REPORTER
from core.specs.runspec import DPSynRAGSpec, RunSpec
from core.specs.dp_synrag import MAX_DOCUMENTS

# -- the allocation ---------------------------------------------------------------------------------------


def test_the_allocation_is_proportional_by_largest_remainders_and_sums_to_n():
    assert allocate([60.0, 30.0, 10.0], 10) == [6, 3, 1]
    assert allocate([50.0, 30.0, 20.0], 7) == [4, 2, 1]  # exact 3.5, 2.1, 1.4: the largest remainder wins
    for counts, n in (([9.3, 4.1, 2.2, 1.7], 13), ([100.0, 1.0], 1), ([5.0] * 7, 20)):
        assert sum(allocate(counts, n)) == n


def test_every_topic_gets_one_while_there_are_documents_enough():
    assert allocate([100.0, 1.0, 1.0], 5) == [3, 1, 1]  # a share below one is given exactly one
    assert allocate([100.0, 1.0, 1.0], 3) == [1, 1, 1]
    assert allocate([100.0, 1.0, 1.0], 2) == [2, 0, 0]  # fewer documents than topics: by count
    assert allocate([-3.0, 0.0], 4) == [2, 2]  # no positive count: equal shares
    assert allocate([], 5) == [] and allocate([1.0, 2.0], 0) == [0, 0]


def test_the_number_of_documents_reads_the_released_size_never_anything_else():
    assert document_total(0, 7, None) == 7  # one per topic
    assert document_total(30, 7, None) == 30
    assert document_total(-1, 7, 123.4) == 123  # the released DP size count (or the public bound)
    assert document_total(-1, 0, 123.4) == 0  # no topic, no document
    assert document_total(10**9, 7, None) == MAX_DOCUMENTS
    with pytest.raises(ValueError):
        document_total(-1, 7, None)
    # automatic (the default): about the released size, at most 200, never fewer than one per topic
    assert document_total(-2, 7, 123.4) == 123 and document_total(-2, 7, 5000.0) == 200
    assert document_total(-2, 7, 3.2) == 7 and document_total(-2, 260, 5000.0) == 260
    with pytest.raises(ValueError):
        document_total(-2, 7, None)
    # ... and never more than the released topics stand for: one topic held by about 35 of 240 units
    assert document_total(-2, 1, 240.0, supported=35.3) == 35 and document_total(-2, 7, 240.0, supported=3.0) == 7
    assert document_total(-2, 7, 123.4, supported=900.0) == 123
    assert document_total(-1, 1, 240.0, supported=35.3) == 240  # "about the size of the corpus" was asked for


def test_automatic_documents_are_one_per_topic_without_the_public_writer():
    assert DPSynRAGSpec().documents == -2 and DPSynRAGSpec().documents_setting == -2
    assert DPSynRAGSpec(text="private").documents_setting == 0
    assert DPSynRAGSpec(text="topic_line").documents_setting == 0
    assert DPSynRAGSpec(text="topic_line", documents=40).documents_setting == 40


def test_the_co_keyword_sampler_follows_the_released_rates():
    """Each co-keyword with probability noisy count / topic count, at least one (then drawn by rate)."""
    topic = ReleasedTopic("asthma", 100.0, ("wheeze", "inhaler", "night cough"), (80.0, 40.0, 5.0))
    rates = topic.mention_rates()
    assert rates.tolist() == pytest.approx([0.8, 0.4, 0.05])
    rng = np.random.default_rng(7)
    draws = [sample_co_keywords(topic.co_keywords, rates, rng) for _ in range(20_000)]
    assert all(draws) and all(len(set(d)) == len(d) for d in draws)
    none = 0.2 * 0.6 * 0.95  # no coin came up: one word drawn in proportion to the rates
    expected = [r + none * r / rates.sum() for r in rates]
    seen = Counter(w for d in draws for w in d)
    for word, p in zip(topic.co_keywords, expected):
        assert seen[word] / len(draws) == pytest.approx(p, abs=0.015)
    orders = Counter(d for d in draws if len(d) == 3)
    assert len(orders) == 6  # the words come in every order
    assert ReleasedTopic("x", 10.0, ("a",), (25.0,)).mention_rates().tolist() == [1.0]  # clipped to [0, 1]


# -- the shape reads released values only ---------------------------------------------------------------

WORDS = ["asthma", "wheeze", "inhaler", "eczema", "itchy", "emollient", "gout", "toe", "allopurinol", "visit"]
GROUPS = {"asthma": (150, ("wheeze", "inhaler")), "eczema": (100, ("itchy", "emollient")),
          "gout": (50, ("toe", "allopurinol"))}


def _units(sizes: dict[str, int], seed: int = 0) -> list[Unit]:
    rng = random.Random(seed)
    units = []
    for word, n in sizes.items():
        co = GROUPS[word][1]
        for i in range(n):
            words = [word, *(w for w, p in zip(co, (0.8, 0.5)) if rng.random() < p), "visit"]
            units.append(Unit(uid=f"{word}-{i}", text=" ".join(words)))
    return units


def _ctx(folder: Path, charges: list | None = None, seed: int | None = 11) -> MethodContext:
    return MethodContext(llm=None, embedder=None, task="clinic notes",  # type: ignore[arg-type]
                         charge=lambda s, r, d, delta_part=0.0: (charges if charges is not None else []).append((s, r)),
                         reporter=NULL_REPORTER, checkpoints=Checkpoints(folder), test_seed=seed)


SHAPE_SPEC = DPSynRAGSpec(K=4, R=6, L=3, text="topic_line", documents=40, self_filter=False, discover_phrases=False,
                          keywords="vocabulary", topic_words="frequent", cluster_keywords=3)


def test_the_allocation_follows_the_released_counts_not_the_true_ones(tmp_path):
    """A run, then the private corpus changes (its true counts with it) and the shape is made again from
    the checkpointed releases: the same topics, the same allocation, co-keywords drawn from the released ones."""
    vocab = Vocabulary.from_words(WORDS)
    p = plan_dp_synrag(SHAPE_SPEC, 10.0, 1e-6)
    folder = tmp_path / "c"
    first = run_dp_synrag(_units({"asthma": 150, "eczema": 100, "gout": 50}), vocab, SHAPE_SPEC, "", p, _ctx(folder))
    store = Checkpoints(folder)
    shape = store.load(CHECKPOINT_SHAPE)["shape"]
    assert sum(shape["allocation"]) == 40 and len(first.documents) >= 3
    noisy = np.asarray(store.load("histogram"))
    W = topic_words(noisy, vocab, SHAPE_SPEC.R, p.sigma_h, SHAPE_SPEC.topic_words)
    released = [sum(cluster_counts(noisy, vocab.index, [W[r] for r in t["clusters"]])) for t in shape["topics"]]
    assert [t["count"] for t in shape["topics"]] == pytest.approx(released)  # h'(w_r), summed when merged
    assert shape["allocation"] == allocate(released, 40)

    changed = _units({"asthma": 20, "eczema": 5, "gout": 400}, seed=3)  # the true counts change after release
    keywords = extract_keywords(changed, None, vocab, 4, _ctx(tmp_path / "x"), "vocabulary")  # type: ignore[arg-type]
    truth = keyword_histogram(keywords, vocab)
    true_counts = [sum(cluster_counts(truth, vocab.index, [W[r] for r in t["clusters"]])) for t in shape["topics"]]
    assert allocate(true_counts, 40) != shape["allocation"]  # had the truth been read, the allocation would differ
    store.path(CHECKPOINT_SHAPE).unlink()  # made again, from the checkpointed releases
    run_dp_synrag(changed, vocab, SHAPE_SPEC, "", p, _ctx(folder))
    again = store.load(CHECKPOINT_SHAPE)["shape"]
    assert again["allocation"] == shape["allocation"]
    assert again["topics"] == shape["topics"]  # the merged topics and their released co-keyword counts too
    for saved in (shape, again):  # each document names its topic's word and released co-keywords only
        for words, g in zip(saved["documents"], saved["groups"]):
            topic = saved["topics"][g]
            names = topic["merged_words"]
            assert words[0] == topic["word"] and words[1 : 1 + len(names)] == names
            assert set(words[1 + len(names):]) <= set(topic["co_keywords"])


def test_each_document_names_only_released_co_keywords_of_its_topic(tmp_path):
    topics = [ReleasedTopic("asthma", 90.0, ("wheeze", "inhaler"), (70.0, 30.0), (0,)),
              ReleasedTopic("gout", 30.0, ("toe",), (20.0,), (1,))]
    related = CoKeywords([list(t.co_keywords) for t in topics], [list(t.co_counts) for t in topics])
    spec = DPSynRAGSpec(text="realised", documents=12, merge_topics=False, cluster_keywords=2)
    shape = shape_corpus(Releases([t.word for t in topics], [t.count for t in topics], related), spec, _ctx(tmp_path))
    assert shape.allocation == (9, 3) and len(shape.documents) == 12
    for doc, g in zip(shape.documents, shape.groups):
        assert doc.keyword == topics[g].word and doc.related and set(doc.related) <= set(topics[g].co_keywords)
    assert list(shape.groups) == [0] * 9 + [1] * 3  # a topic's documents together: the demonstrations rotate
    assert released_allocation(tmp_path.parent / "none") == []


def test_a_resumed_run_reuses_the_shape_and_one_per_topic_keeps_todays_documents(tmp_path):
    topics = [ReleasedTopic("asthma", 90.0, ("wheeze", "inhaler", "cough"), (70.0, 30.0, 20.0), (0,))]
    related = CoKeywords([list(topics[0].co_keywords)], [list(topics[0].co_counts)])
    spec = DPSynRAGSpec(text="realised", documents=20, cluster_keywords=3)
    first = shape_corpus(Releases(["asthma"], [90.0], related), spec, _ctx(tmp_path, seed=1))
    again = shape_corpus(Releases(["asthma"], [90.0], related), spec, _ctx(tmp_path, seed=2))  # a resume: other draws
    assert again == first
    single = shape_corpus(Releases(["asthma"], [90.0], related), DPSynRAGSpec(text="realised", documents=0),
                          _ctx(tmp_path / "one"))
    assert [d.words for d in single.documents] == [("asthma", "wheeze", "inhaler", "cough")]


# -- topics with nothing behind them, and the visit order -----------------------------------------------


def test_a_cluster_is_supported_when_its_released_votes_clear_their_noise():
    sigma_c, candidates = 3.0, 100  # the total's noise: sd 3·√100 = 30, so the bar is 60 votes
    noise = np.random.default_rng(5).normal(0.0, sigma_c, (2000, candidates))
    assert np.mean(supported_clusters(noise, sigma_c)) < 0.05  # an empty cluster: about Φ̄(2) = 2.3 % pass
    held = noise.copy()
    held[:, :5] += 20.0  # 20 units, five votes each: 100 votes, about 3.3 sd
    assert np.mean(supported_clusters(held, sigma_c)) > 0.9
    assert supported_clusters(np.zeros((3, 0)), sigma_c) == [False, False, False]


def test_a_topic_whose_released_label_counts_show_units_is_written():
    """Labels by topic: a cluster of a few dozen units shows in its released label counts (each unit adds 1 to
    the row's total) even where its co-keyword votes do not; an empty cluster's row is noise and stays out."""
    sigma_t, labels = 4.0, ("a", "b", "c", "d")  # the row total's noise: sd 4·√4 = 8, so the bar is 16
    rng = np.random.default_rng(11)
    empty = rng.normal(0.0, sigma_t, (2000, len(labels)))
    held = empty + np.array([18.0, 4.0, 2.0, 0.0])  # 24 units, mostly "a": 3 sd
    empty_rows = ClusterLabels(labels, empty, (0.25,) * 4, sigma_t)
    held_rows = ClusterLabels(labels, held, (0.25,) * 4, sigma_t)
    assert np.mean([empty_rows.holds(r) for r in range(2000)]) < 0.05  # about Φ̄(2) = 2.3 % pass
    assert np.mean([held_rows.holds(r) for r in range(2000)]) > 0.75  # Φ(1) = 84 %
    topics = [ReleasedTopic("diagnosis", 90.0, (), (), (0,)), ReleasedTopic("beijing", 25.0, (), (), (1,))]
    nothing = CoKeywords([[], []], [[], []], [False, False])
    rows = ClusterLabels(labels, np.array([[1.0, -2.0, 0.5, 1.0], [20.0, 3.0, 1.0, -1.0]]), (0.25,) * 4, sigma_t)
    assert [t.word for t in held_topics(topics, nothing, fewest=1, labelled=rows)] == ["beijing"]
    assert [t.word for t in held_topics(topics, nothing, fewest=1)] == ["diagnosis"]  # without labels: the commonest


def test_topics_with_no_co_keyword_and_no_support_are_not_written(tmp_path):
    topics = [ReleasedTopic("tusfosemia", 40.0, ("wheeze",), (30.0,), (0,)),
              ReleasedTopic("diagnosis", 90.0, (), (), (1,)),  # its units were all taken by more specific topics
              ReleasedTopic("beijing", 25.0, (), (), (2,))]  # described by nothing, but its cluster holds units
    related = CoKeywords([["wheeze"], [], []], [[30.0], [], []], [True, False, True])
    assert [t.word for t in held_topics(topics, related, fewest=2)] == ["tusfosemia", "beijing"]
    nothing = CoKeywords([["wheeze"], [], []], [[30.0], [], []], [True, False, False])
    assert [t.word for t in held_topics(topics[1:], nothing, fewest=1)] == ["diagnosis"]  # too few: the commonest
    assert [t.word for t in held_topics(topics, related, fewest=3)] == ["tusfosemia", "diagnosis", "beijing"]
    assert len(held_topics(topics, CoKeywords.none(3), fewest=1)) == 3  # no co-keyword stage: nothing to judge by
    many = [ReleasedTopic(f"t{i}", 50.0 + i, ("w",), (30.0,), (i + 3,)) for i in range(FEWEST_TOPICS)]
    words = [t.word for t in held_topics([*topics, *many], CoKeywords(
        [["wheeze"], [], [], *[["w"]] * FEWEST_TOPICS], [[30.0], [], [], *[[30.0]] * FEWEST_TOPICS],
        [True, False, True, *[True] * FEWEST_TOPICS]))]
    assert "diagnosis" not in words and len(words) == FEWEST_TOPICS + 2
    spec = DPSynRAGSpec(text="realised", merge_topics=False, cluster_keywords=1, documents=0)
    all_words = [t.word for t in [*topics, *many]]
    shape = shape_corpus(Releases(all_words, [t.count for t in [*topics, *many]], CoKeywords(
        [["wheeze"], [], [], *[["w"]] * FEWEST_TOPICS], [[30.0], [], [], *[[30.0]] * FEWEST_TOPICS],
        [True, False, True, *[True] * FEWEST_TOPICS])), spec, _ctx(tmp_path))
    assert [d.keyword for d in shape.documents] == [w for w in all_words if w != "diagnosis"]


def test_a_topic_standing_alone_is_written_while_the_held_topics_stand_for_too_few_units(tmp_path):
    """A diverse corpus describes few topics: an undescribed topic whose own units (released values) reach the bar
    joins, largest first, until the topics written stand for the released size; one whose units another topic's
    co-keywords claim does not."""
    topics = [ReleasedTopic("trump", 97.0, ("president",), (17.0,), (0,)),
              ReleasedTopic("china", 83.0, (), (), (1,)),  # described by nothing, its units claimed by no one
              ReleasedTopic("remkatstatin", 39.0, (), (), (2,), units=4.0),  # its notes are its condition's
              ReleasedTopic("court", 27.0, (), (), (3,))]
    related = CoKeywords([["president"], [], [], []], [[17.0], [], [], []], [True, False, False, False])

    def written(**kwargs: float) -> list[str]:
        return [t.word for t in held_topics(topics, related, fewest=1, **kwargs)]

    assert written() == ["trump"]  # no size released: the held topics only
    assert written(size=1000.0, min_units=15.0) == ["trump", "china", "court"]
    assert written(size=150.0, min_units=15.0) == ["trump", "china"]  # 97 + 83 units stand for the corpus
    assert written(size=90.0, min_units=15.0) == ["trump"]  # the held topics already do
    assert written(size=1000.0, min_units=30.0) == ["trump", "china"]  # court's 27 units are below the bar
    W = [f"t{i}" for i in range(FEWEST_TOPICS)] + ["china"]  # as many held topics as the floor, and china
    related = CoKeywords([*[["w"]] * FEWEST_TOPICS, []], [*[[12.0]] * FEWEST_TOPICS, []], [*[True] * FEWEST_TOPICS, False])
    spec = DPSynRAGSpec(text="realised", merge_topics=False, cluster_keywords=1, documents=0)
    counts = [20.0] * FEWEST_TOPICS + [83.0]

    def keywords(size: float | None, min_units: float) -> list[str]:
        shape = shape_corpus(Releases(W, counts, related, size), spec, _ctx(tmp_path / str(min_units)), min_units=min_units)
        return [d.keyword for d in shape.documents]

    assert keywords(1000.0, 15.0) == W and keywords(1000.0, math.inf) == W[:-1] and keywords(None, 15.0) == W[:-1]


def test_specific_topics_are_visited_first_so_a_condition_keeps_its_notes():
    from core.methods.dp_synrag.vocab.vocabulary import Vocabulary

    words = ["diagnosis", "wheeze", "tusfosemia"]  # public Zipf: common wording, a symptom, an invented name
    vocab = Vocabulary(tuple(words), {w: i for i, w in enumerate(words)})
    W = topic_words(np.array([50.0, 20.0, 30.0]), vocab, 3, 1.0, "specific")
    assert W == ["diagnosis", "wheeze", "tusfosemia"]  # least specific first: visited from the end
    notes = [["tusfosemia", "wheeze", "diagnosis"]] * 20  # every note holds all three; L = 1
    clusters = soft_clusters(notes, W, 1)
    assert len(clusters[2]) == 20 and not clusters[0] and not clusters[1]
    assert topic_words(np.array([50.0, 20.0, 30.0]), vocab, 3, 1.0, "frequent") == ["diagnosis", "tusfosemia", "wheeze"]


def test_a_topic_whose_units_an_earlier_visited_cluster_took_gets_few_documents(tmp_path):
    """With L = 1 the drug's notes joined its condition's cluster (visited first, from the end of W), whose
    released co-keyword counts say so: the drug's cluster holds about h' less those votes, and its documents
    follow that estimate, not h'. Released values only; with L > 1 a unit may be in both, so h' stands."""
    W = ["remkatstatin", "fever", "drimkitopathy"]
    counts = [38.0, 60.0, 37.0]
    related = CoKeywords([[], ["rash"], ["remkatstatin", "fever"]], [[], [12.0], [36.0, 20.0]])
    assert unclaimed_units(W, counts, related, 1) == pytest.approx([2.0, 40.0, 37.0])
    assert unclaimed_units(W, counts, related, 3) == counts
    related = CoKeywords([["sore"], ["rash"], ["remkatstatin", "fever"]], [[5.0], [12.0], [40.0, 20.0]])
    assert unclaimed_units(W, counts, related, 1)[0] == 5.0  # at least its own largest vote: each is a member's
    spec = DPSynRAGSpec(text="realised", documents=40, merge_topics=False, cluster_keywords=2)
    shape = shape_corpus(Releases(W, counts, related), spec, _ctx(tmp_path))
    units = [5.0, 40.0, 40.0]  # the condition's 40 votes for its drug: its cluster holds at least 40
    assert shape.allocation == tuple(allocate(units, 40)) != tuple(allocate(counts, 40))
    assert [t.size for t in shape.topics] == units and [t.count for t in shape.topics] == counts
    rates = shape.topics[1].mention_rates()  # a co-keyword's share of the cluster's units, not of h'
    assert rates.tolist() == pytest.approx([12.0 / 40.0])


# -- merging topics: released words only ----------------------------------------------------------------


def test_topics_whose_released_words_overlap_are_the_same_thing():
    a = ReleasedTopic("eczema", 60.0, ("itchy", "rash", "elbows"), (40.0, 30.0, 20.0), (0,))
    b = ReleasedTopic("dermatitis", 30.0, ("itchy", "rash", "elbows", "cream"), (20.0, 15.0, 10.0, 5.0), (1,))
    c = ReleasedTopic("atopic", 25.0, ("eczema", "itchy", "cream"), (20.0, 12.0, 4.0), (2,))
    d = ReleasedTopic("gout", 40.0, ("toe", "rash"), (30.0, 5.0), (3,))
    assert same_thing(a, b)  # Jaccard 3/4
    assert same_thing(a, c)  # eczema is among c's co-keywords, and half of the rest ("itchy") is shared
    assert not same_thing(a, d) and not same_thing(b, d)
    assert not same_thing(ReleasedTopic("x", 1.0), ReleasedTopic("y", 1.0))  # nothing released: never merged
    russia, president = ReleasedTopic("russia", 140.0, ("trump",)), ReleasedTopic("president", 77.0, ("trump",))
    assert not same_thing(russia, president)  # Jaccard 1, but one shared word is no evidence (news, round 4)
    one = merged(a, [b])
    assert one.word == "eczema" and one.count == 90.0 and one.clusters == (0, 1)
    assert dict(zip(one.co_keywords, one.co_counts)) == {"itchy": 60.0, "rash": 45.0, "elbows": 30.0, "cream": 5.0}
    assert one.merged_words == ("dermatitis",)  # the same thing's other name: every document names it
    both = merged(a, [c])
    assert both.merged_words == ("atopic",) and "eczema" not in both.co_keywords
    assert list(one.co_counts) == sorted(one.co_counts, reverse=True)


def test_a_merged_topics_documents_name_both_words(tmp_path):
    a = ReleasedTopic("eczema", 60.0, ("itchy", "rash", "elbows"), (40.0, 30.0, 20.0), (0,))
    b = ReleasedTopic("dermatitis", 30.0, ("itchy", "rash", "elbows", "cream"), (20.0, 15.0, 10.0, 5.0), (1,))
    related = CoKeywords([list(a.co_keywords), list(b.co_keywords)], [list(a.co_counts), list(b.co_counts)])
    spec = DPSynRAGSpec(text="realised", documents=10, cluster_keywords=4)
    shape = shape_corpus(Releases(["eczema", "dermatitis"], [60.0, 30.0], related), spec, _ctx(tmp_path))
    assert len(shape.topics) == 1 and shape.allocation == (10,)
    assert all(d.keyword == "eczema" and d.related[0] == "dermatitis" and len(d.related) >= 2 for d in shape.documents)


def test_merging_visits_the_commonest_first_and_does_not_chain():
    head = ReleasedTopic("asthma", 80.0, ("wheeze", "inhaler", "night"), (1.0, 1.0, 1.0), (0,))
    near = ReleasedTopic("wheezing", 50.0, ("wheeze", "inhaler", "night", "cold"), (1.0,) * 4, (1,))
    far = ReleasedTopic("cold", 40.0, ("cold", "night", "cough", "fever"), (1.0,) * 4, (2,))  # like near, not head
    out = merge_topics([far, near, head])
    assert [t.word for t in out] == ["asthma", "cold"]
    assert out[0].count == 130.0 and out[1].count == 40.0


# -- the near-duplicate filter: synthetic text only --------------------------------------------------------


def test_near_duplicates_are_dropped_and_different_documents_kept():
    note = "Consultation note. K. M., 47, reports wheeze and a dry cough at night for two weeks. Impression: asthma."
    texts = {
        0: note,
        1: note,  # the same
        2: note.replace("two weeks", "three weeks"),  # one word changed
        3: "Consultation note. T. F., 23, reports an itchy rash on both elbows. Impression: eczema. Plan: a cream.",
        4: "",
        5: "",
    }
    kept = drop_near_duplicates(texts)
    assert sorted(kept) == [0, 3, 4]
    assert jaccard(shingles(note), shingles(texts[2])) >= 0.5 > jaccard(shingles(note), shingles(texts[3]))


def test_the_prefix_filter_drops_exactly_what_comparing_every_pair_drops():
    rng = random.Random(5)
    words = list("abcdefghijkl")
    base = [" ".join(rng.choice(words) for _ in range(rng.randint(2, 14))) for _ in range(30)]
    texts = {i: (base[rng.randrange(30)] + " " + rng.choice(words)) if rng.random() < 0.5 else base[i % 30]
             for i in range(200)}
    kept_slow: dict[int, str] = {}
    for key in sorted(texts):
        if all(jaccard(shingles(texts[key]), shingles(texts[k])) < 0.5 for k in kept_slow):
            kept_slow[key] = texts[key]
    fast = drop_near_duplicates(texts)
    assert fast == kept_slow and 10 < len(fast) < 150


# -- accounting, the spec, the forecast and the certificate -------------------------------------------------


def test_documents_about_the_corpus_size_charge_the_size_count_and_nothing_else(tmp_path, privet_home):
    spec = tiny_spec(tmp_path, settings=TINY_SIZES, text="topic_line", documents=-1, topic_words="frequent")
    assert spec.dp_synrag.size_count  # R is stated, but documents = -1 waits for the size
    result = run_pipeline(spec)
    charges = [e for e in Ledger().entries(result.record.dataset_id) if e["kind"] == "charge"]
    planned = plan(spec)
    assert [c["stage"] for c in charges] == [s for s, _ in planned.stages] and charges[0]["stage"] == STAGE_SIZE
    assert math.fsum(c["rho"] for c in charges) == pytest.approx(planned.rho_total, rel=1e-9)
    assert math.fsum(c["rho"] for c in charges) == pytest.approx(result.record.rho_total, rel=1e-9)
    assert any("Corpus shape" in n and "released DP size count" in n for n in result.record.scope_notes)


def test_the_automatic_default_writes_documents_by_released_count_and_charges_the_plan(tmp_path, privet_home):
    settings = {k: v for k, v in TINY_SIZES.items() if k != "documents"}
    spec = tiny_spec(tmp_path, settings=settings, text="realised", topic_words="frequent", realisation_tokens=8)
    assert spec.dp_synrag.documents == -2 and spec.dp_synrag.size_count  # the default waits for the size
    result = run_pipeline(spec)
    charges = [e for e in Ledger().entries(result.record.dataset_id) if e["kind"] == "charge"]
    planned = plan(spec)
    assert [c["stage"] for c in charges] == [s for s, _ in planned.stages] and charges[0]["stage"] == STAGE_SIZE
    assert math.fsum(c["rho"] for c in charges) == pytest.approx(planned.rho_total, rel=1e-9)
    assert any("at most 200, at most as many as the topics' released counts add up to, and at least one per topic" in n
               for n in result.record.scope_notes)
    allocation = released_allocation(result.run_dir)
    assert allocation and sum(n for _, _, n in allocation) > len(allocation)  # more documents than topics


def test_documents_with_a_token_stage_are_refused_before_anything_runs():
    spec = RunSpec()
    spec.dp_synrag.text, spec.dp_synrag.documents = "private", 50
    assert any("documents = 50" in p for p in spec.problems())
    spec.dp_synrag.text = "realised"
    assert not spec.problems()
    spec.dp_synrag.documents = -3
    assert spec.problems()
    spec.dp_synrag.text, spec.dp_synrag.documents = "private", -2  # automatic: one per topic with a token stage
    assert not spec.problems()


def test_the_forecast_states_the_documents_asked_for_and_never_more():
    kwargs = dict(n_units=800, R=50, sigma_h=2.0, min_topic_support=10.0)
    assert forecast_topics(**kwargs, documents=300).documents_range == (270, 300)  # type: ignore[arg-type]  # filters
    # the automatic number: fewer when the topics stand for fewer units (measured: 148-200 of 200 kept)
    automatic = forecast_topics(**kwargs, documents=200, capped=True)  # type: ignore[arg-type]
    assert automatic.documents_range == (140, 200)
    assert automatic.documents_words().startswith("140 to 200 (") and "fewer units" in automatic.documents_words()
    low, high = forecast_topics(**kwargs).documents_range  # type: ignore[arg-type]
    assert high <= 50
    assert forecast_topics(n_units=5, R=50, sigma_h=2.0, min_topic_support=100.0,
                           documents=300).documents_range == (0, 0)


def test_the_time_estimate_prices_one_writer_call_per_document(tmp_path):
    spec = tiny_spec(tmp_path, settings=TINY_SIZES, text="realised", documents=400)
    summary = plan(spec)
    assert summary.documents_range == (400, 400) or summary.documents_range == (0, 400)
    estimate = run_estimate(spec, summary)
    assert estimate.items["realisation"] == 400.0 > spec.dp_synrag.R
    fewer = run_estimate(tiny_spec(tmp_path, settings=TINY_SIZES, text="realised", documents=40), plan(
        tiny_spec(tmp_path, settings=TINY_SIZES, text="realised", documents=40)))
    assert dict(estimate.stages)["realisation"] > 5 * dict(fewer.stages)["realisation"]


def test_the_certificate_says_the_shape_is_post_processing():
    notes = " ".join(generation_notes(DPSynRAGSpec(documents=500)))
    assert "500 documents" in notes and "in proportion to their released" in notes and "no cost" in notes
    assert "Near-duplicates" in notes
    assert "one document per topic" in " ".join(generation_notes(DPSynRAGSpec(documents=0)))
    automatic = " ".join(generation_notes(DPSynRAGSpec()))  # the default
    assert "at most as many as the topics' released counts add up to, and at least one per topic" in automatic
    assert "released DP size count" in automatic


def test_documents_written_in_the_corpus_s_own_forms_keep_the_shape_and_topic_notes():
    """The certificate of a run whose documents followed the released forms still states the corpus shape, the
    co-keywords and the near-duplicate filter, and names the form writer instead of the shipped form's realisation."""
    spec = DPSynRAGSpec(text="realised")
    in_forms = " ".join(generation_notes(spec, in_forms=True))
    assert "at most as many as the topics' released counts add up to, and at least one per topic" in in_forms
    assert "Near-duplicates" in in_forms and "released forms" in in_forms and "Junk rule" in in_forms
    assert "Public realisation" not in in_forms and "Public realisation" in " ".join(generation_notes(spec))
    assert ("Topic descriptions" in in_forms) == bool(spec.cluster_keywords)


# -- the wizard: the Task page asks how many, the Review page shows the allocation ----------------------------


def test_the_task_page_sets_the_documents_and_says_how_they_are_shared(wizard, tmp_path):
    from tests.helpers import wizard_notes

    controller = wizard.controller
    controller.load_data(str(wizard_notes(tmp_path)), "note", "id", "patient")
    controller.spec.dp_synrag.documents = DPSynRAGSpec().documents  # the library's default (tiny sizes say 0)
    page = wizard.task_page
    page.initializePage()
    assert page.count_mode.currentData() == -2 and not page.count.isEnabled()  # the default: automatic
    assert "at most 200 and at least one per topic" in page.count_note.text()
    page.count.setValue(30)  # a number typed: "This many"
    assert page.count.isEnabled() and page.count_mode.currentText() == "This many:"
    page.store()
    assert controller.spec.dp_synrag.documents == 30 and "30 documents, shared among the topics" in page.count_note.text()
    page.count_mode.setCurrentIndex(page.count_mode.findData(-1))
    page.store()
    assert controller.spec.dp_synrag.documents == -1 and "noisy count" in page.count_note.text()
    page.initializePage()  # Back and forth keeps it
    assert page.count_mode.currentData() == -1


def test_the_review_page_names_the_documents_per_topic():
    from desktop.wizard.review_page import allocation_words

    words = allocation_words([("gout", 40.2, 3), ("asthma", 90.1, 7)])
    assert words.index("asthma 7") < words.index("gout 3") and "noisy count" in words
    assert allocation_words([]) == ""
    many = allocation_words([(f"t{i}", 1.0, 1) for i in range(20)])
    assert "and 8 more topics" in many


# -- length: the form's public length, or a charged DP median -------------------------------------------------


def test_a_document_is_shortened_by_whole_sentences_and_keeps_every_released_word():
    text = ("Consultation note. K. M., 47, reports wheeze for two weeks. He also walks his dog every day in the park. "
            "He likes tea. Impression: asthma. Plan: an inhaler, review in 4 weeks.\nKey terms: night cough.")
    words = ("asthma", "wheeze", "inhaler", "night cough")
    short = fit_length(text, words, 12)
    assert short.startswith("Consultation note. K. M., 47, reports wheeze")
    assert "dog" not in short and "tea" not in short  # filler beyond the target goes
    assert "Impression: asthma." in short and "inhaler" in short and short.endswith("Key terms: night cough.")
    assert fit_length(text, words, 0) == text and fit_length(text, words, 200) == text
    assert len(short.split()) < len(text.split())


def test_the_form_length_is_the_median_of_the_shipped_demonstrations():
    from core.methods.dp_synrag.shape.examples import demonstrations, shipped_example

    example = shipped_example("clinical_note")
    lengths = sorted(len(d.document.split()) for d in demonstrations(example))
    assert form_length(example) == round((lengths[1] + lengths[2]) / 2) and 20 < form_length(example) < 80
    assert target_words(DPSynRAGSpec(), None, form_length(example)) == form_length(example)
    assert target_words(DPSynRAGSpec(length="none"), None, 40) == 0
    assert target_words(DPSynRAGSpec(length="dp"), 27.6, 40) == 28


@statistical
def test_the_dp_median_is_charged_and_lands_near_the_median(tmp_path):
    spec = DPSynRAGSpec(text="realised", length="dp", R=10)
    p = plan_dp_synrag(spec, 10.0, 1e-6)
    assert p.releases_length and p.rho_length == pytest.approx(0.02 * p.rho_total)
    assert p.epsilon_length == pytest.approx(math.sqrt(8 * p.rho_length))
    rng = np.random.default_rng(3)
    units = [Unit(uid=f"u{i}", text=" ".join(["w"] * int(n))) for i, n in enumerate(rng.integers(15, 45, 400))]
    true = float(np.median(unit_lengths(units)))
    charges: list = []
    draws = [release_length(units, p, _ctx(tmp_path / f"c{i}", charges, seed=None)) for i in range(60)]  # type: ignore[arg-type]
    assert charges == [(STAGE_LENGTH, pytest.approx(p.rho_length))] * 60  # charged once per draw, before it
    assert all(MIN_WORDS <= d <= MAX_WORDS for d in draws)  # type: ignore[operator]
    assert abs(float(np.median(draws)) - true) < 3 and len(set(draws)) > 50  # OS entropy: no two alike
    again = release_length(units, p, _ctx(tmp_path / "c0", charges, seed=None))  # a resume reuses it
    assert again == draws[0] and len(charges) == 60
    assert release_length(units, plan_dp_synrag(DPSynRAGSpec(R=10, length="form"), 10.0, 1e-6), _ctx(tmp_path / "n")) is None
    # the default ("auto") is the corpus's own length with the public writer, and nothing drawn or charged without it
    assert DPSynRAGSpec().length_setting == "dp" and plan_dp_synrag(DPSynRAGSpec(R=10), 10.0, 1e-6).releases_length
    assert DPSynRAGSpec(text="private").length_setting == "none"
    assert not plan_dp_synrag(DPSynRAGSpec(R=10, text="private"), 10.0, 1e-6).releases_length


def test_the_length_statistic_is_a_stage_of_the_plan_and_the_charges_equal_it(tmp_path, privet_home):
    spec = tiny_spec(tmp_path, settings=TINY_SIZES, text="realised", length="dp", realisation_tokens=8)
    planned = plan(spec)
    assert STAGE_LENGTH in dict(planned.stages)
    result = run_pipeline(spec)
    charges = [e for e in Ledger().entries(result.record.dataset_id) if e["kind"] == "charge"]
    assert [c["stage"] for c in charges] == [s for s, _ in planned.stages]
    assert math.fsum(c["rho"] for c in charges) == pytest.approx(planned.rho_total, rel=1e-9)
    assert dict(planned.stages)[STAGE_LENGTH] == pytest.approx(next(c["rho"] for c in charges
                                                                    if c["stage"] == STAGE_LENGTH))
    assert any(s["stage"] == STAGE_LENGTH for s in result.record.stages)
    assert any(n.startswith("Length:") and "charged above" in n for n in result.record.scope_notes)
    spec.dp_synrag.text = "topic_line"
    assert any('length = "dp"' in p for p in spec.problems())  # charged for nothing: refused
