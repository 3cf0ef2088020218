"""PII masking of RPSG seeds and the final scan (core/methods/rpsg/pii.py)."""

from __future__ import annotations

import re

import pytest
from faker import Faker

from core.demo.clinic import make_clinic_corpus
from core.common.errors import PrivetError
from core.methods.rpsg.pii import PIIOptions, default_recognizers, find_pii, mask_pii, scan_pii


@pytest.fixture(scope="module")
def recognizers():
    return default_recognizers()


def _fake(seed: int) -> Faker:
    fake = Faker("en_US")
    fake.seed_instance(seed)  # public test data, not privacy noise
    return fake


def test_demo_clinic_patient_names_are_all_masked(recognizers):
    corpus = make_clinic_corpus(n_patients=200, n_questions=5)
    survivors = 0
    for note in corpus.notes:
        masked, counts = mask_pii(note["note"], recognizers)
        survivors += sum(re.search(rf"\b{re.escape(part)}\b", masked) is not None for part in note["patient"].split())
        assert counts.get("NAME", 0) >= 1
    assert survivors == 0


def test_disease_and_drug_words_are_not_masked(recognizers):
    corpus = make_clinic_corpus(n_patients=50, n_questions=5)
    for note in corpus.notes:
        masked, _ = mask_pii(note["note"], recognizers)
        disease = next(d for d in corpus.diseases if d.name in note["note"])
        assert disease.name in masked
        assert disease.drug in masked


@pytest.mark.parametrize("seed", range(5))
def test_structured_identifiers_are_masked(recognizers, seed):
    fake = _fake(seed)
    planted = {
        "name": fake.name(),
        "email": fake.email(),
        "phone": fake.phone_number(),
        "ssn": fake.ssn(),
        "address": fake.address(),
        "date": fake.date(),
        "long_date": fake.date(pattern="%B %d, %Y"),
        "mrn": fake.bothify("##-#####"),
        "url": fake.url(),
    }
    text = (
        f"Contact {planted['name']} at {planted['email']} or {planted['phone']}; SSN {planted['ssn']}; "
        f"lives at {planted['address']}; born {planted['date']} (seen {planted['long_date']}); "
        f"MRN: {planted['mrn']}; portal {planted['url']}."
    )
    masked, counts = mask_pii(text, recognizers)
    for kind, value in planted.items():
        for line in value.split("\n"):
            assert line not in masked, kind
    assert counts["EMAIL"] == 1 and counts["PHONE"] == 1 and counts["URL"] == 1
    assert counts["DATE"] == 2 and counts["ID"] >= 2 and counts["PLACE"] >= 1 and counts["NAME"] >= 1


@pytest.mark.parametrize(
    "phone",
    ["001-507-843-9150x00806", "(707)959-8386x75650", "7389836859", "+1-555-123-4567", "555.123.4567",
     "+44 20 7946 0958", "020 7946 0958"],
)
def test_phone_shapes(recognizers, phone):
    masked, counts = mask_pii(f"Call {phone} today.", recognizers)
    assert masked == "Call [PHONE] today."
    assert counts == {"PHONE": 1}


@pytest.mark.parametrize(
    "text",
    [
        "The patient will return in two weeks. Mark the chart and hope for the best.",
        "She took 500 mg twice daily; BP 120/80; A1C 7.5%; COVID-19 negative; ICD-10 J45.909.",
        "A chest X-ray supported the diagnosis. Plan: start treatment for 12 weeks.",
        "Assessment: persistent cough and night sweats for about a week.",
    ],
)
def test_ordinary_clinical_text_is_left_alone(recognizers, text):
    assert mask_pii(text, recognizers) == (text, {})


def test_titles_and_repetitions_of_a_found_name(recognizers):
    text = "Dr. Rose Park saw Mr. Brown on Monday. Later Brown called; Park answered."
    masked, counts = mask_pii(text, recognizers)
    assert masked == "Dr. [NAME] saw Mr. [NAME] on Monday. Later [NAME] called; [NAME] answered."
    assert counts == {"NAME": 4}


def test_all_caps_and_hyphenated_names(recognizers):
    masked, _ = mask_pii("JENNIFER SMITH lives with Maria Garcia-Lopez.", recognizers)
    assert masked == "[NAME] lives with [NAME]."


def test_custodian_patterns_names_and_places():
    options = PIIOptions(
        patterns={"WARD": [r"\bWard [A-Z]\d\b"], "ID": [r"\bPX\d{3}\b"]},
        names=["Zorblat Quux"],
        places=["St Elsewhere Hospital"],
    )
    recognizers = default_recognizers(options)
    text = "Zorblat Quux (PX123) moved from Ward B4 to st elsewhere hospital."
    masked, counts = mask_pii(text, recognizers)
    assert masked == "[NAME] ([ID]) moved from [WARD] to [PLACE]."
    assert counts == {"NAME": 1, "ID": 1, "WARD": 1, "PLACE": 1}


def test_name_lists_can_be_switched_off():
    recognizers = default_recognizers(PIIOptions(use_name_lists=False))
    assert mask_pii("Jennifer Smith came in.", recognizers)[0] == "Jennifer Smith came in."
    assert mask_pii("Mrs. Smith came in.", recognizers)[0] == "Mrs. [NAME] came in."


def test_bad_custom_pattern_is_a_user_error():
    with pytest.raises(PrivetError, match="not a valid regular expression"):
        default_recognizers(PIIOptions(patterns={"ID": ["(unclosed"]}))
    with pytest.raises(PrivetError, match="not a valid name"):
        default_recognizers(PIIOptions(patterns={"bad kind": ["x"]}))


def test_scan_counts_match_mask_and_placeholders_do_not_count(recognizers):
    text = "Jennifer Smith, jennifer@example.org, 555-123-4567, 2024-03-05."
    masked, counts = mask_pii(text, recognizers)
    assert scan_pii(text, recognizers) == counts == {"NAME": 1, "EMAIL": 1, "PHONE": 1, "DATE": 1}
    assert scan_pii(masked, recognizers) == {}


def test_spans_do_not_overlap(recognizers):
    fake = _fake(11)
    text = " ".join(f"{fake.name()} {fake.email()} {fake.address()} {fake.phone_number()}" for _ in range(20))
    spans = find_pii(text, recognizers)
    assert all(a.end <= b.start for a, b in zip(spans, spans[1:]))
