"""`privet evaluate --ablation` on the tiny models: every row runs, rows are cumulative."""

from __future__ import annotations

import numpy as np

from core.evaluation.ablation import (
    ROUND_ONE,
    STEPS,
    TEXT_MODES,
    ablation_markdown,
    ablation_settings,
    real_sample_mmd2,
    run_ablation,
    text_settings,
    two_samples,
)
from core.evaluation.config import make_config


def test_ablation_rows_are_cumulative_and_start_from_round_one():
    rows = ablation_settings()
    assert [label for label, _ in rows] == [label for label, _ in STEPS]
    assert rows[0][1] == ROUND_ONE
    for (_, before), (_, after), (_, change) in zip(rows, rows[1:], STEPS[1:]):
        assert after == {**before, **change}
    assert rows[-1][1]["clip"] == "dclip" and rows[-1][1]["public_prompt"] == "keyword"


def test_text_rows_cover_every_way_of_writing_with_and_without_co_keywords():
    rows = text_settings()
    assert len(rows) == 2 * len(TEXT_MODES)
    assert {s["text"] for _, s in rows} == {mode for _, mode in TEXT_MODES}
    assert sum(1 for _, s in rows if s.get("cluster_keywords") == 0) == len(TEXT_MODES)


def test_text_ablation_runs_every_row_and_scores_junk_and_mmd_on_tiny_models(tmp_path):
    config = make_config("clinic", tmp_path / "out", "tiny", epsilons=(10.0,), methods=("dp_synrag",))
    result = run_ablation(config, tmp_path / "work")
    assert result["table"] == "text" and len(result["rows"]) == len(text_settings())
    for row in result["rows"]:
        if row["documents"]:
            assert 0.0 <= row["junk_rate"] <= 1.0 and row["mmd2_to_non_members"] >= 0.0
            assert 1 <= len(row["samples"]) <= 2
    topic_line = result["rows"][0]
    assert topic_line["settings"]["text"] == "topic_line"
    assert all(s.rstrip().endswith(":") for s in topic_line["samples"])  # the released topic line only
    table = ablation_markdown(result)
    assert table.count("\n| ") == len(text_settings()) + 1


def test_two_samples_and_the_real_sample_reference():
    assert two_samples([]) == [] and two_samples(["a"]) == ["a"] and two_samples(["a", "b", "c"]) == ["a", "b"]
    rng = np.random.default_rng(0)
    real, ref = rng.normal(size=(60, 8)), rng.normal(size=(40, 8))
    far = rng.normal(loc=3.0, size=(6, 8))
    from core.evaluation.quality import mmd_rbf

    assert real_sample_mmd2(real, ref, 6) < mmd_rbf(far, ref)
    assert np.isnan(real_sample_mmd2(real, ref, 0))


def test_ablation_runs_every_row_on_tiny_models(tmp_path):
    config = make_config("clinic", tmp_path / "out", "tiny", epsilons=(10.0,), methods=("dp_synrag",))
    result = run_ablation(config, tmp_path / "work", rows="settings")
    assert len(result["rows"]) == len(STEPS)
    for row in result["rows"]:
        assert row["documents"] >= 0 and 0.0 <= row["rag_accuracy"] <= 1.0
    table = ablation_markdown(result)
    assert table.count("\n| ") == len(STEPS) + 1  # header + one line per row
