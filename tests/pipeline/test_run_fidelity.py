"""The fidelity report at the end of a run (issue 55 item 4, SPEC §7): computed in the run's own process from the
loaded private corpus, the synthetic documents and the embedder the run loaded, kept in the private run folder,
printed (figures only) at the end of ``privet run``, and never in an export."""

from __future__ import annotations

import hashlib
import json
import re
import stat
from pathlib import Path

import numpy as np
from tests.helpers import tiny_spec

from core.cli import main as privet
from core.corpus import Corpus, LoadReport, Unit
from core.evaluation import run_fidelity
from core.evaluation.run_fidelity import (
    FIDELITY_FILE,
    NO_EMBEDDER,
    SCREEN_ONLY,
    custodian_fidelity,
    load_fidelity,
    terminal_lines,
)
from core.run.export import RELEASE_FILES
from core.run.pipeline import run_pipeline
from core.common.progress import ProgressEvent

PLANTED = "Quillberta Marsh-Oyelaran 90417"  # a canary planted in the report's real text


def _corpus(texts: list[str]) -> Corpus:
    return Corpus([Unit(f"u{i}", t) for i, t in enumerate(texts)], LoadReport(), "document", "test",
                  document_texts=list(texts))


def _real(n: int = 60) -> list[str]:
    illnesses = ("asthma", "gout", "eczema", "migraine", "anaemia")
    return [(f"Seen today: patient {i}, aged {20 + i % 50}. Presenting symptoms were {illnesses[i % 5]} and fatigue. "
             f"Plan: review in {1 + i % 4} weeks.") if i % 2 else
            (f"Discharge summary. Admitted with {illnesses[i % 5]}; treated and discharged home on day {i % 9}.")
            for i in range(n)]


class HashEmbedder:
    """A loaded embedder's stand-in: ``embed(texts)`` gives each text a fixed vector from its words."""

    def embed(self, texts):
        out = np.zeros((len(texts), 16))
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, int(hashlib.sha256(word.encode()).hexdigest(), 16) % 16] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


class Events:
    def __init__(self) -> None:
        self.events: list[ProgressEvent] = []

    def emit(self, event: ProgressEvent) -> None:
        self.events.append(event)

    def cancelled(self) -> bool:
        return True  # a cancel asked while the report is computed does not stop it: the run is written by then


def test_the_hook_writes_the_figures_and_the_pairs_to_the_private_run_folder(tmp_path):
    synthetic = [f"Seen today: someone, aged {30 + i}. Presenting symptoms were cough. Plan: rest." for i in range(20)]
    events = Events()
    report = custodian_fidelity(tmp_path, _corpus(_real()), synthetic, HashEmbedder(), events)
    assert report is not None and load_fidelity(tmp_path) == report
    assert stat.S_IMODE((tmp_path / FIDELITY_FILE).stat().st_mode) == 0o600, "private, like the run folder"
    assert 0.0 <= report["c2st_auc"] <= 1.0 and report["c2st_auc_real"] is not None
    assert report["own_form_share"] is not None and report["own_form_share_real"] is not None
    assert report["mmd2"] is not None and report["mmd2_real"] is not None and report["mmd2_note"] == ""
    assert len(report["pairs"]) == 3 and all(p["real"] in _real() for p in report["pairs"])
    assert [e.kind for e in events.events if e.stage == "fidelity"] == ["stage_start", "stage_end"]


def test_without_a_loaded_embedder_mmd2_is_left_out_and_says_why(tmp_path):
    report = custodian_fidelity(tmp_path, _corpus(_real()), _real(30)[::-1], None)
    assert report is not None and report["mmd2"] is None and report["mmd2_note"] == NO_EMBEDDER
    assert any("MMD²: " + NO_EMBEDDER in line for line in terminal_lines(report))


def test_no_documents_no_report_and_a_failure_never_fails_the_run(tmp_path, monkeypatch):
    assert custodian_fidelity(tmp_path, _corpus(_real()), ["", "  "]) is None
    assert not (tmp_path / FIDELITY_FILE).exists()

    def broken(*args, **kwargs):
        raise ValueError("no luck")

    monkeypatch.setattr(run_fidelity, "fidelity_figures", broken)
    report = custodian_fidelity(tmp_path, _corpus(_real()), ["a synthetic note"])
    assert report == {"error": "ValueError: no luck"} and load_fidelity(tmp_path) == report
    assert "could not be computed" in terminal_lines(report)[1]


def test_the_terminal_lines_hold_the_figures_and_no_real_text(tmp_path):
    report = custodian_fidelity(tmp_path, _corpus(_real()), _real(40)[::-1], HashEmbedder())
    lines = terminal_lines(report)
    text = "\n".join(lines)
    assert SCREEN_ONLY in lines[0] and "AUC" in text and "0.5 = indistinguishable" in text
    assert "own forms" in text and "same-size sample" in text
    assert not any(real in text for real in _real()), "the side-by-side real text stays off the terminal"
    assert terminal_lines(None) == []


def test_a_run_computes_it_with_its_own_corpus_and_embedder(tmp_path):
    seen: dict[str, object] = {}

    def hook(run_dir, corpus, documents, embedder, reporter):
        seen.update(run_dir=run_dir, units=len(corpus.units), documents=len(documents), embedder=embedder)
        return custodian_fidelity(run_dir, corpus, documents, embedder, reporter)

    spec = tiny_spec(tmp_path, release=None)
    spec.test_mode_seed = 3
    result = run_pipeline(spec, fidelity=hook)
    assert seen["run_dir"] == result.run_dir and seen["units"] == 40 and seen["documents"] == result.n_synthetic
    assert seen["embedder"] is not None, "the embedder the run loaded, not a new one"
    if result.n_synthetic:
        assert result.fidelity is not None and load_fidelity(result.run_dir) == result.fidelity


def test_privet_run_prints_the_figures_and_the_report_never_reaches_the_export(tmp_path, monkeypatch, capsys):
    figures = run_fidelity.fidelity_figures

    def planted(corpus, synthetic, embedder=None, templates=None):
        out = figures(corpus, synthetic, embedder, templates)
        out["pairs"] = [*out.get("pairs", []), {"synthetic": synthetic[0], "real": f"Seen by {PLANTED}.",
                                                "similarity": 0.5}]
        return out

    monkeypatch.setattr(run_fidelity, "fidelity_figures", planted)
    spec = tiny_spec(tmp_path)  # exported at the end to tmp_path/release
    spec.privacy.epsilon = 10.0
    spec.privacy.spend_anyway = True
    path = tmp_path / "spec.toml"
    spec.save(path)
    assert privet(["run", str(path), "--quiet"]) == 0
    printed = capsys.readouterr().out
    run_dir = Path(re.search(r"Run folder \(private workspace, never share\): (.+)", printed).group(1).strip())
    release = tmp_path / "release"
    assert release.is_dir() and (run_dir / FIDELITY_FILE).is_file()
    assert PLANTED in (run_dir / FIDELITY_FILE).read_text(encoding="utf-8"), "the canary is in the report"
    assert f"Fidelity against your corpus ({SCREEN_ONLY}" in printed and "AUC" in printed
    assert PLANTED not in printed, "real text is never printed"
    assert FIDELITY_FILE not in RELEASE_FILES
    report = json.loads((run_dir / FIDELITY_FILE).read_text(encoding="utf-8"))
    for file in release.rglob("*"):
        if file.is_file():
            data = file.read_bytes()
            assert PLANTED.encode() not in data, f"{file.name} holds the report's canary"
            assert file.name != FIDELITY_FILE
            if report.get("c2st_auc") is not None:
                assert b'"c2st_auc"' not in data, f"{file.name} holds the fidelity figures"

