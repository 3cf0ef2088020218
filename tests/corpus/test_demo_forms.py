"""The clinic-like demo corpora in forms of their own (``privet demo-data --kind discharge|triage``, issue 55)."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter

import pytest

from core.cli import main
from core.demo.clinic import make_clinic_corpus, make_disease_catalogue
from core.demo.draws import DEMO_SEED
from core.demo.files import write_clinic
from core.demo.forms import FORM_KINDS, make_form_corpus, note_templates, template_fixed_parts, template_slots
from core.demo.generate import faker_version
from core.common.paths import resources_dir

KINDS = tuple(FORM_KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_has_at_least_three_templates_of_its_own(kind):
    templates = note_templates(kind)
    assert len(templates) >= 3
    demo_parts = {p.strip().lower() for t in note_templates("clinic") for p in template_fixed_parts(t)}
    for t in templates:
        assert {"name", "age", "disease"} <= set(template_slots(t))
        # No fixed phrase of two or more words of the demo clinic's templates is reused here.
        parts = [p.strip().lower() for p in template_fixed_parts(t)]
        assert not [p for p in parts if len(p.split()) >= 2 and p in demo_parts]
    assert any("\n" in t for t in templates) and any("\n" not in t for t in templates)  # line breaks and prose


@pytest.mark.parametrize("kind", KINDS)
def test_generator_is_deterministic_and_reports_each_notes_template(kind):
    a = make_form_corpus(kind, n_patients=120, n_diseases=8, seed=3, n_questions=10)
    b = make_form_corpus(kind, n_patients=120, n_diseases=8, seed=3, n_questions=10)
    assert a == b
    assert len(a.note_templates) == len(a.notes) == 120
    mix = Counter(a.note_templates)
    assert set(mix) == set(range(len(a.templates)))  # every template is used
    assert mix.most_common(1)[0][1] > mix.most_common()[-1][1]  # an uneven mix
    c = make_form_corpus(kind, n_patients=120, n_diseases=8, seed=4, n_questions=10)
    assert c.notes != a.notes


@pytest.mark.parametrize("kind", KINDS)
def test_notes_name_patient_disease_and_drug_and_catalogue_differs_from_the_demo(kind):
    corpus = make_form_corpus(kind, n_patients=200, n_diseases=12, seed=DEMO_SEED, n_questions=20)
    demo = make_disease_catalogue(12, DEMO_SEED)
    assert not {d.name for d in corpus.diseases} & {d.name for d in demo}
    names = [d.name for d in corpus.diseases]
    by_name = {d.name: d for d in corpus.diseases}
    assert len({n["patient"] for n in corpus.notes}) == 200
    for note in corpus.notes:
        text = note["note"]
        assert note["patient"] in text
        found = [n for n in names if re.search(rf"\b{n}\b", text)]
        assert len(found) == 1
        assert by_name[found[0]].drug in text
    assert sum(d.count for d in corpus.diseases) == 200
    kinds = Counter(q["kind"] for q in corpus.questions)
    assert kinds == {"diagnosis": 20, "attack": 24}


@pytest.mark.parametrize("kind", KINDS)
def test_demo_data_command_writes_the_kind_with_its_templates(kind, tmp_path, capsys):
    out = tmp_path / kind
    assert main(["demo-data", str(out), "--kind", kind, "--patients", "50", "--diseases", "6", "--seed", "9"]) == 0
    assert "50 notes in 4 templates" in capsys.readouterr().out
    with open(out / "notes.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 50 and set(rows[0]) == {"id", "patient", "note"}
    payload = json.loads((out / "templates.json").read_text(encoding="utf-8"))
    assert payload["kind"] == kind
    assert [t["template"] for t in payload["templates"]] == list(note_templates(kind))
    assert all(t["fixed_parts"] and t["slots"] for t in payload["templates"])
    corpus = make_form_corpus(kind, 50, 6, seed=9)
    assert [r["note"] for r in rows] == [n["note"] for n in corpus.notes]


def test_clinic_templates_are_exposed_and_written():
    corpus = make_clinic_corpus(n_patients=40, n_diseases=5, seed=1, n_questions=2)
    assert corpus.templates == note_templates("clinic") and len(corpus.note_templates) == 40
    for note, template in zip(corpus.notes, corpus.note_templates):
        fixed = template_fixed_parts(corpus.templates[template])
        assert all(part in note["note"] for part in fixed)


@pytest.mark.parametrize("kind", KINDS)
def test_shipped_corpus_matches_a_fresh_generation(kind, tmp_path):
    folder = resources_dir() / "demo" / kind
    if not folder.exists():
        pytest.skip("not shipped")
    manifest = json.loads((resources_dir() / "demo" / "MANIFEST.json").read_text())
    if manifest["faker"] != faker_version():
        pytest.skip("Faker version differs from the one the shipped files were made with")
    write_clinic(make_form_corpus(kind), tmp_path)
    for name in ("notes.csv", "questions.jsonl", "diseases.json", "domain_words.txt", "templates.json"):
        assert (tmp_path / name).read_bytes() == (folder / name).read_bytes(), name
