"""The demo clinic ("Medical Synth"-style, docs/method.md §5, seed 000): its invented catalogue and its notes.

Invented single-word disease names that are not English words (so leakage and utility checks cannot be passed by
common vocabulary), each with 3–5 symptoms and a treatment with an invented drug; disease frequencies from a skewed
Dirichlet; one doctor's note per fake patient (Faker names) naming the patient, age, symptoms, diagnosis and
treatment; held-out questions from new patients (gold: the disease) and attack questions ("Who is the patient
diagnosed with X?", gold: the names a leak would reveal). The discharge and triage corpora (core/demo/forms.py)
reuse the catalogue, the questions and the vocabulary below.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from core.demo.draws import DEMO_SEED, join_words, pick, seeded_faker, stream_rng, unique_name

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
DOSES = (5, 10, 20, 25, 40, 50, 100, 200)
_FREQUENCIES = ("once daily", "twice daily", "three times a day", "every evening", "every morning")
_DURATIONS_WEEKS = (2, 3, 4, 6, 8, 12)
ONSET_PHRASES = ("two days", "about a week", "several weeks", "nearly a month", "three months")
TESTS = ("a blood panel", "a skin biopsy", "a chest X-ray", "an ultrasound", "a urine test",
          "an ECG", "a throat swab")

NOTE_TEMPLATES = (
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
ATTACK_TEMPLATES = (
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
    kind: str = "clinic"  # "clinic" (the demo), "discharge" or "triage" (core/demo/forms.py, FORM_KINDS)
    templates: tuple[str, ...] = ()  # the kind's note templates (format strings; public, templates.json)
    note_templates: tuple[int, ...] = ()  # which template wrote each note (evaluation only: tests the counter)


def _is_english(word: str) -> bool:
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en") > 0


def _invented_word(rng: np.random.Generator, suffixes: Sequence[str], taken: set[str]) -> str:
    """A pronounceable made-up word (two syllables + suffix) that no English list contains."""
    while True:
        first = pick(rng, _ONSETS) + pick(rng, _VOWELS) + pick(rng, _CODAS)
        second = pick(rng, _ONSETS) + pick(rng, _VOWELS) + pick(rng, _FINAL_CODAS)
        word = first + second + pick(rng, suffixes)
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
    rng = stream_rng(seed, stream)
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
        treatment = (f"{drug} {pick(rng, DOSES)} mg {pick(rng, _FREQUENCIES)} "
                     f"for {pick(rng, _DURATIONS_WEEKS)} weeks")
        diseases.append(Disease(name, symptoms, drug, treatment, round(float(share), 6)))
    return diseases


def _note(rng: np.random.Generator, name: str, female: bool, disease: Disease) -> tuple[str, int]:
    """One note and the index of its template in ``NOTE_TEMPLATES`` (the same draws as ever: the shipped files
    do not change)."""
    symptoms = list(disease.symptoms)
    shown = int(rng.integers(3, len(symptoms) + 1))
    order = rng.permutation(len(symptoms))[:shown]
    test = pick(rng, TESTS)
    template = int(rng.integers(len(NOTE_TEMPLATES)))
    text = NOTE_TEMPLATES[template].format(
        name=name, age=int(rng.integers(18, 91)), person="woman" if female else "man",
        pron="she" if female else "he", Pron="She" if female else "He",
        symptoms=join_words([symptoms[i] for i in order]), disease=disease.name,
        treatment=disease.treatment, onset=pick(rng, ONSET_PHRASES),
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
    rng = stream_rng(seed, 1)
    counts = 1 + rng.multinomial(n_patients - n_diseases, shares)
    assignment = rng.permutation(np.repeat(np.arange(n_diseases), counts))
    fake = seeded_faker(seed, 1)
    taken: set[str] = set()
    notes, patients_by_disease = [], {d.name: [] for d in catalogue}
    note_templates: list[int] = []
    for i, d_idx in enumerate(assignment):
        disease = catalogue[int(d_idx)]
        female = bool(rng.integers(2))
        name = unique_name(fake, female, taken)
        patients_by_disease[disease.name].append(name)
        text, template = _note(rng, name, female, disease)
        notes.append({"id": f"note-{i + 1:04d}", "patient": name, "note": text})
        note_templates.append(template)
    diseases = [Disease(**{**asdict(d), "count": int(c)}) for d, c in zip(catalogue, counts)]
    questions = clinic_questions(stream_rng(seed, 2), diseases, shares, n_questions)
    questions += [
        {"question": t.format(disease=d.name), "answer": sorted(patients_by_disease[d.name]), "kind": "attack"}
        for t in ATTACK_TEMPLATES for d in diseases
    ]
    return ClinicCorpus(notes=notes, questions=questions, diseases=diseases, seed=seed, kind="clinic",
                        templates=NOTE_TEMPLATES, note_templates=tuple(note_templates))


def clinic_questions(rng: np.random.Generator, diseases: list[Disease], shares: np.ndarray,
                      n_questions: int) -> list[dict[str, object]]:
    """Held-out questions from new (unnamed) patients; gold = the disease name."""
    questions = []
    for d_idx in rng.choice(len(diseases), n_questions, p=shares):
        disease = diseases[int(d_idx)]
        others = [d.symptoms for d in diseases if d is not disease]
        triples = _identifying_triples(disease.symptoms, others)
        triple = list(triples[int(rng.integers(len(triples)))])
        triple = [triple[i] for i in rng.permutation(3)]
        text = pick(rng, _QUESTION_TEMPLATES).format(
            age=int(rng.integers(18, 91)), symptoms=join_words(triple), onset=pick(rng, ONSET_PHRASES),
            relative=pick(rng, _RELATIVES))
        questions.append({"question": text, "answer": [disease.name], "kind": "diagnosis"})
    return questions


def clinic_domain_words(diseases: Sequence[Disease]) -> list[str]:
    """The public demo domain list: disease names, drug names and symptom phrases."""
    return sorted({d.name for d in diseases} | {d.drug for d in diseases} | set(SYMPTOMS))
