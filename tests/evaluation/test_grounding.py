"""Grounding (core/evaluation/grounding.py): the shares of documents stating what no released word supports, and of
documents mixing the catalogue's conditions."""

from __future__ import annotations

import json

from core.evaluation.grounding import Release, catalogue_conditions, content_terms, grounding, read_release

CONDITIONS = {"tusfosemia": frozenset({"tusfosemia", "tregedcillin", "wheezing", "rash"}),
              "pelnamitis": frozenset({"pelnamitis", "foformab", "hiccups", "rash"})}
RELEASE = Release(topics=(frozenset({"tusfosemia", "tregedcillin", "wheezing"}),
                          frozenset({"pelnamitis", "foformab", "hiccups"})),
                  form_words=frozenset({"seen", "today", "plan", "start"}))
EMPTY = frozenset()


def test_a_document_in_its_topics_words_is_grounded_and_one_that_adds_a_fact_is_not():
    grounded = "Seen today: K. S. reports wheezing. Tusfosemia. Plan: start tregedcillin 20 mg."
    cancer = "Seen today: K. S. reports wheezing, caused by breast cancer. Plan: start tregedcillin."
    court = "Seen today: K. S. reports wheezing after a court hearing on 14 March 2024. Tusfosemia."
    score = grounding([grounded, cancer, court], RELEASE, CONDITIONS, vocabulary=frozenset({"cancer"}), english=EMPTY)
    assert score.to_dict()["unsupported_documents"] == 2 and score.mixed == 0
    assert {"cancer", "court", "14 march"} <= set(score.terms)


def test_a_document_naming_another_topics_drug_mixes_conditions_but_a_shared_symptom_does_not():
    mixed = "Patient reports hiccups. Diagnosis: tusfosemia. Plan: start tregedcillin."
    shared = "Patient reports rash. Diagnosis: tusfosemia. Plan: start tregedcillin."
    score = grounding([mixed, shared], RELEASE, CONDITIONS, vocabulary=EMPTY, english=EMPTY)
    assert score.mixed == 1 and score.unsupported == 2  # "hiccups" and "rash" are not the topic's released words


def test_months_count_only_beside_a_number_and_not_when_a_released_form_holds_a_month():
    text = "You may see the doctor on 20 May; admitted Monday."
    assert content_terms(text, EMPTY, EMPTY, month_slot=False) == ["20 may", "monday"]
    assert content_terms(text, EMPTY, EMPTY, month_slot=True) == []


def test_the_release_is_read_from_a_runs_checkpoints(tmp_path):
    folder = tmp_path / "checkpoints" / "dp_synrag"
    folder.mkdir(parents=True)
    topic = {"word": "tusfosemia", "count": 80.0, "co_keywords": ["skin rash"], "merged_words": []}
    (folder / "corpus-shape.json").write_text(json.dumps({"key": "", "shape": {"topics": [topic]}}))
    (folder / "form_skeletons.json").write_text(json.dumps({"items": ["Seen on [month] [number]: [text]."]}))
    release = read_release(tmp_path)
    assert release.topics == (frozenset({"tusfosemia", "skin", "rash"}),)
    assert release.form_words == frozenset({"seen", "on"}) and release.month_slot
    (folder / "form_skeletons.json").write_text(json.dumps({"items": ["Stay [number]-[number]-[number]: [text]."]}))
    assert read_release(tmp_path).month_slot  # a form's numeric date is a date the form states
    (folder / "form_skeletons.json").write_text(json.dumps({"items": ["Seen at [number]:[number]: [text]."]}))
    assert not read_release(tmp_path).month_slot


def test_the_catalogue_maps_each_condition_to_its_terms(tmp_path):
    path = tmp_path / "diseases.json"
    path.write_text(json.dumps({"diseases": [{"name": "Tusfosemia", "drug": "Tregedcillin",
                                              "symptoms": ["skin rash", "wheezing"]}]}))
    assert catalogue_conditions(path) == {"tusfosemia": frozenset({"tusfosemia", "tregedcillin", "skin rash",
                                                                   "wheezing"})}
