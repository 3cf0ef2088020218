"""Public realisation with a shipped demonstration of the form (docs/method.md §2.6).

The writer sees one invented, worked case of its form before the released topic; it may keep the form's
words but never copies a run of the demonstration; the prompt holds only released words, the task, the
example and the demonstration; sentence cleaning keeps titles such as "Mr." inside a sentence.
"""

from __future__ import annotations

import csv
import re

import pytest

from core.corpus import Unit
from core.methods.dp_synrag.shape import examples as ex
from core.methods.dp_synrag.shape import released_topics as rt
from core.methods.dp_synrag.write import drafts as dr
from core.methods.dp_synrag.write import example_check as ec
from core.methods.dp_synrag.write import public_decoding as pd
from core.methods.dp_synrag.write import realisation as rl
from core.methods.dp_synrag.write import writer_prompt as wp
from core.models.registry import packaged_tokenizer
from core.common.paths import resources_dir

CANARY = "Zqxvortimer Blandquist-7731"
TASK = "Answer patients' questions about which disease matches their symptoms."


def test_every_shipped_form_has_an_invented_demonstration_that_holds_its_own_words():
    for form in ex.FORMS:
        example = ex.shipped_example(form)
        demo = ex.demonstration(example)
        assert demo is not None, form
        assert demo.topic.related, form
        assert not pd.missing_words(demo.document, demo.topic.words), form
        assert "[" not in demo.document, form  # a filled document, no placeholders left
    assert ex.demonstration("Visit note. [name] says [what].") is None  # a custodian's own example: none
    assert ex.demonstration("") is None


def test_the_demonstrations_are_not_documents_of_the_demo_corpora():
    units = []
    for folder, file, column in (("clinic", "notes.csv", "note"), ("movielens", "users.csv", "document")):
        with open(resources_dir() / "demo" / folder / file, newline="", encoding="utf-8") as fh:
            units += [Unit(uid=row["id"], text=row[column]) for row in csv.DictReader(fh)]
    for form in ex.FORMS:
        demo = ex.demonstration(ex.shipped_example(form))
        assert demo is not None
        assert ec.example_problem(demo.document, units) == ""


def test_the_prompt_holds_released_words_task_example_and_demonstration_only():
    example = ex.shipped_example("clinical_note")
    demo = ex.demonstration(example)
    topic = rt.Topic("drimkitopathy", ("sore throat", "low fever"))
    prompt = wp.realisation_prompt(topic, TASK, example, demo=demo)
    assert demo is not None and demo.document in prompt and example in prompt and TASK in prompt
    assert prompt.rstrip().endswith("Document:")  # the topic is the last case: the writer answers it
    assert "Topic: drimkitopathy. Related words: sore throat, low fever." in prompt
    assert CANARY not in prompt
    template = (resources_dir() / "prompts" / "realise_demo.txt").read_text(encoding="utf-8")
    public = " ".join([template, wp.RELATED_WORDS, TASK, example, demo.document, *demo.topic.words, *topic.words])
    assert set(re.findall(r"\w+", prompt)) <= set(re.findall(r"\w+", public))
    # a topic with no released co-keyword is asked for alone: no "Related words: none." to write about
    alone = wp.realisation_prompt(rt.Topic("drimkitopathy"), TASK, example, demo=demo)
    assert alone.rstrip().endswith("Topic: drimkitopathy.\nDocument:") and "none" not in alone.lower()


def test_the_copy_guard_bans_runs_of_the_demonstration_but_not_the_form():
    tokenizer = packaged_tokenizer()
    example = ex.shipped_example("clinical_note")
    demo = ex.demonstration(example)
    assert demo is not None
    guard = pd.copy_guard(tokenizer, demo.document, example)
    demo_ids = list(tokenizer.encode(demo.document, add_special_tokens=False))
    copied = [i for i in range(pd.COPY_NGRAM - 1, len(demo_ids))
              if demo_ids[i] in pd._banned_by_guard(demo_ids[:i], guard)]
    assert len(copied) >= len(demo_ids) // 2  # most of the demonstration cannot be written again
    form_ids = list(tokenizer.encode(example, add_special_tokens=False))
    assert not any(form_ids[i] in pd._banned_by_guard(form_ids[:i], guard)
                   for i in range(pd.COPY_NGRAM - 1, len(form_ids)))  # the bare form stays writable


@pytest.mark.parametrize("title", ["Mr.", "Ms.", "Dr.", "Mrs."])
def test_cleaning_keeps_a_title_inside_its_sentence(title):
    text = f"Consultation note. {title} Okafor, 58, reports night pain. Impression: gout"
    assert dr.clean_draft(text) == f"Consultation note. {title} Okafor, 58, reports night pain."


def test_the_lead_invents_initials_and_an_age_never_a_name_and_differs_by_topic():
    example = ex.shipped_example("clinical_note")
    leads = {wp.realisation_lead(example, rt.Topic(f"topic{i}", ("sore throat",))) for i in range(40)}
    assert len(leads) > 20  # documents do not all start alike
    for lead in leads:
        assert re.fullmatch(r"Consultation note\. [A-Z]\. [A-Z]\., \d{2}, reports", lead), lead
        assert 19 <= int(lead.split(", ")[1]) <= 88
    topic = rt.Topic("gout", ("redness",))
    assert wp.realisation_lead(example, topic) == wp.realisation_lead(example, topic)  # a rerun writes the same
    # the documents of one topic (the same words, by released count) get people of their own
    same_topic = {wp.realisation_lead(example, topic, i) for i in range(20)}
    assert len(same_topic) > 10 and wp.realisation_lead(example, topic, 7) == wp.realisation_lead(example, topic, 7)
    assert wp.realisation_lead(ex.shipped_example("review"), topic) == "Review of"  # the form asks no person first
    assert wp.realisation_lead("", topic) == ""
    lead = wp.realisation_lead(example, topic)
    assert dr.clean_draft(lead + " redness for two days.") == lead + " redness for two days."  # commas kept


def test_cleaning_drops_the_writers_talk_about_its_example():
    lead = "Consultation note. M. B., 42, reports"
    for talk in ("This example shows how a medical record can be used.", "You can find this information online at.",
                 "A more detailed explanation can be found on this webpage.", "Question: What is it?",
                 "This is a medical reference that provides information about this disease.",
                 "The above examples are from medical documents that support the idea.",
                 "Title: Bedside examinations of patients with chronic conditions.", "MedlinePlus: Hand hygiene."):
        assert dr.clean_draft(f"{lead} a rash for two days. {talk}") == f"{lead} a rash for two days."


def test_cleaning_keeps_initials_inside_their_sentence():
    lead = "Consultation note. M. B., 42, reports"
    assert dr.clean_draft(lead + " a rash. Here is the document: done.") == lead + " a rash."
    assert dr.clean_draft(lead + " a rash [details].") == lead + " a rash."  # placeholder dropped, comma kept


def test_the_certificate_note_quotes_the_demonstration_the_writer_saw():
    from core.methods.dp_synrag.method import generation_notes
    from core.specs.runspec import DPSynRAGSpec

    shipped = " ".join(generation_notes(DPSynRAGSpec(text="realised"), ex.shipped_example("clinical_note")))
    demo = ex.demonstration(ex.shipped_example("clinical_note"))
    assert demo is not None and demo.document in shipped
    own = " ".join(generation_notes(DPSynRAGSpec(text="realised"), "Visit note. [name] has [x]."))
    assert "demonstration" not in own  # a custodian's own example: the writer saw no demonstration


def test_each_realised_document_is_previewed_on_the_run_page():
    from core.models.registry import load_language_model
    from core.common.progress import CallbackReporter
    from core.specs.runspec import ModelChoice

    events = []
    llm = load_language_model(ModelChoice(source="tiny-random"))
    topics = [rt.Topic("fever", ("cough",)), rt.Topic("rash", ("itch",))]
    done = rl.realise(topics, TASK, ex.shipped_example("clinical_note"), llm, CallbackReporter(events.append), rl.WriterSettings(8))
    previews = [e.message for e in events if e.kind == "preview"]
    assert sorted(previews) == sorted(d.text for d in done)  # each as it becomes final (a retry finishes later)


def test_an_unfinished_last_sentence_is_cut_only_when_whole_sentences_hold_most_of_the_text():
    lead = "Consultation note. N. C., 25, reports"
    assert dr.clean_draft(lead + " aura and nausea for a week with nothing") == lead + " aura and nausea for a week with nothing."
    text = "Consultation note. Fever and cough for two days. Impression: a viral chest infection. Plan: rest and"
    assert dr.clean_draft(text) == "Consultation note. Fever and cough for two days. Impression: a viral chest infection."


def test_a_form_that_opens_with_its_headline_starts_with_one_of_the_documents_words():
    news = ex.shipped_example("news_article")
    topic = rt.Topic("kremlin", ("sanctions", "putin"))
    leads = [wp.realisation_lead(news, topic, i) for i in range(30)]
    assert set(leads) == {"Kremlin", "Sanctions", "Putin"}  # a topic's headlines do not all open alike
    assert leads == [wp.realisation_lead(news, topic, i) for i in range(30)]  # a rerun or a resume: the same
    assert wp.realisation_lead("[Title]\n[text]", rt.Topic("al jazeera")) == "Al jazeera"
    assert wp.realisation_lead("[what] happened.", rt.Topic("gout")) == ""


def test_the_writer_may_not_write_the_prompts_labels():
    tokenizer = packaged_tokenizer()
    guard = pd.with_scaffold(tokenizer, {})
    for text in ("The topic of tass", "Kremlin. Related words: putin", "Document: a rash", "Key terms: gout"):
        ids = list(tokenizer.encode(text, add_special_tokens=False))
        assert any(ids[i] in pd._banned_by_guard(ids[:i], guard) for i in range(len(ids))), text
    for text in ("Fever related to a viral infection.", "The patient documented the pain."):
        ids = list(tokenizer.encode(text, add_special_tokens=False))
        assert not any(ids[i] in pd._banned_by_guard(ids[:i], guard) for i in range(len(ids))), text


def test_a_form_that_opens_with_the_person_starts_with_invented_initials():
    lead = wp.realisation_lead("[name] rated these films highly: [film] ([genres]).", rt.Topic("fargo", ("heat",)))
    assert re.fullmatch(r"[A-Z]\. [A-Z]\. rated these films highly:", lead), lead


def test_a_document_keeps_the_forms_length_unless_a_released_word_comes_later():
    text = "K. M. rated these films highly: Fargo (Crime). This is how lists work. Heat is good. More talk."
    assert dr.trim_to_form(text, ["fargo"], 2) == "K. M. rated these films highly: Fargo (Crime). This is how lists work."
    assert dr.trim_to_form(text, ["fargo", "heat", "missing"], 2) == (
        "K. M. rated these films highly: Fargo (Crime). This is how lists work. Heat is good.")
    assert dr.trim_to_form(text, ["fargo"], 0) == text  # no demonstration: no limit
    assert dr.clean_draft("K. M. rated these films highly: Fargo, Heat This is a sample of the list") == (
        "K. M. rated these films highly: Fargo, Heat.")


def test_a_document_meant_to_be_longer_than_the_demonstration_keeps_more_sentences():
    demo = "Old bridge to close. Riverton, Tuesday. The council said that the old bridge will close for six months."  # 3, 18 words
    assert dr.sentence_limit(demo) == 4 and dr.sentence_limit(demo, 12) == 4  # the form's length: its sentences and one
    assert dr.sentence_limit(demo, 60) == 11  # 60 words at six words a sentence, and one more
    profile = "K. M. rated these films highly: Fargo (Crime), Heat (Action) and Big (Comedy)."  # a list: one sentence
    assert dr.sentence_limit(profile) == 1 and dr.sentence_limit(profile, 200) == 1
    assert dr.trim_to_form(profile + " This is a part of the story.", ["fargo"], 1) == profile


def test_a_run_on_sentence_is_cut_at_a_comma_unless_a_released_word_would_go():
    head = "Plan: rest at home with " + " ".join(["fluids"] * 20)
    long = head + ", then " + " ".join(["talk"] * 20) + " and review in a week."
    assert dr.trim_to_form(long, ["rest"], 4) == head + "."
    assert dr.trim_to_form(long, ["rest", "review"], 4) == long  # "review" lies beyond the cut


def test_cleaning_drops_a_label_the_writer_made_up_and_keeps_the_prompts_own():
    prompt = "Write a news article.\nTopic: russia\nRelated words: kremlin."
    assert dr.clean_draft("Fact: the Kremlin met the press.", prompt) == "The Kremlin met the press."
    assert dr.clean_draft("Russia: Important note: the Kremlin met the press.", prompt) == "Russia: the Kremlin met the press."
    assert dr.clean_draft("The talks went on. Press releases: the Kremlin said no.", prompt) == (
        "The talks went on. The Kremlin said no.")
    assert dr.clean_draft("Fact: the Kremlin met the press.") == "Fact: the Kremlin met the press."  # no prompt, no rule
    note = "Consultation note. M. B., 42, reports a rash. Examination: dry skin. Impression: eczema. Plan: cream."
    form = ex.shipped_example("clinical_note")
    assert dr.clean_draft(note, f"{form}\nTopic: eczema") == note  # the form's labels stay
    assert dr.clean_draft("At 12:05 the Kremlin met the press.", prompt) == "At 12:05 the Kremlin met the press."


def test_cleaning_closes_a_sentence_once():
    assert dr.clean_draft("News and tips:. This week, a story.") == "News and tips. This week, a story."
    assert dr.clean_draft("He met Donald Trump.. The talks went on.") == "He met Donald Trump. The talks went on."
    assert dr.clean_draft("He waited... The talks went on.") == "He waited... The talks went on."
