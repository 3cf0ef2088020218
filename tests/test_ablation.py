"""`privet evaluate --ablation` on the tiny models: every row runs, rows are cumulative."""

from __future__ import annotations

from core.evaluation.ablation import ROUND_ONE, STEPS, ablation_markdown, ablation_settings, run_ablation
from core.evaluation.config import make_config


def test_ablation_rows_are_cumulative_and_start_from_round_one():
    rows = ablation_settings()
    assert [label for label, _ in rows] == [label for label, _ in STEPS]
    assert rows[0][1] == ROUND_ONE
    for (_, before), (_, after), (_, change) in zip(rows, rows[1:], STEPS[1:]):
        assert after == {**before, **change}
    assert rows[-1][1]["clip"] == "dclip" and rows[-1][1]["public_prompt"] == "keyword"


def test_ablation_runs_every_row_on_tiny_models(tmp_path):
    config = make_config("clinic", tmp_path / "out", "tiny", epsilons=(10.0,), methods=("dp_synrag",))
    result = run_ablation(config, tmp_path / "work")
    assert len(result["rows"]) == len(STEPS)
    for row in result["rows"]:
        assert row["documents"] >= 0 and 0.0 <= row["rag_accuracy"] <= 1.0
    table = ablation_markdown(result)
    assert table.count("\n| ") == len(STEPS) + 1  # header + one line per row
