"""Never spend for nothing (issue 22): the topic forecast, `privet plan`, and `privet run`'s consent."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from tests.helpers import set_settings, tiny_spec

from core.cli import main as privet
from core.demo.clinic import make_clinic_corpus
from core.demo.files import write_clinic
from core.common.errors import PrivetError
from core.ledger import Ledger
from core.methods.dp_synrag.shape.adaptive import MIN_TOPICS
from core.run.pipeline import plan, run_pipeline
from core.privacy.forecast import ABOUT_ZERO_TOPICS, TOP_TOPIC_SHARE, forecast_topics, significance_threshold
from core.specs.runspec import RunSpec


def test_a_topic_far_above_the_threshold_counts_one_and_far_below_counts_zero() -> None:
    # n = 4000: the commonest topic holds 1000 units; a threshold of 10 with σ_h = 1 clears every topic
    assert forecast_topics(4000, 3, 1.0, 10.0).expected_topics == pytest.approx(3.0)
    # n = 40: the commonest holds 10 units, the threshold is 100 units away in σ_h = 1: nothing clears
    dead = forecast_topics(40, 3, 1.0, 110.0)
    assert dead.expected_topics < 1e-9 and dead.about_zero
    # exactly at the threshold a topic clears half the time
    at = forecast_topics(400, 1, 5.0, 400 * TOP_TOPIC_SHARE)
    assert at.expected_topics == pytest.approx(0.5) and not at.about_zero and ABOUT_ZERO_TOPICS == 0.5
    assert dead.units_for_one_topic == math.ceil(110.0 / TOP_TOPIC_SHARE)


def test_expected_topics_grow_with_the_corpus_and_shrink_with_the_noise() -> None:
    sizes = [forecast_topics(n, 50, 8.0, significance_threshold(8.0, 20000)).expected_topics
             for n in (100, 300, 1000, 3000)]
    assert sizes == sorted(sizes) and sizes[0] < 0.5 < sizes[-1] <= 50
    noisy = [forecast_topics(1000, 50, s, significance_threshold(s, 20000)).expected_topics for s in (2.0, 8.0, 30.0)]
    assert noisy == sorted(noisy, reverse=True)


def test_co_keywords_can_only_lower_the_described_topics() -> None:
    f = forecast_topics(1000, 20, 5.0, 30.0, sigma_c=4.0, min_co_keyword_support=60.0)
    assert 0.0 < f.expected_described_topics < f.expected_topics
    assert forecast_topics(1000, 20, 5.0, 30.0).expected_described_topics == f.expected_topics


def demo_spec(tmp_path: Path, epsilon: float = 4.0) -> RunSpec:
    """200 demo patients (the public demo generator) with the seed's token stage and split (round 3's wizard
    default; the realised default of round 4 gives the topics more of the budget, tested in test_defaults.py)."""
    write_clinic(make_clinic_corpus(200), tmp_path / "clinic")
    spec = tiny_spec(tmp_path, tmp_path / "clinic" / "notes.csv", settings={"text": "private"})  # the library's sizes
    spec.data.person_column = "patient"
    spec.privacy.epsilon = epsilon
    return spec


def test_200_demo_patients_at_epsilon_4_with_the_wizard_split_expect_about_0_topics(tmp_path, privet_home):
    summary = plan(demo_spec(tmp_path))
    forecast = summary.topic_forecast
    assert forecast is not None and summary.n_units == 200
    assert forecast.expected_topics < 0.05 and summary.spends_for_nothing
    assert not summary.needs_spend_anyway  # at the loaded count it only warns (SPEC §6): no bound, no refusal
    # the issue: "a topic needs about 124 units" (today a little more: phrase discovery's δ_p lowers the ρ of ε = 4)
    assert forecast.min_topic_support == pytest.approx(124, abs=5)
    assert any("public-only baseline" in w for w in summary.warnings)
    assert any(a.startswith("Raise ε to") for a in summary.forecast_advice)
    assert any("units or more" in a for a in summary.forecast_advice)
    # the demo's own spec at ε = 10 on the shipped 600 notes expects topics and needs no consent
    from core.common.paths import resources_dir

    shipped = RunSpec.load(str(resources_dir() / "demo" / "demo_run.toml"))
    good = plan(shipped)
    assert good.topic_forecast is not None and good.topic_forecast.expected_topics > 3 and not good.spends_for_nothing
    # one sentence for `privet plan` and the Confirm page: the range, and how the documents are shared
    low, high = good.topic_forecast.documents_range
    span = str(high) if low == high else f"{low} to {high}"
    assert good.documents_words is not None and good.documents_words.startswith(f"{span} (shared among the topics")


def test_plan_shows_the_forecast_and_what_would_help(tmp_path, privet_home, capsys):
    spec_path = tmp_path / "spec.toml"
    spec = demo_spec(tmp_path)
    spec.save(spec_path)
    assert privet(["plan", str(spec_path)]) == 0
    out = capsys.readouterr().out
    assert "Expected documents: 0 to" in out and f"at most R = {MIN_TOPICS} topics" in out
    assert "What would help:" in out and "'privet run' does not refuse this plan" in out and "--spend-anyway" not in out
    spec.privacy.max_units = 200  # a public bound stated in advance: the run is refused at it
    spec.save(spec_path)
    assert privet(["plan", str(spec_path)]) == 0
    out = capsys.readouterr().out
    assert "What would help:" in out and "refuses this plan unless given --spend-anyway" in out


def bounded_demo_spec(tmp_path: Path) -> RunSpec:
    """``demo_spec`` with the public bound of its 200 patients stated ([privacy] max_units)."""
    spec = demo_spec(tmp_path)
    spec.privacy.max_units = 200
    return spec


def test_run_refuses_without_consent_and_charges_nothing(tmp_path, privet_home, capsys):
    spec_path = tmp_path / "spec.toml"
    bounded_demo_spec(tmp_path).save(spec_path)
    assert privet(["run", str(spec_path), "--quiet"]) != 0
    err = capsys.readouterr().err
    assert "Nothing was charged" in err and "the 200 units of the public bound" in err and "--spend-anyway" in err
    assert not (privet_home / "ledger.db").exists() or not [
        e for e in Ledger().entries() if e["kind"] == "charge"]
    assert not (tmp_path / "release").exists()
    with pytest.raises(PrivetError, match="Nothing was charged"):
        run_pipeline(RunSpec.load(spec_path), require_consent=True)


def test_run_with_consent_spends_and_runs(tmp_path, privet_home, capsys):
    spec = bounded_demo_spec(tmp_path)
    set_settings(spec, {"R": 20, "T": 4, "self_filter": False, "max_prompt_tokens": 48})  # keep it quick
    spec_path = tmp_path / "spec.toml"
    spec.save(spec_path)
    assert plan(spec).needs_spend_anyway
    assert privet(["run", str(spec_path), "--quiet", "--spend-anyway"]) == 0
    charged = [e for e in Ledger().entries() if e["kind"] == "charge"]
    assert charged and sum(e["rho"] for e in charged) == pytest.approx(plan(spec).rho_total, rel=1e-9)
    # the spec field is the same consent (the wizard's "Spend anyway" box sets it)
    spec.privacy.spend_anyway = True
    spec.output.folder = str(tmp_path / "release2")
    assert run_pipeline(spec, require_consent=True).n_synthetic >= 0


def test_the_range_reaches_down_to_the_shapes_floor_and_the_estimate_prices_the_likely_documents():
    from core.privacy.forecast import FEWEST_TOPICS, TopicForecast

    many = TopicForecast(expected_topics=60.0, expected_described_topics=30.0, commonest_topic_units=250.0, R=200, n_units=1000,
                         min_topic_support=18.0, min_co_keyword_support=10.0,
                         fewest_topics=25.0, most_topics=170.0)
    assert many.documents_range == (FEWEST_TOPICS - 1, 170)  # held topics only, as few as the floor, less a filtered one
    assert many.likely_documents == FEWEST_TOPICS
    few = TopicForecast(expected_topics=3.0, expected_described_topics=2.0, commonest_topic_units=50.0, R=40, n_units=200,
                         min_topic_support=18.0, min_co_keyword_support=10.0,
                        fewest_topics=0.0, most_topics=6.0)
    assert few.documents_range == (0, 6) and few.likely_documents == 6  # never above the high end
    asked = TopicForecast(expected_topics=3.0, expected_described_topics=2.0, commonest_topic_units=50.0, R=40, n_units=200,
                         min_topic_support=18.0, min_co_keyword_support=10.0,
                          fewest_topics=0.0, most_topics=6.0, documents=400)
    assert asked.likely_documents == 400


def test_the_automatic_numbers_low_end_on_a_small_corpus_is_what_the_few_topics_prior_would_write():
    """On 200 units the few-topics prior expects under one topic, yet the automatic number writes the one it
    expects about as many times as the units it stands for: the range starts there, not at 0 (round 4, s. 17)."""
    from core.privacy.forecast import FEW_TOPICS_PRIOR, FILTER_DROP_SHARE, expected_units, forecast_topics

    top, exponent = FEW_TOPICS_PRIOR
    # with (almost) no noise a topic clears exactly when its prior units reach the threshold
    sizes = [400 * top / j**exponent for j in range(1, 13)]
    assert expected_units(400, 12, 1e-9, 25.0) == pytest.approx(sum(s for s in sizes if s >= 25.0))
    small = forecast_topics(200, 12, 2.97, 17.9, documents=200, capped=True)
    assert small.fewest_topics < 1.0  # the old rule said "0 to 200" here
    low, high = small.documents_range
    assert low == math.floor((1.0 - FILTER_DROP_SHARE) * small.fewest_units) and 10 <= low < 0.7 * 200 and high == 200
    assert forecast_topics(100, 10, 2.97, 17.9, documents=100, capped=True).documents_range[0] == 0  # none clears
    # N asked for (not automatic) is written whenever a topic is found: unchanged
    assert forecast_topics(800, 50, 2.0, 10.0, documents=300).documents_range == (270, 300)
