"""The junk detector (issue 22) on labelled examples: the junk quoted in the issue, and clean text."""

from __future__ import annotations

import math

import pytest

from core.evaluation.quality import junk_rate, junk_reasons, prompt_ngrams, split_topic_line

# Verbatim from issue 22 (synthetic documents of round 2 runs).
ISSUE_JUNK = [
    "isn: I've just rephrased the original text to make it clearer and more concise: Document: …",
    "href (www, ounce): https://www.huffpost.com/2012/02/22/boo-cakes-…",
    "chewy: chewy",
    "inhaled ashaline (wheezing near smoke, cinder asthma, coughing fits at dawn, tight throat, worsened): "
    "Document: Source: https://www.careers.dallasunhamed.com/…",
    "… (dry swallowing, hoarse voice, …): no Note the document without changing any text. The document has "
    "changed nothing about the content of the document…",
    "uricalm sachets (…): Puppy (16) 2018 Puppy (17) 2018",
]

CLEAN = [
    # notes (two with the released topic line in front, as DP-SynRAG writes them)
    "velvet throat (hoarse voice, dry swallowing): A 52-year-old teacher reports a hoarse voice for three weeks "
    "and pain when swallowing. Impression: velvet throat. Plan: voice rest and a follow-up in two weeks.",
    "asthma (wheezing, cough): The patient describes wheezing near smoke and coughing fits at dawn. "
    "She was started on an inhaler and asked to return if symptoms worsen.",
    "Consultation note. Maria, 45, reports tiredness and joint pain. Impression: early arthritis. Plan: ibuprofen.",
    "Follow-up visit: the rash on his forearm has faded since he stopped the new soap; no further treatment needed.",
    # reviews
    "These oat cookies are chewy and not too sweet. My kids finished the box in two days.",
    "Loved it, would buy again!",
    "The coffee arrived quickly, but the bag was half empty and the beans tasted burnt. I asked for a refund.",
    "chewy (crunchy, oats): Crunchy on the outside and chewy inside, the best granola bars I have bought this year.",
    # news
    "The city council voted on Tuesday to extend the night bus service until two in the morning.",
    "Shares in the carmaker fell 4 percent after it cut its forecast for the second time this year.",
    "Heavy rain flooded several villages in the north, and rescue teams evacuated more than 300 people.",
    "The minister said the new law would take effect in January, although opposition parties vowed to fight it.",
    "Officials signed the agreement in Geneva after talks that lasted late into the night.",
]


@pytest.mark.parametrize("text", ISSUE_JUNK)
def test_the_junk_quoted_in_the_issue_is_flagged(text: str) -> None:
    assert junk_reasons(text), text


@pytest.mark.parametrize("text", CLEAN)
def test_realistic_clean_notes_reviews_and_news_are_not_flagged(text: str) -> None:
    assert junk_reasons(text) == [], text


# Verbatim public-only outputs of the packaged SmolLM2 (news task, demo scale) that a reader discards.
ASSISTANT_JUNK = [
    "This can be a list: [Headline], [Day], [List of Deadstars & Money, when the world will rise, #Oxymoron, 2022",
    "Attached, please take a closer look. Here is one example of a document that fits this description:",
    "Your prompt highlights the unique and creative storytelling approach to document information, often "
    "involving real people whose stories could be included in a collection.",
    "I'm ready to help. What kind of document are you looking for?",
    # DP-SynRAG's writer on healthtweets (round 4, session 9), repeating its instruction instead of writing
    'The new version must contain the words "nyti", "rt," "goodlife". It should also include a link.',
    "The sentence must contain the words ms nyti rt ebw sz to avoid any potential issues in terms of formatting.",
    'This new version contains only the words "health" and "tips", which are not available in any other format.',
    "I'm here to help you with your health and wellness. I can provide you with the latest news.",
]


@pytest.mark.parametrize("text", ASSISTANT_JUNK)
def test_assistant_chatter_and_unfilled_forms_are_flagged(text: str) -> None:
    assert junk_reasons(text), text


def test_one_bracketed_credit_in_real_news_is_not_a_form() -> None:
    text = ("Fan Xiaohui, 15, is among the children in China who are deprived of adult supervision. "
            "[ZHU LIXIN/CHINA DAILY] Some sociologists argue that the percentage is lower.")
    assert junk_reasons(text) == []
    assert junk_reasons("Consultation note. [name], [age], reports [symptoms].") == ["unfilled placeholders"]


def test_each_kind_of_junk_has_its_reason() -> None:
    assert any(r.startswith("meta-text") for r in junk_reasons("Here is the rephrased version of the note for you."))
    assert "URL" in junk_reasons("Read more at www.example.org about the new clinic opening hours today.")
    assert "markup" in junk_reasons("The patient <b>reports</b> a mild fever and a dry cough since Monday.")
    assert "markup" in junk_reasons("Great blender &amp; easy to clean, the motor is quiet and strong.")
    assert "repeated line" in junk_reasons("Plan: rest and fluids for a week.\nPlan: rest and fluids for a week.")
    assert "repeated words (loop)" in junk_reasons(
        "The patient has a fever and the patient has a fever and the patient has a fever and the patient has a fever")
    assert junk_reasons("flu (fever): Vol 12 (3) 2018 pp 14-16 ref 22 / 30 ibid 40-42 ed 5") == ["not prose"]
    assert junk_reasons("flu (fever, cough): fever cough fever") == ["near-empty after the topic line"]


def test_an_echo_of_a_shipped_prompt_or_the_task_is_flagged() -> None:
    echo = "Leave out every specific detail: names, places, dates, ages and numbers, as the summary says."
    assert any(r.startswith("prompt echo") for r in junk_reasons(echo))
    task = "Answer patients' questions about which disease matches their symptoms."
    text = "flu (fever): answer patients questions about which disease matches their symptoms today."
    assert junk_reasons(text) == []
    assert any(r.startswith("prompt echo") for r in junk_reasons(text, instructions=[task]))
    assert ("rephrase", "the", "following", "document", "without", "altering") in prompt_ngrams()


def test_the_topic_line_is_split_off_only_when_it_is_a_short_prefix() -> None:
    assert split_topic_line("flu (fever, cough): She has a fever.") == ("flu (fever, cough)", "She has a fever.")
    assert split_topic_line("She has a fever. Impression: flu.") == ("", "She has a fever. Impression: flu.")


def test_junk_rate_is_the_share_of_flagged_texts() -> None:
    assert junk_rate(ISSUE_JUNK + CLEAN[:6]) == pytest.approx(len(ISSUE_JUNK) / (len(ISSUE_JUNK) + 6))
    assert junk_rate(CLEAN) == 0.0
    assert math.isnan(junk_rate([]))


def test_real_corpora_are_almost_never_junk() -> None:
    """False positives on real text nobody here wrote for the detector: the shipped demo corpora (0 flagged)."""
    import csv

    from core.common.paths import resources_dir

    demo = resources_dir() / "demo"
    notes = [r["note"] for r in csv.DictReader(open(demo / "clinic" / "notes.csv", encoding="utf-8"))]
    users = [r["document"] for r in csv.DictReader(open(demo / "movielens" / "users.csv", encoding="utf-8"))]
    assert junk_rate(notes) == 0.0
    assert junk_rate(users) == 0.0  # long film lists with repeated genres are not loops
