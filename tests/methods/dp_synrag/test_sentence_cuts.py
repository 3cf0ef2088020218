"""Sentences a reader would cut from a written document (core/methods/dp_synrag/sentence_cuts.py)."""

from __future__ import annotations

from core.methods.dp_synrag.realisation import sentences_of
from core.methods.dp_synrag.sentence_cuts import about_a_text, cut_sentences, variant_of

RELEASED = ["shesoltinib", "gumkleimalgia", "ulcers", "blisters", "palms", "metallic taste", "brufounoma"]


def test_a_variant_is_a_rare_word_much_like_a_released_one_and_not_that_word():
    assert variant_of("sisoletinib", RELEASED) == "shesoltinib"
    assert variant_of("Brufnoma", RELEASED) == "brufounoma"
    assert variant_of("gummakelgia", RELEASED) == "gumkleimalgia"
    for word in ("shesoltinib", "taste", "blister", "blistering", "tablets", "medication", "zemgranolol", "every", "ulcerous"):
        assert variant_of(word, RELEASED) is None, word


def test_a_sentence_holding_a_variant_goes_and_the_first_sentence_writes_the_released_word():
    text = ("Consultation note. A. N., 70, reports blisters after sisoletinib. Examination: brufnoma on the palms. "
            "Impression: gumkleimalgia. Plan: shesoltinib.")
    kept = cut_sentences(sentences_of(text), RELEASED, keep=2)  # the lead is two sentences
    assert kept[:2] == ["Consultation note.", "A. N., 70, reports blisters after shesoltinib."]
    assert not any("brufnoma" in s or "Examination" in s for s in kept)
    assert kept[2:] == ["Impression: gumkleimalgia.", "Plan: shesoltinib."]
    assert cut_sentences(["Nothing misspelt here."], RELEASED) == ["Nothing misspelt here."]
    assert cut_sentences(sentences_of(text), RELEASED, keep=1)[1:] == ["Impression: gumkleimalgia.", "Plan: shesoltinib."]


def test_a_sentence_about_a_text_goes_but_not_from_the_lead():
    for sentence in ("The above are the examples.", "The above two documents are related to a clinical trial.",
                     "This content was used to support the previous response.", "This is a relevant example of it.",
                     "Here is the note you asked for."):
        assert about_a_text(sentence), sentence
    for sentence in ("Plan: review in two weeks.", "The patient is above average height.",
                     "This is a common finding in older patients.", "For example, the fever came back."):
        assert not about_a_text(sentence), sentence
    text = ["Consultation note.", "Here is the note: A. N., 70, reports blisters.", "Plan: rest.", "The above are all examples."]
    assert cut_sentences(text, RELEASED, keep=2) == text[:3]
