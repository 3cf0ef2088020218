"""Misspelt copies of a released word are taken out of a written document (core/methods/dp_synrag/variants.py)."""

from __future__ import annotations

from core.methods.dp_synrag.realisation import sentences_of
from core.methods.dp_synrag.variants import variant_of, without_variants

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
    kept = without_variants(sentences_of(text), RELEASED, keep=2)  # the lead is two sentences
    assert kept[:2] == ["Consultation note.", "A. N., 70, reports blisters after shesoltinib."]
    assert not any("brufnoma" in s or "Examination" in s for s in kept)
    assert kept[2:] == ["Impression: gumkleimalgia.", "Plan: shesoltinib."]
    assert without_variants(["Nothing misspelt here."], RELEASED) == ["Nothing misspelt here."]
    assert without_variants(sentences_of(text), RELEASED, keep=1)[1:] == ["Impression: gumkleimalgia.", "Plan: shesoltinib."]
