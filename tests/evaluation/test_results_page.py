"""docs/results.md is generated from docs/results/<dataset>/*.json (core/evaluation/results_page.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.evaluation.results_page import MAX_LINES, code_commit, regenerate, render_page, stamp, write_page
from tests.helpers import ROOT

COMMAND = ("privet evaluate --dataset clinic --out docs/results/clinic --scale tiny --epsilons 10 "
           "--methods dp_synrag --results-page docs/results.md")
DOWNSTREAM_COMMAND = ("privet evaluate --dataset news --out docs/results/news --scale tiny --epsilons 10 "
                      "--methods dp_synrag --downstream")


def _attacks(auc: float) -> list[dict]:
    return [{"attack": a, "auc": auc, "ci_low": auc - 0.1, "ci_high": auc + 0.1, "n_members": 30,
             "n_non_members": 30} for a in ("nearest_similarity", "loss", "reference")]


def results_fixture() -> dict:
    """A results.json as core/evaluation/report.py writes it (only the fields the page reads, and a few more)."""
    synthetic, public, private = "dp_synrag ε=10", "public-only (ε = 0, no private data)", "non-private (members)"
    coverage = {"best_cosine": 0.5, "content_words": 0.3, "mmd2": 0.12, "mmd2_real": 0.05, "junk_rate": 0.0,
                "distinct_2": 0.8, "mean_words": 40.0, "n_documents": 10}
    return {
        "dataset": "clinic", "scale": "tiny", "epsilons": [10.0], "methods": ["dp_synrag"],
        "models": {"llm": "tiny-llm", "embedder": "tiny-embedder"},
        "split": {"members": 30, "non_members": 15, "canaries": 3, "benign_questions": 4, "attack_questions": 2},
        "settings": {"dp_synrag": {"text": "realised"}},
        "runs": [{"label": synthetic, "epsilon": 10.0, "delta": 1e-4, "rho_total": 2.0, "n_synthetic": 10,
                  "seconds": 1.0}],
        "coverage": [{"corpus": synthetic, "epsilon": 10.0, **coverage},
                     {"corpus": public, "epsilon": 0.0, **coverage, "junk_rate": 0.5},
                     {"corpus": "same-size real sample (members), n = 10", "epsilon": None, **coverage}],
        "roles": [{"corpus": synthetic, "epsilon": 10.0, "pairs": 18, "role_accuracy": 0.83, "by_role": {}}],
        "utility": [{"corpus": c, "method": m, "epsilon": e, "n_documents": n, "n_questions": 4,
                     "retrieval_hit_rate": r, "answer_accuracy": 0.0}
                    for c, m, e, n, r in ((synthetic, "dp_synrag", 10.0, 10, 0.5), (public, "public_only", 0.0, 10, 0.0),
                                          (private, "private", None, 30, 0.75), ("no retrieval", "none", None, 0, None))],
        "leakage": [{"corpus": c, "in_corpus": {"member_rate": 0.0, "canaries_reproduced": 0, "control_rate": 0.0},
                     "benign_answers": {"member_rate": 0.0}, "attack_answers": {"member_rate": 0.0, "control_rate": 0.0},
                     "attack_success": 0.0} for c in (synthetic, public, private)],
        "membership": [{"corpus": c, "attacks": _attacks(auc)} for c, auc in ((synthetic, 0.55), (private, 1.0))],
        "quality": [{"corpus": synthetic, "n_documents": 10, "mean_words": 40.0, "distinct_1": 0.5, "distinct_2": 0.8,
                     "self_bleu": 0.1, "frechet_to_private": 1.0, "mmd2_to_private": 0.1}],
        "dp_rag": {"epsilon_total": 10.0, "delta": 1e-4, "n_questions": 4, "synthetic_corpus": synthetic,
                   "synthetic_accuracy": 0.0, "private_accuracy": 0.25, "none_accuracy": 0.0,
                   "points": [{"queries": q, "epsilon_per_query_basic": 10.0 / q, "clip": 0.1, "accuracy": 0.0}
                              for q in (1, 10)]},
        "notes": ["A note the evaluation wrote."],
        "seconds": 60.0, "finished_at": "2026-12-03T10:00:00+00:00", "commit": "abc1234",
        "command": COMMAND,
    }


def downstream_fixture() -> dict:
    rows = [{"corpus": c, "epsilon": e, "n_train": n, "tfidf": {"accuracy": 0.4, "macro_f1": 0.3},
             "embedding": {"accuracy": 0.5, "macro_f1": 0.4}}
            for c, e, n in (("dp_synrag ε=10", 10.0, 40), ("majority class (of the members)", None, 0))]
    return {"dataset": "news", "scale": "tiny", "labels": ["a", "b"], "classifiers": {"tfidf": "TF-IDF"},
            "split": {"members": 100, "non_members": 50, "held_out_scored": 50}, "rows": rows,
            "models": {"llm": "tiny-llm", "embedder": "tiny-embedder"}, "seconds": 30.0,
            "finished_at": "2026-12-03T11:00:00+00:00", "commit": "abc1234", "command": DOWNSTREAM_COMMAND}


def _write(folder: Path, name: str, result: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")


def _sections(text: str) -> list[str]:
    return re.split(r"^### ", text, flags=re.M)[1:]


def test_the_page_from_fixtures_is_short_and_every_table_has_its_command(tmp_path):
    results = tmp_path / "docs" / "results"
    _write(results / "clinic", "results.json", results_fixture())
    _write(results / "news", "downstream.json", downstream_fixture())
    page = write_page(tmp_path / "docs" / "results.md")
    text = page.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_LINES
    assert "never" in text.split("## ")[0]  # the intro says the figures are never exported
    assert text.index("## clinic") < text.index("## news")
    sections = _sections(text)
    assert len(sections) == 2
    for section, command in zip(sections, (COMMAND, DOWNSTREAM_COMMAND), strict=True):
        assert f"```sh\n{command}\n```" in section
        assert "|---|" in section  # a table, under its command
        assert "2026-12-03" in section and "abc1234" in section
    clinic = sections[0]
    assert "| dp_synrag ε=10 | 10 | 10 | 0.50 | 0.00 | 0.50 | 0.30 | 0.120 (0.050) | 0.00 | 0.80 | 0.83 (18 pairs) |" \
        in clinic
    assert "0.55 [0.45, 0.65]" in clinic and "- A note the evaluation wrote." in clinic
    assert "| no retrieval |" not in clinic  # a row without a corpus stays in summary.md
    assert "| dp_synrag ε=10 | 10 | 40 | 0.400 / 0.300 | 0.500 / 0.400 |" in sections[1]


def test_another_run_of_a_datasets_evaluation_is_shown_after_its_main_run_with_its_own_tables(tmp_path):
    """results-<tag>.json: the same evaluation with other settings (e.g. the clinic with 400 members), in the
    dataset's one folder, after results.json and before the downstream runs; its tables are summary-<tag>.md."""
    results = tmp_path / "docs" / "results"
    _write(results / "clinic", "results.json", results_fixture())
    _write(results / "clinic", "results-400.json", {**results_fixture(), "command": COMMAND + " --members 0"})
    _write(results / "clinic", "downstream.json", downstream_fixture())
    (results / "clinic" / "summary-400.md").write_text("tables", encoding="utf-8")
    text = write_page(tmp_path / "docs" / "results.md").read_text(encoding="utf-8")
    sections = _sections(text)
    assert [s.split("\n")[0] for s in sections] == ["`privet evaluate` (clinic/results.json)",
                                                    "`privet evaluate` (clinic/results-400.json)",
                                                    "`privet evaluate --downstream` (clinic/downstream.json)"]
    assert f"```sh\n{COMMAND} --members 0\n```" in sections[1]
    assert "[clinic/summary-400.md](results/clinic/summary-400.md)" in sections[1]


def test_a_page_over_its_limit_is_refused(tmp_path):
    results = tmp_path / "results"
    for i in range(12):
        _write(results / f"set{i:02d}", "results.json", results_fixture())
    with pytest.raises(ValueError, match="over its limit"):
        render_page(results, tmp_path / "results.md")


def test_regenerate_after_a_run_writes_the_page_and_stamps_the_commit(tmp_path, capsys):
    results = tmp_path / "results"
    result = stamp({k: v for k, v in results_fixture().items() if k not in ("commit", "finished_at")})
    assert result["commit"] and result["finished_at"]
    _write(results / "clinic", "results.json", result)
    assert regenerate(str(tmp_path / "results.md"), results / "clinic") == 0
    assert "## clinic" in (tmp_path / "results.md").read_text(encoding="utf-8")
    regenerate(str(tmp_path / "results.md"), tmp_path / "elsewhere")
    assert "does not show this run" in capsys.readouterr().err
    assert regenerate(None, results / "clinic") == 0


def test_code_commit_outside_a_checkout_is_none(tmp_path):
    assert code_commit(tmp_path) is None


def test_the_cli_records_the_results_page_option():
    from core.cli import build_parser
    from core.evaluation.cli import command_line

    args = build_parser().parse_args(COMMAND.split()[1:])
    assert args.results_page == "docs/results.md"
    assert command_line(args) == COMMAND


def test_docs_results_md_is_the_generated_page():
    """Nobody edits docs/results.md by hand: it is what the generator makes of docs/results/*/."""
    page = ROOT / "docs" / "results.md"
    assert page.read_text(encoding="utf-8") == render_page(ROOT / "docs" / "results", page)


def test_docs_results_keeps_one_folder_per_dataset_each_with_its_command():
    results = ROOT / "docs" / "results"
    folders = sorted(p.name for p in results.iterdir() if p.is_dir())
    assert set(folders) <= {"clinic", "news", "movielens", "healthtweets"}, folders
    for name in folders:
        files = [results / name / "results.json", *sorted((results / name).glob("results-*.json")),
                 *sorted((results / name).glob("downstream*.json"))]
        files = [f for f in files if f.exists()]
        assert files, f"docs/results/{name}/ holds no results.json or downstream.json"
        for f in files:
            assert json.loads(f.read_text(encoding="utf-8"))["command"].startswith("privet evaluate ")


def test_privet_evaluate_with_results_page_rewrites_the_page_after_the_run(tmp_path, monkeypatch):
    """The command's wiring (cmd_evaluate), with the evaluation itself stubbed: its tiny run is test_evaluation's."""
    import core.evaluation.evaluate
    from core.cli import main

    fixture = {k: v for k, v in results_fixture().items() if k not in ("command", "commit")}
    monkeypatch.setattr(core.evaluation.evaluate, "run_evaluation", lambda config, reporter: dict(fixture))
    out, page = tmp_path / "docs" / "results" / "clinic", tmp_path / "docs" / "results.md"
    code = main(["evaluate", "--dataset", "clinic", "--scale", "tiny", "--epsilons", "10", "--methods", "dp_synrag",
                 "--out", str(out), "--results-page", str(page), "--quiet"])
    assert code == 0
    recorded = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert recorded["commit"] and recorded["command"].endswith(f"--results-page {page}")
    assert f"```sh\n{recorded['command']}\n```" in page.read_text(encoding="utf-8")


def test_the_seeds_comparison_names_a_run_or_a_command_for_every_row_and_agrees_with_the_runs_in_the_tree():
    """docs/results/seed_comparison.json (the seed's Table 1 on the clinic): DP-Synth and Aug-PE beside DP-SynRAG,
    every row measured by a named run (round, code, command) or "not measured" with the command that would; a row
    of a run whose JSON is in the tree shows that JSON's figures."""
    results = ROOT / "docs" / "results"
    data = json.loads((results / "seed_comparison.json").read_text(encoding="utf-8"))
    methods = {r["method"] for r in data["rows"]}
    assert {"DP-SynRAG", "DP-Synth", "Aug-PE"} <= methods
    for run in data["runs"].values():
        assert run["code"] and run["round"] and "privet evaluate " in run["command"]
    for row in data["rows"]:
        if not row["run"]:
            assert row["would_run"].startswith("privet evaluate ") and row["why_not"]
            continue
        run = data["runs"][row["run"]]
        if not (results / run["source"]).is_file():
            continue  # an older run, kept in git history (its source says where)
        recorded = json.loads((results / run["source"]).read_text(encoding="utf-8"))
        assert recorded["command"] == run["command"] and recorded["commit"] == run["code"]
        utility = {u["corpus"]: u for u in recorded["utility"]}
        found = [u for u in utility.values() if u.get("n_documents") == row.get("documents")
                 and u.get("retrieval_hit_rate") == row.get("retrieval_proxy")
                 and u.get("answer_accuracy") == row.get("rag_accuracy")]
        dp_rag = [p["accuracy"] for p in recorded["dp_rag"]["points"]]
        assert found or (row["method"].startswith("query-time DP-RAG") and row["rag_accuracy"] in dp_rag), row
    assert "## The seed's comparison" in render_page(results, ROOT / "docs" / "results.md")
