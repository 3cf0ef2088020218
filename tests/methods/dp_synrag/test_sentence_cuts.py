"""Sentences a reader would cut from a written document (core/methods/dp_synrag/write/sentence_cuts.py)."""

from __future__ import annotations

from core.methods.dp_synrag.write.drafts import sentences_of
from core.methods.dp_synrag.write.sentence_cuts import about_a_text, cut_sentences, variant_of

RELEASED = ["shesoltinib", "gumkleimalgia", "ulcers", "blisters", "palms", "metallic taste", "brufounoma"]


def test_a_variant_is_a_rare_word_much_like_a_released_one_and_not_that_word():
    assert variant_of("sisoletinib", RELEASED) == "shesoltinib"
    assert variant_of("Brufnoma", RELEASED) == "brufounoma"
    assert variant_of("gummakelgia", RELEASED) == "gumkleimalgia"
    for word in ("shesoltinib", "taste", "blister", "blistering", "tablets", "medication", "zemgranolol", "every", "ulcerous"):
        assert variant_of(word, RELEASED) is None, word


def test_a_sentence_holding_a_variant_goes_and_a_lead_sentence_is_cut_at_the_clause_that_brings_it():
    lead = ["Consultation note.", "A. N., 70, reports blisters"]
    text = ("Consultation note. A. N., 70, reports blisters for a week after sisoletinib. Examination: brufnoma on the "
            "palms. Impression: gumkleimalgia. Plan: shesoltinib.")
    kept = cut_sentences(sentences_of(text), RELEASED, lead)
    # not "after shesoltinib": that would put the drug among the complaints
    assert kept == ["Consultation note.", "A. N., 70, reports blisters for a week.", "Impression: gumkleimalgia.",
                    "Plan: shesoltinib."]
    clean = "Consultation note. A. N., 70, reports blisters for a week. Plan: shesoltinib."
    assert cut_sentences(sentences_of(clean), RELEASED, lead) == sentences_of(clean)
    assert cut_sentences(sentences_of(text), RELEASED)[:1] == ["Consultation note."]  # no lead: every sentence is read
    # no clause break after the lead's words: back to the lead; a bare label ("reports") is not left alone
    lone = "Consultation note. A. N., 70, reports blisters and sisoletinib use. Plan: shesoltinib."
    assert cut_sentences(sentences_of(lone), RELEASED, lead)[1] == "A. N., 70, reports blisters."
    bare = ["Consultation note.", "A. N., 70, reports"]
    bare_text = "Consultation note. A. N., 70, reports sisoletinib use. Plan: shesoltinib."
    assert cut_sentences(sentences_of(bare_text), RELEASED, bare, lead_ends_bare=True) == ["Consultation note.",
                                                                                           "Plan: shesoltinib."]


def test_a_sentence_about_a_text_goes_but_not_from_the_lead():
    for sentence in ("The above are the examples.", "The above two documents are related to a clinical trial.",
                     "This content was used to support the previous response.", "This is a relevant example of it.",
                     "Here is the note you asked for."):
        assert about_a_text(sentence), sentence
    for sentence in ("Plan: review in two weeks.", "The patient is above average height.",
                     "This is a common finding in older patients.", "For example, the fever came back."):
        assert not about_a_text(sentence), sentence
    text = ["Consultation note.", "Here is the note: A. N., 70, reports blisters.", "Plan: rest.", "The above are all examples."]
    assert cut_sentences(text, RELEASED, ["Consultation note.", "Here is the note: A. N., 70, reports"]) == text[:3]
