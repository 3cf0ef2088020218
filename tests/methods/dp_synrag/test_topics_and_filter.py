"""Topic words, the vocabulary keyword extractor, the self-filter's calibration and the planner guidance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.methods.dp_synrag.release.clusters import soft_clusters
from core.methods.dp_synrag.release.histogram import GENERIC_ZIPF, name_threshold, topic_words
from core.methods.dp_synrag.shape.examples import form_words
from core.methods.dp_synrag.vocab.vocabulary import (
    Vocabulary,
    english_zipf,
    in_form,
    load_vocabulary,
    postprocess_keywords,
    specific_entries,
    split_words,
)
from core.privacy.forecast import significance_threshold
from core.methods.dp_synrag.guidance import guide
from core.methods.private_prediction.self_filter import offtopic_sentences, public_threshold, run_self_filter
from core.common.links import without_links
from core.common.progress import NULL_REPORTER
from core.specs.document_forms import shipped_example
from core.specs.runspec import DPSynRAGSpec


@pytest.fixture()
def vocab() -> Vocabulary:
    return Vocabulary.from_words(
        ["weeks", "patient", "insomnia", "tusfosemia", "skin rash", "rash", "night sweats", "daily", "zorblax"]
    )


def test_english_zipf_is_public_word_frequency():
    assert english_zipf("weeks") > english_zipf("insomnia") > english_zipf("tusfosemia") == 0.0


def test_vocabulary_extractor_keeps_the_rarest_entries_of_the_unit(vocab):
    text = "Patient reports insomnia and a skin rash for 3 weeks; diagnosed with Tusfosemia. Daily dosing."
    assert specific_entries(text, vocab, 3) == ["tusfosemia", "insomnia", "skin rash"]
    assert len(specific_entries(text, vocab, 10)) == 6  # patient, daily, weeks too ("rash" is inside "skin rash")
    assert specific_entries("nothing known here", vocab, 4) == []
    with pytest.raises(ValueError):
        specific_entries(text, vocab, 0)


def test_vocabulary_extractor_weighs_how_often_the_unit_uses_an_entry(vocab):
    """TF-IDF: an article that keeps coming back to its subject keeps it over a rarer word met once."""
    once = "Insomnia for weeks; zorblax."
    assert specific_entries(once, vocab, 1) == ["zorblax"]  # each once: the rarest
    often = "Insomnia at night, insomnia by day, insomnia for weeks; zorblax."
    assert specific_entries(often, vocab, 1) == ["insomnia"]
    assert english_zipf("insomnia") > english_zipf("zorblax")


def test_links_and_handles_give_no_keywords():
    """A tweet's shortened link ("nyti.ms", "reut.rs") is an address: its letters are not what it is about."""
    english = load_vocabulary()
    tweet = "Ebola spreads in Liberia http://nyti.ms/1abcD via @nytimeshealth, more at bit.ly/xyZ and www.cdc.gov/ebola"
    assert split_words(without_links(tweet)) == ["ebola", "spreads", "in", "liberia", "via", "more", "at", "and"]
    words = specific_entries(tweet, english, 10)
    assert {"ebola", "liberia"} <= set(words) and not {"ms", "ly", "nyti", "cdc", "gov", "http"} & set(words)
    assert split_words(without_links("RT @nprhealth: Flu season starts early")) == ["flu", "season", "starts", "early"]
    assert without_links("Dr. Smith said 3.5 percent of U.S. adults, e.g. in N.Y.") == (
        "Dr. Smith said 3.5 percent of U.S. adults, e.g. in N.Y.")  # abbreviations and numbers are not links


def test_specific_topic_words_need_a_significant_noisy_count(vocab):
    sigma_h = 1.0
    threshold = significance_threshold(sigma_h, len(vocab))
    assert threshold == pytest.approx(math.sqrt(2 * math.log(len(vocab))) + 1.5)
    counts = {"weeks": 90, "patient": 80, "daily": 70, "insomnia": 40, "tusfosemia": 25, "zorblax": threshold - 0.01}
    noisy = np.array([counts.get(w, 0.0) for w in vocab.words])
    W = topic_words(noisy, vocab, 2, sigma_h, "specific")
    # the two most specific significant words, returned most frequent first (SPEC §2.2 order)
    assert W == ["insomnia", "tusfosemia"]
    assert "zorblax" not in topic_words(noisy, vocab, 10, sigma_h, "specific")  # below the threshold
    assert topic_words(noisy, vocab, 2, sigma_h, "frequent") == ["weeks", "patient"]
    assert topic_words(np.zeros(len(vocab)), vocab, 5, sigma_h, "specific") == []


def test_a_generic_english_word_is_no_topic_while_enough_others_clear():
    words = ["new", "help", "try", "ebola", "weight", "insomnia", "tusfosemia"]
    vocab = Vocabulary.from_words(words)
    assert all(english_zipf(w) >= GENERIC_ZIPF for w in words[:3]) and all(english_zipf(w) < GENERIC_ZIPF for w in words[3:])
    noisy = np.full(len(words), 50.0)
    assert set(topic_words(noisy, vocab, 10, 1.0, "specific")) == set(words[3:])  # public frequency only
    few = np.array([50.0 if w in words[:5] else 0.0 for w in vocab.words])  # two specific words clear: generic ones stay
    assert set(topic_words(few, vocab, 10, 1.0, "specific")) == set(words[:5])


def test_the_forms_words_are_never_keywords():
    """A film profile repeats its genres ("Drama" in most films): by TF-IDF they took every keyword slot and no
    title was left to become a topic. The form's public words (its example's and demonstrations' form words) are
    never keywords, by either extractor; a phrase of form words only ("sci fi") neither."""
    english = load_vocabulary()
    sci_fi = Vocabulary.from_words([*english.words, "sci fi", "forrest gump", "shawshank redemption"])
    profile = ("K. M. rated these films highly: Forrest Gump (Comedy, Drama, Romance), The Shawshank Redemption "
               "(Crime, Drama), Alien (Horror, Sci-Fi), Heat (Action, Crime, Drama) and Fargo (Comedy, Crime, Drama).")
    form = form_words(shipped_example("film_ratings"))
    assert {"drama", "comedy", "crime", "sci", "fi"} <= form
    plain = specific_entries(profile, sci_fi, 4)
    assert "drama" in plain  # without the form: repeated genres crowd the keywords
    keywords = specific_entries(profile, sci_fi, 4, form)
    assert {"forrest gump", "shawshank redemption"} <= set(keywords)
    assert not {"drama", "comedy", "crime", "sci fi", "rated", "films"} & set(keywords)
    assert postprocess_keywords("drama, forrest gump, sci fi, fargo", sci_fi, 4, form) == ["forrest gump", "fargo"]
    assert in_form("sci fi", form) and not in_form("forrest gump", form) and not in_form("drama", frozenset())


def test_a_released_corpus_name_is_a_topic_at_the_lower_bar_of_a_name(vocab):
    """Phrase discovery's released names (no public list holds them) already have about τ_p units behind them:
    they clear σ_h·√(2 ln n) for n names, not the whole vocabulary's bar; every other word keeps that bar."""
    sigma_h = 2.0
    names = frozenset({"zorblax", "quintessa"})
    name_bar = name_threshold(sigma_h, len(names))
    assert name_bar == pytest.approx(sigma_h * math.sqrt(2 * math.log(2))) and name_bar < significance_threshold(
        sigma_h, len(vocab))
    extended = Vocabulary.from_words([*vocab.words, *sorted(names)])
    counts = {"zorblax": name_bar + 0.01, "quintessa": name_bar - 0.01, "insomnia": name_bar + 0.01}
    noisy = np.array([counts.get(w, 0.0) for w in extended.words])
    assert topic_words(noisy, extended, 10, sigma_h, "specific", corpus_names=names) == ["zorblax"]
    assert topic_words(noisy, extended, 10, sigma_h, "specific") == []  # without the names: the vocabulary's bar
    assert name_threshold(sigma_h, 40) > name_threshold(sigma_h, 4)  # more names, more noise draws to rise above


def test_fewer_topic_words_still_cluster_rarest_first():
    clusters = soft_clusters([["a", "b"], ["a"], ["b", "c"]], ["a", "b"], L=1)
    assert clusters == [[1], [0, 2]]  # "b" (rarer, visited first) takes units 0 and 2


class _ConstantEmbedder:
    """Task text -> e0; texts containing 'fever' -> close to e0; anything else -> orthogonal."""

    dim = 3

    def embed(self, texts, batch_size=64):
        rows = []
        for t in texts:
            if t.startswith("TASK"):
                rows.append([1.0, 0.0, 0.0])
            elif "fever" in t:
                rows.append([0.9, math.sqrt(1 - 0.81), 0.0])
            else:
                rows.append([0.0, 0.0, 1.0])
        return np.asarray(rows, dtype=np.float32)


def test_similarity_self_filter_is_calibrated_on_public_sentences_only():
    sentences = offtopic_sentences()
    assert len(sentences) >= 20 and not any(s.startswith("#") for s in sentences)
    texts = {0: "fever and cough for two days", 1: "the weather is nice", 2: "   ", 3: "high fever"}
    decision = run_self_filter(texts, "TASK: answer questions", None, _ConstantEmbedder(), NULL_REPORTER, "similarity")
    assert decision.kept == {0: "fever and cough for two days", 3: "high fever"}
    assert decision.threshold == pytest.approx(0.0)  # every shipped sentence is off topic for this embedder
    assert public_threshold([0.0, 1.0, 2.0, 3.0], 0.5) == pytest.approx(1.5)
    with pytest.raises(ValueError):
        run_self_filter(texts, "TASK", None, _ConstantEmbedder(), NULL_REPORTER, "nonsense")


def test_self_filter_keeps_everything_when_the_forms_public_example_does_not_pass_it():
    texts = {0: "fever and cough for two days", 1: "the weather is nice"}
    on_task = run_self_filter(texts, "TASK", None, _ConstantEmbedder(), NULL_REPORTER, "similarity", "fever note")
    assert on_task.judged and on_task.kept == {0: "fever and cough for two days"}
    broad = run_self_filter(texts, "TASK", None, _ConstantEmbedder(), NULL_REPORTER, "similarity", "a news story")
    assert not broad.judged and broad.kept == texts


def test_the_shipped_news_form_is_a_reference_and_a_custodian_example_loses_its_placeholders():
    from core.methods.dp_synrag.shape.examples import demonstration, form_reference

    assert form_reference(shipped_example("news_article")) == demonstration(shipped_example("news_article")).document
    assert form_reference("Visit of [name]. [Who] said that [what].") == "Visit of. said that."
    assert form_reference("") == ""


def test_guidance_warns_on_weak_plans_and_suggests_parameters():
    weak = guide(DPSynRAGSpec(k=5, T=70, text="private"), 1.0, 1e-6, 200, 30000)
    assert weak.consensus_nats < 1 and any("barely steer" in w for w in weak.warnings)
    assert any("mentioned by about" in w for w in weak.warnings)
    fine = guide(DPSynRAGSpec(text="private"), 10.0, 1e-6, 8000, 30000)
    assert fine.warnings == [] and fine.consensus_nats > 2
    small = guide(DPSynRAGSpec(text="private"), 10.0, 1e-6, 240, 30000)
    assert small.suggestion["hist_fraction"] > fine.suggestion["hist_fraction"]
    assert small.suggested_min_topic_support < small.min_topic_support
    assert 24 <= small.suggestion["T"] <= 70 and small.suggestion["k"] <= 80
