"""The own-form counter (core/evaluation/own_form.py): a corpus's real notes match its templates, other text doesn't."""

from __future__ import annotations

import json
import random
import time

import pytest

from core.demo.clinic import make_clinic_corpus
from core.demo.files import write_clinic
from core.demo.forms import FORM_KINDS, make_form_corpus, note_templates
from core.evaluation import own_form


@pytest.fixture(scope="module", params=["clinic", "discharge", "triage"])
def corpus(request):
    if request.param == "clinic":
        return make_clinic_corpus(n_patients=300, n_diseases=12, seed=7, n_questions=5)
    return make_form_corpus(request.param, n_patients=300, n_diseases=12, seed=7, n_questions=5)


def test_real_notes_match_their_own_templates(corpus):
    notes = [n["note"] for n in corpus.notes]
    assert own_form.own_form_share(notes, corpus.templates) >= 0.99
    # Each note matches a template, and the counter finds the very template the generator used, or one that
    # reads the same note equally well (the first match); overwhelmingly the generator's.
    found = own_form.template_mix(notes, corpus.templates)
    assert sum(f == t for f, t in zip(found, corpus.note_templates)) >= 0.95 * len(notes)
    assert own_form.mix_total_variation(found, list(corpus.note_templates)) <= 0.05


def test_shuffled_text_does_not_match(corpus):
    rng = random.Random(0)
    shuffled = []
    for note in corpus.notes[:100]:
        words = note["note"].split()
        rng.shuffle(words)
        shuffled.append(" ".join(words))
    assert own_form.own_form_share(shuffled, corpus.templates) <= 0.05


def test_other_kinds_notes_are_not_in_these_forms():
    clinic = [n["note"] for n in make_clinic_corpus(80, 8, seed=2, n_questions=2).notes]
    for kind in FORM_KINDS:
        assert own_form.own_form_share(clinic, note_templates(kind)) == 0.0
        other = make_form_corpus(kind, 80, 8, seed=2, n_questions=2)
        assert own_form.own_form_share([n["note"] for n in other.notes], note_templates("clinic")) == 0.0


def test_whitespace_and_case_are_tolerated_but_extra_text_around_is_not():
    template = "DISCHARGE SUMMARY\nPatient: {name}\nFinal diagnosis: {disease}."
    assert own_form.own_form_share(["discharge summary patient: Ann Lee   final DIAGNOSIS:  zorbitis ."], [template]) == 1
    assert own_form.own_form_share(["  DISCHARGE  SUMMARY\n\nPatient: Ann\nFinal diagnosis: x.\n"], [template]) == 1
    assert own_form.own_form_share(["Note. DISCHARGE SUMMARY\nPatient: Ann\nFinal diagnosis: x."], [template]) == 0
    assert own_form.own_form_share(["DISCHARGE SUMMARY\nPatient: Ann\nFinal diagnosis: x. Next"], [template]) == 0
    assert own_form.loose_share(["Note. DISCHARGE SUMMARY\nPatient: Ann\nFinal diagnosis: x. Next"], [template]) == 1
    assert own_form.own_form_share(["DISCHARGE SUMMARY\nPatient: \nFinal diagnosis: x."], [template]) == 0  # empty slot
    assert own_form.own_form_share([], [template]) is None


def test_regex_metacharacters_in_fixed_parts_are_literal():
    template = "?{disease} (x) | Cat {n}. [ok]"
    assert own_form.own_form_share(["?zorbitis (x) | Cat 3. [ok]"], [template]) == 1
    assert own_form.own_form_share(["zorbitis x  Cat 3. ok"], [template]) == 0


def test_matching_long_unmatched_text_is_fast():
    templates = note_templates("clinic") + note_templates("triage")
    text = ". ".join(f"word{i}, and more, of it" for i in range(800))
    started = time.monotonic()
    assert own_form.own_form_share([text] * 5, templates) == 0.0
    assert time.monotonic() - started < 5.0


def test_templates_json_round_trips(tmp_path):
    corpus = make_form_corpus("triage", 40, 5, seed=1, n_questions=2)
    write_clinic(corpus, tmp_path)
    assert own_form.load_templates(tmp_path / "templates.json") == list(corpus.templates)
    (tmp_path / "list.json").write_text(json.dumps(["A {x} B"]))
    assert own_form.load_templates(tmp_path / "list.json") == ["A {x} B"]
