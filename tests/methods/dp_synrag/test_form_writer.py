"""The writer in the corpus's own released forms (SPEC §7, docs/method.md §2.6b): post-processing of released forms."""

from __future__ import annotations

import random
import re

import numpy as np
import torch

from core.methods.dp_synrag.release.structure import ReleasedForms
from core.methods.dp_synrag.write.form_writer import FormWriter, assign_forms, pieces_of
from core.models.registry import packaged_tokenizer
from core.models.tiny import build_tiny_language_model

SKELETON = "Seen today: [name], [number]. Presenting symptoms were [text]. Plan: start [text] [number] mg for [month]."


def test_a_skeleton_is_fixed_wording_and_slots_in_order():
    kinds = [p.kind for p in pieces_of(SKELETON)]
    assert kinds == ["fixed", "name", "fixed", "number", "fixed", "text", "fixed", "text", "fixed", "number", "fixed",
                     "month", "fixed"]


def test_forms_are_drawn_in_proportion_to_their_noisy_counts():
    forms = ReleasedForms(("A [text].", "B [text]."), (300.0, 100.0))
    drawn = assign_forms(forms, 4000, np.random.default_rng())
    share = drawn.count("A [text].") / 4000
    assert abs(share - 0.75) < 4 * (0.75 * 0.25 / 4000) ** 0.5


def test_every_document_keeps_the_forms_wording_and_fills_each_slot_even_with_a_random_model():
    llm = build_tiny_language_model(packaged_tokenizer())
    writer = FormWriter(llm, torch.Generator().manual_seed(3), random.Random(3))  # test mode: fixed public seeds
    texts = writer.write("Answer questions about symptoms.", [SKELETON] * 5,
                         [("vemrenopathy", ("hives",))] * 5, batch=3)
    pattern = re.compile(r"^Seen today: [A-Z]\. [A-Z]\., \d{1,3}\. Presenting symptoms were [^\d\[\]]+\. Plan: start "
                         r"[^\d\[\]]+ ?\d{1,3} mg for [A-Z][a-z]+\.$")
    for text in texts:
        assert pattern.match(text), text


def _choices(skeleton: str) -> list[tuple]:
    from core.methods.dp_synrag.write.form_writer import _Row

    writer = FormWriter.__new__(FormWriter)  # the number rules read the released form only
    row = _Row(0, pieces_of(skeleton), ("a",))
    out = []
    for i, piece in enumerate(row.pieces):
        if piece.kind == "number":
            row.at = i
            out.append(tuple(writer._number_choices(row)))
    return out


def test_a_numbers_kind_comes_from_the_forms_wording_around_it():
    day_first, month_first, vitals, listed = (
        _choices("Admitted: [number] [month] [number]\n"),
        _choices("[name] ([number], male) was admitted on [month] [number], [number] with [text]."),
        _choices("HR [number] BP [number]/[number] at [number]:[number]. Cat [number]. [text] [number] mg."),
        _choices("[number]. Plan: [text].\n[number]. Review: [text]."),
    )
    assert max(day_first[0]) <= 28 and min(day_first[1]) >= 2019
    assert min(month_first[0]) == 18 and max(month_first[1]) <= 28 and min(month_first[2]) >= 2019
    hr, systolic, diastolic, hour, minute, category, dose = vitals
    assert min(hr) >= 55 and min(systolic) >= 100 and max(diastolic) <= 100 and max(hour) <= 23
    assert "07" in minute and max(category) <= 5 and 100 in dose
    assert listed == [(1,), (2,)]


def test_a_documents_dates_share_one_year_and_keep_their_order_by_month_also_in_numeric_dates():
    llm = build_tiny_language_model(packaged_tokenizer())
    writer = FormWriter(llm, torch.Generator().manual_seed(5), random.Random(5))  # test mode: fixed public seeds
    skeleton = "Admitted: [number] [month] [number]\nDischarged: [number] [month] [number]\nSeen [number]/[number]/[number]."
    texts = writer.write("Discharge summaries.", [skeleton] * 12, [("vemrenopathy", ("hives",))] * 12, batch=6)
    months = {m: i for i, m in enumerate(("January", "February", "March", "April", "May", "June", "July", "August",
                                           "September", "October", "November", "December"))}
    for text in texts:
        found = re.findall(r"(\d+) ([A-Z][a-z]+) (\d{4})", text)
        assert len(found) == 2, text
        (d1, m1, y1), (d2, m2, y2) = found
        assert text.rstrip(".").endswith("/" + y1), text  # the numeric date takes the document's year too
        d3, m3 = re.findall(r"(\d+)/(\d+)/\d{4}", text)[0]
        dates = [(months[m1] + 1, int(d1)), (months[m2] + 1, int(d2)), (int(m3), int(d3))]
        assert y1 == y2 and dates == sorted(dates), text  # each later than the one before ("16-10" after "3-10")
        assert all((b[0] - a[0]) * 28 + b[1] - a[1] <= 28 for a, b in zip(dates, dates[1:])), text  # within 4 weeks


def test_a_misspelt_copy_of_a_released_word_is_written_as_the_word():
    from core.methods.dp_synrag.write.sentence_cuts import respell_variants

    text = "Final diagnosis: Grogaemia. Medication: shetamvir 10 mg, a tablet."
    assert respell_variants(text, ["grogasemia", "sheitumvir"]) == (
        "Final diagnosis: Grogasemia. Medication: sheitumvir 10 mg, a tablet.")
    assert respell_variants("Reports dizziness.", ["dizzyness"]) == "Reports dizziness."  # an English word stays


def test_what_a_test_confirmed_is_the_condition_but_what_confirmed_it_is_not():
    from core.methods.dp_synrag.write.slot_fillers import slot_role

    assert slot_role("A skin biopsy confirmed ") == "condition"
    assert slot_role("Working diagnosis of x, confirmed by ") is None


def test_an_age_beside_a_sex_a_drug_topic_in_no_condition_slot_and_no_doubled_word_at_a_join():
    from core.methods.dp_synrag.write.sentence_cuts import tidy
    from core.methods.dp_synrag.write.slot_fillers import number_choices, role_filler

    assert min(number_choices("(", ", male) was admitted on")) == 18  # "(67, male)": an age
    assert min(number_choices(" BP 120/80 T ", ". Cat ")) == 36 and min(number_choices("apart from a pulse of ", ".")) == 55
    assert min(_choices("Triage [number]:[number]: [name], [number][text]. CC [text].")[2]) == 18
    assert role_filler("condition", ["klinthemzole", "stiffness"], {"klinthemzole": "drug"}, "klinthemzole") == ""
    assert role_filler("condition", ["tusfosemia"], {}, "tusfosemia") == "tusfosemia"
    assert tidy("firklitora 200 mg for for 5 weeks.") == "firklitora 200 mg for 5 weeks."


def test_a_text_slot_never_opens_on_a_lone_capital_but_one_may_be_written_onto_a_number():
    llm = build_tiny_language_model(packaged_tokenizer())
    writer = FormWriter(llm, torch.Generator().manual_seed(5), random.Random(5))  # test mode: fixed public seeds
    table = writer.table
    assert table.lone_capital[writer.encode("I")[0]] and not table.lone_capital[writer.encode("In")[0]]
    logits = torch.zeros(llm.vocab_size)
    logits[table.lone_capital.nonzero().flatten()] = 50.0  # a model that would write a capital letter anywhere
    from core.methods.dp_synrag.write.form_writer import _Row

    row = _Row(0, pieces_of("Issue: [text]. Age: [number][text]."), ("a",))
    row.at = 1
    assert not table.lone_capital[writer._sample_slot(row, "text", logits)]
    row.at = 4  # the letter written onto "[number]" ("49M")
    assert table.lone_capital[writer._sample_slot(row, "text", logits)]


def test_a_document_whose_own_words_state_a_fact_no_released_word_holds_is_dropped(monkeypatch):
    from core.methods.dp_synrag.write.content_terms import invented_terms

    assert invented_terms(["came in with asthma and sneezing", "seen on Monday"], ["tusfosemia", "asthma"]) == \
        ["sneezing", "monday"]
    assert invented_terms(["given zostatin at the university"], ["Seen today:"]) == ["zostatin", "university"]
    assert invented_terms(["very special to me diagnosis of diabetes"], ["votrosxane"]) == ["diabetes"]  # ICD-10-CM
    # names diabetes only with a qualifier: the general words hold the bare name a writer uses
    assert invented_terms(["a few days of feeling unwell"], ["tusfosemia"]) == []
    phrase = frozenset({"brittle nails"})  # a phrase the run released (another topic's symptom): a content term too
    assert invented_terms(["with brittle nails"], ["tusfosemia"]) == [] and \
        invented_terms(["with brittle nails"], ["tusfosemia"], phrase) == ["brittle nails"]
    assert invented_terms(["with brittle nails"], ["tusfosemia", "brittle nails"], phrase) == []
    llm = build_tiny_language_model(packaged_tokenizer())
    writer = FormWriter(llm, torch.Generator().manual_seed(3), random.Random(3))  # test mode: fixed public seeds
    own = [" asthma", " asthma", " a few things", " on Monday"]  # what the model writes in each row's [text] slots
    words = [("vemrenopathy", ("hives",)), ("vemrenopathy", ("asthma",)), ("vemrenopathy", ("hives",)),
             ("vemrenopathy", ("hives",))]

    def sample_slot(row, kind, logits):
        if kind == "number":
            return writer.encode(" 7")[0] if not row.slot_tokens else None
        tokens = writer.encode(own[row.index])
        return tokens[row.slot_tokens] if row.slot_tokens < len(tokens) else None

    monkeypatch.setattr(writer, "_sample_slot", sample_slot)
    texts = writer.write("Answer questions about symptoms.", [SKELETON] * 4, words, batch=4)
    assert texts[0] == "" and texts[3] == ""  # asthma and a weekday: no released word of the topic holds them
    assert "Presenting symptoms were asthma" in texts[1] and "a few things" in texts[2]


def test_a_date_made_of_a_slots_month_and_the_next_number_is_dropped_unless_the_form_holds_dates(monkeypatch):
    """ "Plan: start [text] [number] mg" with "March" in the slot reads "start March 50 mg": a date the form never
    released (the evaluation's grounding counts it so). In a form with a month slot a date is the form's own."""
    from core.methods.dp_synrag.write.content_terms import holds_date, invented_terms, states_date

    assert states_date("start March 50 mg") and states_date("seen 3/4/2024") and not states_date("for 5 weeks")
    assert holds_date(SKELETON) and holds_date("Admitted [number]/[number]/[number]") and not holds_date("[text] [number] mg")
    llm = build_tiny_language_model(packaged_tokenizer())
    writer = FormWriter(llm, torch.Generator().manual_seed(3), random.Random(3))  # test mode: fixed public seeds
    no_month = "Seen today: [name], [number]. Presenting symptoms were [text]. Plan: start [text] [number] mg."

    def sample_slot(row, kind, logits):
        if kind == "number":
            return writer.encode(" 50")[0] if not row.slot_tokens else None
        tokens = writer.encode(" March" if row.index == 0 and row.at == 7 else " hives")  # piece 7: after "start"
        return tokens[row.slot_tokens] if row.slot_tokens < len(tokens) else None

    monkeypatch.setattr(writer, "_sample_slot", sample_slot)
    texts = writer.write("Answer questions about symptoms.", [no_month] * 2, [("vemrenopathy", ("hives",))] * 2,
                         batch=2)
    assert invented_terms([" hives", " March"], ["vemrenopathy", "hives"]) == []  # no content term: the date drops it
    assert texts[0] == "" and re.search(r"Plan: start hives \d+ mg\.$", texts[1]), texts


def test_a_form_whose_complaint_lead_was_not_released_writes_the_topics_symptoms_in_its_first_clause_slot():
    """ "[name], [number], [text]. [text] a diagnosis of [text]." is "…, 39, was referred because of A, B and C. A
    urine test supported a diagnosis of D." with the lead lost to a slot: its first clause slot holds the topic's
    symptoms (typed or untyped, never the topic's own word or the form's words), not the writer's fiction; of several
    such slots the last before the condition's. A form with a
    symptom slot, a slot after a label, before a number or of a closed list gets none."""
    from core.methods.dp_synrag.write.slot_fillers import complaint_filler, role_filler, symptom_slot

    def slot(skeleton: str, closed: tuple[int, ...] = ()) -> int:
        return symptom_slot([(p.kind, p.text) for p in pieces_of(skeleton)], closed)

    assert slot("[name], [number], [text]. [text] a diagnosis of [text].") == 0
    assert slot("Follow-up note for [name], [text]. [text]. Working diagnosis of [text].") == 1  # the last before it
    assert slot("Diagnosis: [text]. [name], [number], [text]. [text].") == 1  # none before the condition: the first after
    assert slot("[name] [text] [number] years old and [text]. Diagnosis: [text].") == 1
    assert slot("[name], [number], [text]. [text] a diagnosis of [text].", closed=(0,)) == -1  # "female"
    assert slot("Seen today: [name], [number]. Presenting symptoms were [text]. Assessment: [text].") == -1
    assert slot("Sex: [text]. Diagnosis: [text].") == -1 and slot("[name], [text] [number]-[text]. Plan: [text].") == -1
    roles = {"tusfosemia": "condition", "tregedcillin": "drug", "wheezing": "symptom"}
    words = ["tusfosemia", "tregedcillin", "rash", "diagnosis", "wheezing", "insomnia", "sweating"]
    assert complaint_filler(words, roles, "tusfosemia", "a diagnosis of") == "rash, wheezing and insomnia"
    assert complaint_filler(["tusfosemia", "rash"], roles, "tusfosemia", "") == "rash"  # the run is clinical
    assert role_filler("symptom", ["triage", "cramps", "wheezing"], roles, "x", "Triage category: [number]") == \
        "cramps and wheezing"  # a symptom slot never lists the form's own word
    assert complaint_filler(["tusfosemia", "rash"], {"tusfosemia": "condition"}, "tusfosemia", "") == ""  # not clinical
    llm = build_tiny_language_model(packaged_tokenizer())
    writer = FormWriter(llm, torch.Generator().manual_seed(3), random.Random(3), roles)  # test mode: fixed public seeds
    texts = writer.write("Answer questions about symptoms.", ["[name], [number], [text]. [text] a diagnosis of [text]."] * 3,
                         [("tusfosemia", ("tregedcillin", "rash", "wheezing"))] * 3, batch=3)
    for text in filter(None, texts):
        assert re.match(r"^[A-Z]\. [A-Z]\., \d{1,3}, (rash and wheezing|wheezing and rash)\. .*a diagnosis of tusfosemia\.$",
                        text), text  # both, in a drawn order (slot_fillers.some_symptoms)
    assert any(texts)


def test_a_slot_never_says_a_word_twice_even_when_the_writer_prefers_it():
    """The output check's "Presented with: current study of current report of …": a word of four letters or more a
    slot has written is never its next token, however likely; a short word ("of") may come again."""
    from core.methods.dp_synrag.write.form_writer import _Row

    llm = build_tiny_language_model(packaged_tokenizer())
    writer = FormWriter(llm, torch.Generator().manual_seed(5), random.Random(5))  # test mode: fixed public seeds
    (current,), (of,) = writer.encode(" current"), writer.encode(" of")
    row = _Row(0, pieces_of("Presented with: [text]."), ("vemrenopathy",), at=1, slot_tokens=3,
               slot_text=" current study of")
    for favourite in (current, of):
        logits = torch.zeros(llm.vocab_size)
        logits[favourite] = 50.0
        chosen = writer._sample_slot(row, "text", logits)
        assert (chosen != current) if favourite == current else (chosen == of)


def test_a_mark_that_opens_the_forms_next_words_ends_the_slot():
    """The output check's "(19, age )) was admitted on ) was admitted on": a slot before ") was admitted on" that
    writes ")" has ended; the form's own ")" follows once."""
    from core.methods.dp_synrag.write.form_writer import _Row

    llm = build_tiny_language_model(packaged_tokenizer())
    writer = FormWriter(llm, torch.Generator().manual_seed(5), random.Random(5))  # test mode: fixed public seeds
    (bracket,), (comma_bracket,) = writer.encode(")"), writer.encode(",)")
    pieces = pieces_of("[name] ([number], [text]) was admitted on [month].")
    row = _Row(0, pieces, ("vemrenopathy",), at=[p.kind for p in pieces].index("text"), slot_tokens=1,
               slot_text=" female")
    for mark in (bracket, comma_bracket):  # ",)" holds it too ("(20, Jul ,) ) was admitted on")
        logits = torch.zeros(llm.vocab_size)
        logits[mark] = 50.0
        assert writer._sample_slot(row, "text", logits) is None


def test_a_condition_slot_no_released_word_fills_drops_the_document_in_a_run_that_types_conditions(monkeypatch):
    """The output check's "Dx: Banana", "Final diagnosis: Patient died due to …": a drug topic with no condition among
    its words (or a topic of common English, "Final diagnosis: tightness", written before) leaves the condition slot to
    the writer, whose diagnosis is fiction; in a run with a word typed as a condition that document is dropped. A run
    with none (no clinical corpus) keeps it, as the slot's own words. A symptom list never lists a word of time
    ("Presented with: november")."""
    from core.methods.dp_synrag.write.slot_fillers import role_filler

    assert role_filler("symptom", ["gulbudism", "november", "rash", "days", "hoarse"], {}, "gulbudism") == "rash and hoarse"
    # an untyped topic names a condition unless it is common English ("tightness" of "chest tightness") or a test
    # ("ecg" of "ECG confirmed …"), or public
    assert role_filler("condition", ["tightness", "hives"], {}, "tightness") == ""
    assert role_filler("condition", ["asthma"], {}, "asthma") == "asthma"
    assert role_filler("condition", ["ecg", "gulbudism"], {}, "ecg") == "" and role_filler("condition", ["swab"], {}, "swab") == ""
    llm = build_tiny_language_model(packaged_tokenizer())
    skeleton = "Diagnosis: [text]. Plan: [text]."
    topics = [("bolthetxane", ("hives",)), ("gulbudism", ("hives",))]
    texts = {}
    for typed in ({"bolthetxane": "drug", "gulbudism": "condition"}, {"bolthetxane": "drug"}):
        writer = FormWriter(llm, torch.Generator().manual_seed(3), random.Random(3), roles=typed)  # test mode seeds

        def sample_slot(row, kind, logits, writer=writer):  # the writer's own words: "well" (no content term)
            tokens = writer.encode(" well")
            return tokens[row.slot_tokens] if row.slot_tokens < len(tokens) else None

        monkeypatch.setattr(writer, "_sample_slot", sample_slot)
        texts[len(typed)] = writer.write("Discharge summaries.", [skeleton] * 2, topics, batch=2)
    assert texts[2][0] == "" and texts[2][1].startswith("Diagnosis: gulbudism."), texts
    assert texts[1][0].startswith("Diagnosis: well."), texts  # no word typed as a condition: kept


def test_a_sentence_whose_released_wording_goes_on_with_a_verb_gets_one_subject_word():
    """The output check's "[text] leaves hospital on [drug]" (the template's "He/She leaves hospital on …"): the writer
    filled the slot with "He was admitted on July LY"; a slot that opens a sentence whose wording goes on with a verb
    is its subject, one public subject word. "[text] diagnosis of" ("A urine test supported a diagnosis of") and
    "[text] confirmed" ("A chest X-ray confirmed") stay the writer's."""
    from core.methods.dp_synrag.write.slot_fillers import SUBJECTS, subject_slot

    def subjects(skeleton: str) -> list[int]:
        pieces = [(p.kind, p.text) for p in pieces_of(skeleton)]
        return [i for i, (kind, _) in enumerate(pieces) if kind == "text" and subject_slot(pieces, i)]

    assert subjects("[name], [number]. [text] confirmed [text]. [text] leaves hospital on [text] [number] mg.") == [8]
    assert subjects("Diagnosis: [text]. [text] will take [text].") == [3]
    assert subjects("[name], [number], was referred because [text]. [text] diagnosis of [text].") == []
    assert subjects("[text] | [name] | age [number]") == [] and subjects("Plan: [text]. [text]: [text].") == []
    llm = build_tiny_language_model(packaged_tokenizer())
    writer = FormWriter(llm, torch.Generator().manual_seed(4), random.Random(4))  # test mode: fixed public seeds
    texts = writer.write("Write discharge notes.", ["Dx: [text]. [text] leaves hospital on [text] [number] mg."] * 6,
                         [("gulbudism", ("bolthetxane",))] * 6, batch=3)
    for text in texts:
        subject = re.match(r"^Dx: [^.]*\. (\w+) leaves hospital on ", text)
        assert subject is not None and subject[1] in SUBJECTS, text
