"""Roles of released words and their slots in the form (docs/method.md §2.4c), and role accuracy (§5).

Roles come from the released words and public sources only (typed lists, dosage forms, INN stems,
condition suffixes, the public model asked with a fixed prompt); the lead and the slot phrases put each
typed word in its section; a word of no role and a form without typed slots are untouched; the metric
scores a hand-made example.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from core.methods.dp_synrag.shape import examples as ex
from core.methods.dp_synrag.shape import released_topics as rt
from core.methods.dp_synrag.write import drafts as dr
from core.methods.dp_synrag.write import public_decoding as pd
from core.methods.dp_synrag.write import realisation as rl
from core.methods.dp_synrag.write import roles
from core.methods.dp_synrag.write import writer_prompt as wp
from core.methods.dp_synrag.write.slots import Slot, form_slots, place
from tests.helpers import TINY

from core.evaluation import roles as metric
from core.common.paths import resources_dir
TASK = "Answer patients' questions about which disease matches their symptoms."
NOTE = ex.shipped_example("clinical_note")


@pytest.fixture(scope="module")
def public() -> roles.RoleSources:
    return roles.RoleSources.of(())


# -- roles from public sources ---------------------------------------------------------------------------


def test_morphology_types_drug_stems_condition_suffixes_and_dosage_forms(public):
    got = roles.assign_roles(["uricalm sachets", "pumice cystitis", "keratolin ointment", "lisinopril",
                              "amoxicillin", "metoprolol", "omeprazole", "adalimumab", "pyelonephritis",
                              "nephropathy", "night sweats", "weather"], public)
    assert got == {"uricalm sachets": roles.DRUG, "pumice cystitis": roles.CONDITION,
                   "keratolin ointment": roles.DRUG, "lisinopril": roles.DRUG, "amoxicillin": roles.DRUG,
                   "metoprolol": roles.DRUG, "omeprazole": roles.DRUG, "adalimumab": roles.DRUG,
                   "pyelonephritis": roles.CONDITION, "nephropathy": roles.CONDITION,
                   "night sweats": None, "weather": None}


def test_a_common_english_word_is_never_typed_by_its_ending(public):
    for word in ("diagnosis", "prognosis", "academia", "aroma", "diploma", "april", "tourism", "nostalgia"):
        assert roles.role_of(word, public) is None, word


def test_the_icd10_list_types_conditions_and_its_chapter_r_entries_as_symptoms():
    icd = roles.RoleSources.of(["icd10-cm"])
    assert roles.role_of("asthma", icd) == roles.CONDITION
    assert roles.role_of("portal hypertension", icd) == roles.CONDITION
    assert roles.role_of("nausea", icd) == roles.SYMPTOM
    assert roles.role_of("chest pain", icd) == roles.SYMPTOM
    assert roles.role_of("asthma", roles.RoleSources.of(())) is None, "only a list the spec names types a word"


def test_a_custodians_list_types_its_entries_after_a_role_line(tmp_path):
    path = tmp_path / "formulary.txt"
    path.write_text("# my public list\nuntyped thing\n# role: drug\nbluepill\n# role: symptom\ngrey tongue\n",
                    encoding="utf-8")
    assert roles.typed_entries(str(path)) == {"bluepill": roles.DRUG, "grey tongue": roles.SYMPTOM}
    sources = roles.RoleSources.of([str(path)])
    assert roles.role_of("Bluepill", sources) == roles.DRUG
    assert roles.role_of("untyped thing", sources) is None


def test_roles_read_the_released_words_and_public_files_only(public, monkeypatch):
    """Role assignment is a function of the words and the public sources: the same words, the same roles,
    whatever else exists; nothing but files under resources/ (and the spec's named lists) is opened."""
    opened: list[str] = []
    real_read = Path.read_text

    def spy(self, *args, **kwargs):
        opened.append(str(self))
        return real_read(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", spy)
    sources = roles.RoleSources.of(["icd10-cm"])
    assert all(p.startswith(str(resources_dir())) for p in opened), opened
    words = ["tusfosemia", "tregedcillin", "wheezing"]
    assert roles.assign_roles(words, sources) == roles.assign_roles(list(words), sources)


class _Answering:
    """A stand-in language model that answers the few-shot role prompt from a table: for the word on the
    prompt's last line, logit ``margin`` on its answer's first token, 0 elsewhere. It records what it was asked."""

    def __init__(self, answers: dict[str, str], margin: float) -> None:
        from types import SimpleNamespace

        from core.models.registry import packaged_tokenizer

        self.tokenizer = packaged_tokenizer()
        self.chat = SimpleNamespace(tokenizer=self.tokenizer)
        self.answers, self.margin, self.asked = answers, margin, []

    def start_logits(self, prompts, shared_prefix=0):

        import torch
        from types import SimpleNamespace

        rows = torch.zeros(len(prompts), len(self.tokenizer))
        for r, ids in enumerate(prompts):
            word = self.tokenizer.decode(ids[shared_prefix:]).strip().rstrip(":")
            self.asked.append(word)
            answer = self.tokenizer.encode(" " + self.answers.get(word, "other"), add_special_tokens=False)[0]
            rows[r, answer] = self.margin
        return SimpleNamespace(logits=lambda: rows)


def test_the_public_model_types_a_word_no_other_source_knows_only_when_its_answer_is_clear(public):
    told = {"leisomafen": "drug", "shingles": "disease", "tremors": "symptom", "mother": "other"}
    clear = _Answering(told, margin=roles.ASK_MARGIN + 0.5)
    asked = public.asking(clear, ["leisomafen", "shingles", "tremors", "mother", "lisinopril", "shingles"])
    assert sorted(clear.asked) == ["leisomafen", "mother", "shingles", "tremors"], "typed words are not asked"
    # "disease" is an answer the small model is not trusted with (it calls symptoms diseases): left untyped
    assert {w: roles.role_of(w, asked) for w in told} == {
        "leisomafen": roles.DRUG, "shingles": None, "tremors": roles.SYMPTOM, "mother": None}
    assert roles.clear_answers(clear, ["shingles"]) == {"shingles": roles.CONDITION}
    assert roles.role_of("lisinopril", asked) == roles.DRUG  # morphology first
    close = public.asking(_Answering(told, margin=roles.ASK_MARGIN - 0.5), list(told))
    assert all(roles.role_of(w, close) is None for w in told), "a close call leaves the word untyped"
    assert public.asking(clear, []) is public


def test_the_role_prompt_holds_the_fixed_examples_and_the_released_word_only(public):
    model = _Answering({}, margin=2.0)
    seen = []
    start = model.start_logits
    model.start_logits = lambda prompts, shared_prefix=0: (seen.extend(prompts), start(prompts, shared_prefix))[1]
    roles.asked_roles(model, ["leisomafen"])
    text = model.tokenizer.decode(seen[0])
    assert text.startswith(roles.ASK_HEADER) and text.endswith("\nleisomafen:")
    for word, role in roles.ASK_EXAMPLES:
        assert f"{word}: {roles.ASK_ANSWERS[role]}\n" in text


def test_the_placements_ask_the_public_model_only_for_a_form_with_typed_slots(public):
    model = _Answering({"leisomafen": "drug"}, margin=2.0)
    topic = rt.Topic("tusfosemia", ("leisomafen", "weather"))
    (placement,) = rl.topic_placements([topic], NOTE, public, model)
    assert placement.placed == ("tusfosemia", "leisomafen") and placement.lead_words == ("weather",)
    assert rl.topic_placements([topic], ex.shipped_example("review"), public, model)[0].untyped == topic.words
    assert sorted(model.asked) == ["leisomafen", "weather"], "the review form has no typed slot: nothing asked"


# -- the form's slots and the lead -----------------------------------------------------------------------


def test_the_clinical_note_has_three_typed_slots_and_other_forms_none():
    assert form_slots(NOTE) == (Slot(roles.SYMPTOM, "reports"), Slot(roles.CONDITION, "Impression:"),
                                Slot(roles.DRUG, "Plan:"))
    for form in ("review", "news_article", "film_ratings", "case_file"):
        assert form_slots(ex.shipped_example(form)) == (), form


def test_the_lead_places_each_typed_word_in_its_section():
    sources = roles.RoleSources.of(["icd10-cm"])
    topic = rt.Topic("pumice cystitis", ("keratolin ointment", "nausea", "uricalm sachets"))
    (placement,) = rl.topic_placements([topic], NOTE, sources)
    lead = rl.placed_lead(wp.realisation_lead(NOTE, topic), placement)
    assert lead.endswith(", reports nausea")
    assert dict(placement.phrases) == {"Impression: pumice cystitis": ("pumice cystitis",),
                                       "Plan: keratolin ointment and uricalm sachets": ("keratolin ointment",
                                                                                        "uricalm sachets")}
    text, added = dr.guarantee_words(lead + " for two weeks.", topic.words, placement)
    assert added and text.endswith("Impression: pumice cystitis. Plan: keratolin ointment and uricalm sachets.")
    score = metric.role_accuracy([text], {"pumice cystitis": metric.CONDITION, "nausea": metric.SYMPTOM,
                                          "keratolin ointment": metric.DRUG, "uricalm sachets": metric.DRUG})
    assert score.accuracy == 1.0


def test_a_word_of_no_role_joins_the_leads_slot_and_a_form_without_slots_is_untouched(public):
    topic = rt.Topic("night sweats", ("tusfosemia", "weather"))
    (placement,) = rl.topic_placements([topic], NOTE, public)
    # in a form whose lead ends on a slot, the words of no role join it: no "Key terms:" line is needed for them
    assert placement.untyped == () and placement.lead_words == ("night sweats", "weather")
    assert placement.placed == ("tusfosemia",)
    lead = rl.placed_lead(wp.realisation_lead(NOTE, topic), placement)
    assert lead == wp.realisation_lead(NOTE, topic) + " night sweats and weather"
    text, added = dr.guarantee_words(lead + " for a week.", topic.words, placement)
    assert added and "Key terms" not in text and text.endswith("Impression: tusfosemia.")
    review = ex.shipped_example("review")
    (plain,) = rl.topic_placements([topic], review, public)
    assert plain.untyped == topic.words and not plain.phrases and not plain.lead
    assert dr.guarantee_words("A review.", topic.words, plain) == dr.guarantee_words("A review.", topic.words)
    assert place(topic.words, {}, form_slots(NOTE), "").untyped == topic.words


def test_the_documents_of_one_topic_open_with_its_words_in_turn(public):
    topic = rt.Topic("tightness", ("cough", "weather"))
    placements = rl.topic_placements([topic] * 4, NOTE, public)
    leads = [p.lead for p in placements]
    assert leads[:3] == ["tightness, cough and weather", "cough, weather and tightness", "weather, tightness and cough"]
    assert leads[3] == leads[0] and all(set(p.lead_words) == set(topic.words) for p in placements)


def test_realise_on_the_tiny_model_writes_typed_words_in_their_slots(public):
    from core.models.registry import load_language_model
    from core.common.progress import NULL_REPORTER

    llm = load_language_model(TINY)
    topics = [rt.Topic("tusfosemia", ("tregedcillin", "skin rash")), rt.Topic("back stiffness", ("rash",))]
    out = rl.realise(topics, TASK, NOTE, llm, NULL_REPORTER,
                     rl.WriterSettings(max_new_tokens=12, roles=public))
    truth = {"tusfosemia": metric.CONDITION, "tregedcillin": metric.DRUG}
    for topic, doc in zip(topics, out):
        assert pd.missing_words(doc.text, topic.words) == []
    first = out[0].text
    assert "Impression: tusfosemia" in first and "Plan: tregedcillin" in first
    assert metric.role_accuracy([first], truth).accuracy == 1.0


# -- role accuracy -----------------------------------------------------------------------------------------


def test_role_accuracy_on_a_hand_made_example():
    truth = {"pumice cystitis": metric.CONDITION, "uricalm sachets": metric.DRUG, "keratolin ointment": metric.DRUG,
             "fever": metric.SYMPTOM, "cough": metric.SYMPTOM}
    documents = [
        "Consultation note. K. M., 47, reports uricalm sachets and pumice cystitis.",  # drug, condition: wrong
        "K. M. was diagnosed as keratolin ointment. Reports fever.",  # drug wrong, fever right
        "Consultation note. A. B., 30, reports cough. Impression: pumice cystitis. Plan: uricalm sachets.",  # 3 right
        "Fever and cough.\nKey terms: keratolin ointment.",  # no cue before any: none placed
        "Reports fever. Examination: fever. Impression: fever.",  # fever also in the condition's section: wrong
    ]
    score = metric.role_accuracy(documents, truth)
    assert (score.pairs, score.placed) == (11, 4)
    assert score.by_role == {metric.SYMPTOM: (5, 2), metric.CONDITION: (2, 1), metric.DRUG: (4, 1)}
    assert score.accuracy == pytest.approx(4 / 11)
    assert metric.role_accuracy(["no typed word here"], truth).accuracy is None


def test_the_demo_clinics_own_notes_score_one():
    truth = metric.clinic_truth(resources_dir() / "demo" / "clinic" / "diseases.json")
    with (resources_dir() / "demo" / "clinic" / "notes.csv").open(encoding="utf-8") as fh:
        notes = [row["note"] for row in csv.DictReader(fh)][:200]
    score = metric.role_accuracy(notes, truth)
    assert score.pairs > 600 and score.accuracy == 1.0


def test_the_certificate_says_roles_are_post_processing_for_a_form_with_typed_slots():
    from core.methods.dp_synrag.method import generation_notes
    from core.specs.runspec import DPSynRAGSpec

    note = [n for n in generation_notes(DPSynRAGSpec(text="realised"), NOTE)
            if n.startswith("Roles:")]
    assert len(note) == 1 and "'Impression:'" in note[0] and "no cost" in note[0]
    assert not [n for n in generation_notes(DPSynRAGSpec(text="realised"), ex.shipped_example("review"))
                if n.startswith("Roles:")]
