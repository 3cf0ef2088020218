"""The fidelity report (core/evaluation/fidelity.py) and ``privet fidelity``."""

from __future__ import annotations

import csv
import json
import random

import numpy as np

from core.cli import main
from core.demo.clinic import make_clinic_corpus
from core.demo.files import write_clinic
from core.demo.forms import make_form_corpus
from core.evaluation import fidelity
from core.models.tiny import HashingEmbedder


def _notes(kind: str, n: int = 240, seed: int = 3) -> tuple[list[str], tuple[str, ...]]:
    corpus = (make_clinic_corpus(n, 10, seed=seed, n_questions=2) if kind == "clinic"
              else make_form_corpus(kind, n, 10, seed=seed, n_questions=2))
    return [r["note"] for r in corpus.notes], corpus.templates


def test_identical_distributions_are_indistinguishable():
    notes, _ = _notes("discharge")
    auc, per_class = fidelity.c2st_auc(notes[:120], notes[120:])
    assert per_class == 120
    assert abs(auc - 0.5) <= 0.15


def test_clearly_different_corpora_are_told_apart():
    discharge, _ = _notes("discharge", 120)
    triage, _ = _notes("triage", 120)
    auc, _ = fidelity.c2st_auc(discharge, triage)
    assert auc > 0.9


def test_too_few_documents_give_no_auc():
    assert fidelity.c2st_auc(["a b", "c d", "e f"], ["g h", "i j", "k l"]) == (None, 3)


def test_report_on_a_real_sample_and_on_another_form():
    notes, templates = _notes("triage", 300)
    other, _ = _notes("clinic", 100)
    embed = HashingEmbedder().embed
    real, synthetic = notes[:200], notes[200:]  # a same-distribution "synthetic" corpus
    same = fidelity.fidelity_report(real, synthetic, templates=templates, embed=embed, n_pairs=2)
    assert same.own_form_method == fidelity.OWN_FORM_TEMPLATES
    assert same.own_form_share == 1.0 and same.own_form_share_real == 1.0
    assert abs(same.c2st_auc - 0.5) <= 0.15 and abs(same.c2st_auc_real - 0.5) <= 0.2
    assert same.template_mix_tv < 0.15
    assert same.mmd2 is not None and same.mmd2_real is not None and same.mmd2 < 3 * same.mmd2_real
    assert len(same.pairs) == 2 and all(p["synthetic_template"] is not None for p in same.pairs)

    far = fidelity.fidelity_report(real, other, templates=templates, embed=embed, n_pairs=0)
    assert far.own_form_share == 0.0 and far.c2st_auc > 0.9 and far.template_mix_tv == 1.0
    assert far.mmd2 > 3 * far.mmd2_real
    d = far.to_dict(pairs=False)
    assert {"c2st_auc", "own_form_share", "mmd2", "mmd2_real"} <= set(d) and "pairs" not in d
    assert json.dumps(d)


def test_skeleton_proxy_without_templates():
    notes, _ = _notes("discharge", 300)
    other, _ = _notes("clinic", 100)
    rng = random.Random(0)
    shuffled = [" ".join(rng.sample(t.split(), len(t.split()))) for t in notes[:100]]
    real = notes[:200]
    assert fidelity.skeleton("Ann Lee, 45, has a cough.", {"has", "a"}) == "_ , has a _ ."
    assert fidelity.skeleton("Tom, Ann and Bo: a cough of the ears; 14:05.", {"a"}) == "_ ."
    assert fidelity.skeleton_share(notes[200:], real) >= 0.9
    assert fidelity.skeleton_share(shuffled, real) <= 0.05
    assert fidelity.skeleton_share(other, real) == 0.0
    report = fidelity.fidelity_report(real, notes[200:], n_pairs=1)
    assert report.own_form_method == fidelity.OWN_FORM_PROXY and report.mmd2 is None
    assert report.own_form_share >= 0.5 and report.template_mix_tv is None


def test_fidelity_command_prints_the_report(tmp_path, capsys):
    corpus = make_form_corpus("discharge", 120, 8, seed=5, n_questions=2)
    write_clinic(corpus, tmp_path / "real")
    synthetic = tmp_path / "synthetic.jsonl"
    synthetic.write_text("".join(json.dumps({"id": f"s{i}", "text": n["note"]}) + "\n"
                                 for i, n in enumerate(corpus.notes[::3])), encoding="utf-8")
    code = main(["fidelity", str(tmp_path / "real" / "notes.csv"), str(synthetic), "--templates",
                 str(tmp_path / "real" / "templates.json"), "--embedder", "tiny", "--pairs", "1"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["own_form_share"] == 1.0 and report["own_form_method"] == "templates"
    assert report["c2st_auc"] is not None and len(report["pairs"]) == 1
    assert report["mmd2"] is not None and report["mmd2_real"] is not None

    with open(tmp_path / "synthetic.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "text"])
        writer.writerows([[f"s{i}", f"Something else entirely, number {i}."] for i in range(30)])
    assert main(["fidelity", str(tmp_path / "real" / "notes.csv"), str(tmp_path / "synthetic.csv"),
                 "--embedder", "none", "--pairs", "0"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["own_form_method"] == "skeleton proxy" and report["own_form_share"] == 0.0
    assert report["mmd2"] is None and "pairs" not in report and report["c2st_auc"] > 0.9
    assert main(["fidelity", str(tmp_path / "real" / "notes.csv"), str(synthetic), "--templates",
                 str(tmp_path / "nope.json")]) == 1


def test_real_sample_mmd_uses_the_held_split_when_none_is_given():
    notes, _ = _notes("clinic", 90)
    emb = HashingEmbedder().embed(notes)
    report = fidelity.fidelity_report(notes, notes[:10], real_embeddings=emb,
                                      synthetic_embeddings=emb[:10], n_pairs=0)
    assert report.n_real == 90 and report.mmd2 is not None and np.isfinite(report.mmd2_real)
