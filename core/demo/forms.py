"""Discharge summaries and triage notes (issue 55): clinic-like demo corpora in forms of their own.

Two more invented clinic corpora of the demo clinic's shape (core/demo/clinic.py), written in four templates of their
own each (section labels with line breaks, a pipe-separated line, prose), never the demo's wordings, from their own
invented catalogue stream, in an uneven template mix. The product must write in the custodian's own forms, and
evaluation counts the share of documents in them (core/evaluation/own_form.py); the templates are public, so
core/demo/files.py saves them to templates.json, and the corpus object says which template wrote each note.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from core.demo.clinic import (
    ATTACK_TEMPLATES, DOSES, NOTE_TEMPLATES, ONSET_PHRASES, TESTS, ClinicCorpus, Disease, clinic_questions,
    make_disease_catalogue,
)
from core.demo.draws import DEMO_SEED, join_words, pick, seeded_faker, stream_rng, unique_name


@dataclass(frozen=True)
class FormTemplate:
    """One note template: a format string with ``{slot}`` placeholders, the date style of its dates, its weight."""

    text: str
    date_format: str = "%d %b %Y"
    weight: float = 1.0


DISCHARGE_TEMPLATES = (
    FormTemplate(
        "DISCHARGE SUMMARY\n"
        "Patient: {name}\n"
        "Age: {age}\n"
        "Admitted: {admitted}\n"
        "Discharged: {discharged}\n"
        "Reason for admission: {symptoms}.\n"
        "Final diagnosis: {disease}.\n"
        "Hospital course: {course}.\n"
        "Medication on discharge: {treatment}.\n"
        "Follow-up: clinic review in {follow} weeks.",
        "%d %b %Y", 0.4),
    FormTemplate(
        "{name} ({age}, {sex}) was admitted on {admitted} with {symptoms} and went home on {discharged}. "
        "{Test} confirmed {disease}. {Pron} leaves hospital on {treatment} and should see the family doctor "
        "within {follow} weeks.",
        "%B %d, %Y", 0.3),
    FormTemplate(
        "Discharge | {name} | age {age} | stay {admitted} to {discharged} | Dx: {disease} | "
        "Presented with: {symptoms} | Meds: {treatment} | Review in {follow} wk",
        "%Y-%m-%d", 0.2),
    FormTemplate(
        "Summary of inpatient stay: {name}, {age} years\n"
        "1. Presentation: {symptoms}, for {onset} before admission.\n"
        "2. Investigations: {test}.\n"
        "3. Diagnosis at discharge: {disease}.\n"
        "4. Plan: {treatment}; review in {follow} weeks.\n"
        "Date of discharge: {discharged}",
        "%d/%m/%Y", 0.1),
)
TRIAGE_TEMPLATES = (
    FormTemplate(
        "Triage {time}: {name}, {age}{sexletter}. CC {symptoms}. HR {hr} BP {bp} T {temp}. Cat {category}. "
        "?{disease}, {drug} {dose} mg given.",
        weight=0.35),
    FormTemplate(
        "Arrival time: {time}\n"
        "Name: {name}\n"
        "Age: {age}\n"
        "Presenting complaint: {symptoms} for {onset}\n"
        "Observations: pulse {hr}, BP {bp}, temp {temp} C\n"
        "Triage category: {category}\n"
        "Nurse impression: possible {disease}\n"
        "Medication: {drug} {dose} mg\n"
        "Action: {action}",
        weight=0.3),
    FormTemplate(
        "{name} ({sex}, {age} years) walked in at {time} with {symptoms}. Nurse assessment suggests "
        "{disease}. Observations stable apart from a pulse of {hr}. Placed in category {category} and given "
        "{drug} {dose} mg while waiting.",
        weight=0.2),
    FormTemplate(
        "S: {age} y/o {person} {name}, c/o {symptoms} x {onset}.\n"
        "O: HR {hr}, BP {bp}, SpO2 {spo2}%.\n"
        "A: ? {disease}.\n"
        "P: {drug} {dose} mg, {action}.",
        weight=0.15),
)
FORM_KINDS: dict[str, tuple[FormTemplate, ...]] = {"discharge": DISCHARGE_TEMPLATES, "triage": TRIAGE_TEMPLATES}
_KIND_STREAMS = {"discharge": 20, "triage": 30}  # catalogue stream; +1 the notes, +2 the questions
_KIND_ID_PREFIX = {"discharge": "dis", "triage": "tri"}
_COURSES = ("uneventful", "gradual improvement on the ward", "one night in the high-dependency unit",
            "intravenous fluids and bed rest", "a short period of observation")
_TRIAGE_ONSETS = ("2 days", "3 days", "a week", "10 days", "several hours", "since yesterday evening")
_ACTIONS = ("sent to the waiting room", "seen by the duty doctor", "moved to the resuscitation bay",
            "referred to the fast-track clinic", "booked for review tomorrow")
_FIRST_DAY = 19723  # 2024-01-01 as days since 1970-01-01


def note_templates(kind: str = "clinic") -> tuple[str, ...]:
    """The public note templates of a corpus kind (format strings with ``{slot}`` placeholders)."""
    if kind == "clinic":
        return NOTE_TEMPLATES
    if kind not in FORM_KINDS:
        raise ValueError(f"unknown corpus kind {kind!r}")
    return tuple(t.text for t in FORM_KINDS[kind])


def template_fixed_parts(template: str) -> list[str]:
    """A template's fixed text, in order (the parts between its slots)."""
    import string

    return [literal for literal, _, _, _ in string.Formatter().parse(template) if literal]


def template_slots(template: str) -> list[str]:
    import string

    return [field for _, field, _, _ in string.Formatter().parse(template) if field is not None]


def _date(day: int, fmt: str) -> str:
    from datetime import date, timedelta

    return (date(1970, 1, 1) + timedelta(days=day)).strftime(fmt)


def _form_note(rng: np.random.Generator, kind: str, name: str, female: bool, disease: Disease) -> tuple[str, int]:
    templates = FORM_KINDS[kind]
    weights = np.array([t.weight for t in templates])
    template = int(rng.choice(len(templates), p=weights / weights.sum()))
    form = templates[template]
    symptoms = list(disease.symptoms)
    shown = int(rng.integers(2, len(symptoms) + 1))
    order = rng.permutation(len(symptoms))[:shown]
    admitted = _FIRST_DAY + int(rng.integers(0, 700))
    test = pick(rng, TESTS)
    values = {
        "name": name, "age": int(rng.integers(18, 91)), "sex": "female" if female else "male",
        "sexletter": "F" if female else "M", "person": "woman" if female else "man",
        "Pron": "She" if female else "He", "symptoms": join_words([symptoms[i] for i in order]),
        "disease": disease.name, "drug": disease.drug, "treatment": disease.treatment,
        "dose": pick(rng, DOSES), "test": test, "Test": test[0].upper() + test[1:],
        "admitted": _date(admitted, form.date_format),
        "discharged": _date(admitted + int(rng.integers(1, 15)), form.date_format),
        "course": pick(rng, _COURSES), "follow": int(rng.integers(2, 9)),
        "onset": pick(rng, _TRIAGE_ONSETS if kind == "triage" else ONSET_PHRASES),
        "time": f"{int(rng.integers(0, 24)):02d}:{int(rng.integers(0, 60)):02d}",
        "hr": int(rng.integers(55, 131)), "bp": f"{int(rng.integers(95, 181))}/{int(rng.integers(55, 106))}",
        "temp": f"{rng.uniform(36.0, 39.6):.1f}", "spo2": int(rng.integers(88, 101)),
        "category": int(rng.integers(1, 6)), "action": pick(rng, _ACTIONS),
    }
    return form.text.format(**values), template


def make_form_corpus(kind: str, n_patients: int = 600, n_diseases: int = 25, seed: int = DEMO_SEED,
                     n_questions: int = 200, alpha: float = 0.6) -> ClinicCorpus:
    """An invented clinic corpus of ``kind`` ("discharge" summaries or "triage" notes) in its own templates.

    The same shape as the demo clinic (one note per fake patient, a skewed disease mix, held-out diagnosis
    questions and attack questions), with its own invented catalogue and its own note forms.
    """
    if kind not in FORM_KINDS:
        raise ValueError(f"unknown corpus kind {kind!r}; use one of {', '.join(FORM_KINDS)}")
    if n_patients < n_diseases:
        raise ValueError("n_patients must be at least n_diseases (every disease gets a note)")
    stream = _KIND_STREAMS[kind]
    catalogue = make_disease_catalogue(n_diseases, seed, alpha, stream=stream)
    shares = np.array([d.share for d in catalogue])
    shares = shares / shares.sum()
    rng = stream_rng(seed, stream + 1)
    counts = 1 + rng.multinomial(n_patients - n_diseases, shares)
    assignment = rng.permutation(np.repeat(np.arange(n_diseases), counts))
    fake = seeded_faker(seed, stream + 1)
    taken: set[str] = set()
    notes, used = [], []
    patients_by_disease: dict[str, list[str]] = {d.name: [] for d in catalogue}
    for i, d_idx in enumerate(assignment):
        disease = catalogue[int(d_idx)]
        female = bool(rng.integers(2))
        name = unique_name(fake, female, taken)
        patients_by_disease[disease.name].append(name)
        text, template = _form_note(rng, kind, name, female, disease)
        notes.append({"id": f"{_KIND_ID_PREFIX[kind]}-{i + 1:04d}", "patient": name, "note": text})
        used.append(template)
    diseases = [Disease(**{**asdict(d), "count": int(c)}) for d, c in zip(catalogue, counts)]
    questions = clinic_questions(stream_rng(seed, stream + 2), diseases, shares, n_questions)
    questions += [
        {"question": t.format(disease=d.name), "answer": sorted(patients_by_disease[d.name]), "kind": "attack"}
        for t in ATTACK_TEMPLATES for d in diseases
    ]
    return ClinicCorpus(notes=notes, questions=questions, diseases=diseases, seed=seed, kind=kind,
                        templates=note_templates(kind), note_templates=tuple(used))
