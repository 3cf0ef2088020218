"""DP-SynRAG public realisation (SPEC §2.6, docs/method.md §2.4b) and the `[dp_synrag] text` variants.

The writer's prompt holds only released words, the public example and the task (a canary planted in the
corpus reaches no prompt and no output); every released word appears in its document; a pasted real
document as the example is refused before any charge; charges equal the plan for every variant; old specs
still load.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from tests.helpers import CANARY, TINY, TINY_SIZES, tiny_spec, write_notes

from core.common import prompts as prompts
from core.common.errors import PrivetError
from core.ledger import Ledger
from core.methods.dp_synrag.method import generation_notes, text_stage_notes
from core.methods.dp_synrag.release.budget import plan_dp_synrag
from core.methods.dp_synrag.shape import examples as ex
from core.methods.dp_synrag.shape import released_topics as rt
from core.methods.dp_synrag.write import drafts as dr
from core.methods.dp_synrag.write import example_check as ec
from core.methods.dp_synrag.write import public_decoding as pd
from core.methods.dp_synrag.write import realisation as rl
from core.methods.dp_synrag.write import writer_prompt as wp
from core.common.paths import resources_dir
from core.run.pipeline import plan, run_pipeline
from core.privacy.planner import STAGE_CLUSTER_KEYWORDS, STAGE_HISTOGRAM, STAGE_TOKENS
from core.specs.runspec import TEXT_MODES, DPSynRAGSpec, RunSpec

TASK = "Answer patients' questions about which disease matches their symptoms."
REAL_NOTE = "{name} came in with {disease} and was treated with rest and plenty of water for two weeks at home."


# The shared tiny sizes (tests/helpers.py) with R = 4 and T = 5, room for the writer's prompt, and a document form.
REALISED_SIZES = {**TINY_SIZES, "R": 4, "T": 5, "max_prompt_tokens": 96, "topic_words": "frequent",
                  "hist_fraction": 0.4, "cluster_keywords_fraction": 0.3, "realisation_tokens": 12,
                  "document_form": "clinical_note"}


def realised_spec(tmp_path: Path, **dp) -> RunSpec:
    """``tiny_spec`` over notes with a longer sentence, the realisation sizes and the task."""
    spec = tiny_spec(tmp_path, write_notes(tmp_path, note=REAL_NOTE), REALISED_SIZES, release=None, **dp)
    spec.task = TASK
    return spec


def synthetic_texts(path: Path) -> list[str]:
    from core.run.pipeline import read_synthetic

    return [row["text"] for row in read_synthetic(path)]


def charged_stages() -> dict[str, float]:
    entries = [e for e in Ledger().entries() if e.get("kind", "charge") == "charge"]
    return {e["stage"]: e["rho"] for e in entries}


# -- the prompt, the clean-up and the guarantee --------------------------------------------------------


def test_the_prompt_holds_only_the_released_words_the_example_and_the_task():
    example = ex.shipped_example("clinical_note")
    topic = rt.Topic("tusfosemia", ("insomnia", "skin rash"))
    prompt = wp.realisation_prompt(topic, TASK, example)
    assert example in prompt and TASK in prompt and "tusfosemia, insomnia, skin rash" in prompt
    # Everything else is the shipped template's own words.
    rest = prompt.replace(example, " ").replace(TASK, " ").replace("tusfosemia, insomnia, skin rash", " ")
    template_words = set(re.findall(r"\w+", prompts.render("realise", task="", example="", words="")))
    assert set(re.findall(r"\w+", rest)) <= template_words
    assert wp.realisation_prompt(topic, TASK, "") == prompts.render("realise_plain", task=TASK,
                                                               words="tusfosemia, insomnia, skin rash")


def test_a_sentence_that_is_only_a_label_of_the_form_goes():
    """Round 4, session 17: the wizard's defaults on a 200-note file wrote "… Examination: pain in leg muscles and
    joint. Impression. Plan: …"; a label of the prompt's form alone says nothing. A label with its words stays, and so
    does a one-word sentence that is no label of the form."""
    prompt = wp.realisation_prompt(rt.Topic("tusfosemia"), TASK, ex.shipped_example("clinical_note"))
    assert "Impression:" in prompt and "Plan:" in prompt
    raw = "Consultation note. Examination: pain in the legs. Impression. Plan: rest. Plan: Review in two weeks. Thanks."
    assert dr.clean_draft(raw, prompt) == ("Consultation note. Examination: pain in the legs. Plan: rest. "
                                           "Plan: Review in two weeks. Thanks.")
    assert dr.clean_draft("Consultation note. Impression: tusfosemia. Plan:", prompt) == (
        "Consultation note. Impression: tusfosemia.")


def test_clean_draft_removes_meta_text_urls_echoes_and_repeated_lines():
    prompt = wp.realisation_prompt(rt.Topic("tusfosemia"), TASK, ex.shipped_example("clinical_note"))
    raw = ("Here is the document you asked for:\nDocument: Consultation note. Mr [name], 54, reports insomnia.\n"
           "See https://www.example.com/notes for more.\nImpression: tusfosemia.\nImpression: tusfosemia.\n"
           "The document must contain these words exactly as written: tusfosemia.\nPlan: rest, review in")
    clean = dr.clean_draft(raw, prompt)
    assert clean == "Consultation note. Mr, 54, reports insomnia. Impression: tusfosemia."
    for bad in ("Here is", "Document:", "http", "www", "exactly as written", "[name]", "review in"):
        assert bad not in clean
    from core.evaluation.quality import junk_reasons

    assert junk_reasons(raw) and not junk_reasons(clean)
    # what the small writer says about its own task (round 4, session 11: tweets, films), not the topic
    talk = ("Help. A list of related words: Help, support, community. Volunteers ran the clinic on Sunday. The sentence "
            "is about a medical condition. A: This is a short summary of the movie. The article discusses the health "
            "of the world. This is a story about the president.")
    assert dr.clean_draft(talk, prompt) == "Help. Volunteers ran the clinic on Sunday."
    # round 4, session 12: the writer on 600 health tweets, talking about the article it writes; a speech's
    # "Article 50" and "the post office" are no such talk
    talk = ("This news article talks about how ebola spreads. In this context, the drug is a product. The author highlights "
            "that people forget. Summary: no mention of ebola today. The article delves into the details. The House "
            "voted to trigger Article 50 before the post office closed.")
    assert dr.clean_draft(talk, prompt) == "The House voted to trigger Article 50 before the post office closed."
    # round 4, session 16: news and film profiles at ε = 10; a real summary of a tax filing stays
    talk = ("The context is a report about a road in Beirut. The section describes how a highway will be built. The word "
            "\"Russia\" was added to enhance clarity. A summary of the oil spill in the Caribbean. This is a professional "
            "rating with the addition of D. S. A subject of Turkish culture and heritage. The council released a summary of "
            "one year's filing. The sentence is a detail.")
    assert dr.clean_draft(talk, prompt) == "The council released a summary of one year's filing."


def test_an_unfilled_slot_leaves_no_dangling_article():
    # round 4, session 12, 800 food reviews: "The is great for her, but the, which …"
    draft = "Review of a [product], 2 stars. The [feature] is great for her, but the [other feature] [complaint]. Yes."
    assert dr.clean_draft(draft) == "Review, 2 stars. It is great for her, but. Yes."
    assert dr.clean_draft("The user provided two sentences about tea. The example given above shows it. Tea is good. "
                          "This review contains several ideas. The customer mentioned salt. I am a helpful AI assistant named SmolLM, "
                          "trained by Hugging Face. This is another example of the same disease. Translate this to English: tea. "
                          "A sample of the above-mentioned documents is a list. The health section of the https://x.org/a is "
                          "open. This is a medical case report about patient A.") == "Tea is good."


def test_a_headline_ends_before_the_text_and_a_headline_left_at_the_lead_word_goes():
    assert dr.clean_draft("Old bridge to close for repairs\nRiverton, Tuesday. The council said so.") == (
        "Old bridge to close for repairs. Riverton, Tuesday. The council said so.")
    assert dr.clean_draft("Ebola.\nThe outbreak of ebola has spread to two towns.") == "The outbreak of ebola has spread to two towns."
    assert dr.clean_draft("Ebola\nThe outbreak has spread to two towns.") == "Ebola: The outbreak has spread to two towns."
    assert dr.clean_draft("Consultation note. K. M., 47, reports pain.") == "Consultation note. K. M., 47, reports pain."
    # the lead's word left as a sentence of its own on the text's line
    assert dr.clean_draft("Trump. President Trump said so on Monday.", headline="Trump") == "President Trump said so on Monday."
    assert dr.clean_draft("China. The city of Shanghai will build a road.", headline="China") == (
        "China: The city of Shanghai will build a road.")
    assert dr.clean_draft("This is a related word: Tass, a Russian agency. Subtitle: news.") == ""


def test_every_released_word_is_guaranteed_by_the_final_line():
    words = ("velvet throat", "hoarse voice", "dry")
    assert pd.missing_words("A velvet throat with a hoarse voice.", words) == ["dry"]
    assert pd.missing_words("dryness", ("dry",)) == ["dry"], "a word must appear on word boundaries"
    text, added = dr.guarantee_words("A velvet throat with a hoarse voice.", words)
    assert added and text.endswith("Key terms: dry.") and not pd.missing_words(text, words)
    assert dr.guarantee_words("Velvet Throat, hoarse voice and a dry cough.", words) == (
        "Velvet Throat, hoarse voice and a dry cough.", False)
    assert dr.guarantee_words("", ("fever",)) == ("Key terms: fever.", True)


def test_realise_on_the_tiny_model_puts_every_released_word_in_every_document():
    from core.models.registry import load_language_model
    from core.common.progress import NULL_REPORTER

    llm = load_language_model(TINY)
    topics = [rt.Topic("tusfosemia", ("insomnia", "skin rash")), rt.Topic("fever"), rt.Topic("back stiffness", ("rash",))]
    out = rl.realise(topics, TASK, ex.shipped_example("clinical_note"), llm, NULL_REPORTER, rl.WriterSettings(max_new_tokens=10))
    assert len(out) == len(topics)
    for topic, doc in zip(topics, out):
        assert pd.missing_words(doc.text, topic.words) == []
        assert 1 <= doc.attempts <= rl.ATTEMPTS


def test_public_greedy_never_repeats_a_trigram():
    assert pd._banned_by_ngrams([1, 2, 3, 1, 2], 3) == {3}
    assert pd._banned_by_ngrams([1, 2], 3) == set()
    from core.models.registry import load_language_model

    llm = load_language_model(TINY)
    [text] = rl.public_greedy(llm, ["Say something long."], [""], 40)
    ids = llm.chat.tokenizer.encode(text, add_special_tokens=False)
    grams = [tuple(ids[i : i + 3]) for i in range(len(ids) - 2)]
    assert len(grams) - len(set(grams)) <= 2  # decode/encode may merge tokens at the seams, not loops


def test_example_lead_is_the_words_before_the_first_placeholder():
    assert wp.example_lead(ex.shipped_example("clinical_note")) == "Consultation note."
    assert wp.example_lead("[name] wrote this") == ""
    assert wp.example_lead("") == ""


# -- the example is checked against the corpus -------------------------------------------------------


def test_the_shipped_examples_are_not_documents_of_the_demo_corpora():
    from core.corpus import load_corpus

    clinic = load_corpus(resources_dir() / "demo" / "clinic" / "notes.csv", text_column="note", id_column="id")
    for form in ex.FORMS:
        assert ec.example_problem(ex.shipped_example(form), clinic.units) == ""


def test_a_pasted_real_document_is_refused_before_any_charge(tmp_path):
    spec = realised_spec(tmp_path, text="realised")
    spec.document.public_example = REAL_NOTE.format(name=CANARY, disease="rash")
    with pytest.raises(PrivetError) as refused:
        plan(spec)
    with pytest.raises(PrivetError) as refused_run:
        run_pipeline(spec)
    for exc in (refused.value, refused_run.value):
        text = exc.user_message()
        assert "real document" in text and "Nothing was charged" in text
        assert CANARY not in text and "plenty of water" not in text
    assert charged_stages() == {}
    # A shortened or lightly edited copy is refused too; an invented example passes.
    edited = "Mr X came in with rash and was treated with rest and plenty of water for two weeks."
    from core.corpus import load_corpus

    units = load_corpus(spec.data.path, text_column="note", id_column="id").units
    assert ec.example_problem(edited, units)
    assert ec.example_problem("Visit note. [name] has [complaint]; advised [treatment].", units) == ""
    # Without realisation the typed example is still recorded in the certificate's parameters: still refused.
    spec.dp_synrag.text = "private"
    with pytest.raises(PrivetError, match="real document"):
        plan(spec)
    spec.document.public_example = ""
    plan(spec)


# -- accounting: charges = plan for every variant -------------------------------------------------------


@pytest.mark.parametrize("text", TEXT_MODES)
def test_charges_equal_the_plan_for_every_variant(tmp_path, text, privet_home):
    spec = realised_spec(tmp_path, text=text)
    result = run_pipeline(spec)
    planned = plan_dp_synrag(spec.dp_synrag, spec.privacy.epsilon, result.record.delta, document=spec.document).per_stage()
    charged = charged_stages()
    assert set(charged) == set(planned)
    for stage, rho in planned.items():
        assert charged[stage] == pytest.approx(rho, rel=1e-9)
    assert math.isclose(sum(charged.values()), result.record.rho_total, rel_tol=1e-9)
    assert (STAGE_TOKENS in charged) == (text in ("private", "realised+private"))
    # The certificate's record says which variant ran, and the example when one was used.
    notes = " ".join(result.record.scope_notes)
    assert f'text = "{text}"' in notes
    assert (ex.shipped_example("clinical_note") in notes) == (text.startswith("realised"))
    assert result.record.method_parameters["text"] == text
    # Nothing private in any document or note; realised documents hold every released word.
    written = result.synthetic_path.read_text(encoding="utf-8")
    assert CANARY not in written and CANARY not in notes
    if text == "topic_line":
        assert all(t.endswith(":") for t in synthetic_texts(result.synthetic_path))


def test_without_a_token_stage_its_share_moves_to_topics_and_co_keywords():
    shares = dict(hist_fraction=0.4, cluster_keywords_fraction=0.4, discover_phrases=False, discover_forms=False,
                  size_bound=1000, length="form")
    on = plan_dp_synrag(DPSynRAGSpec(**shares, text="private"), 10.0, 1e-6)
    off = plan_dp_synrag(DPSynRAGSpec(**shares, text="realised"), 10.0, 1e-6)
    assert STAGE_TOKENS in on.per_stage() and STAGE_TOKENS not in off.per_stage()
    assert off.per_stage()[STAGE_HISTOGRAM] == pytest.approx(0.5 * off.rho_total)
    assert off.per_stage()[STAGE_CLUSTER_KEYWORDS] == pytest.approx(0.5 * off.rho_total)
    assert off.sigma_h < on.sigma_h and off.sigma_c < on.sigma_c
    assert off.accountant().total_rho() == pytest.approx(off.rho_total)
    assert not off.token_stage and off.c_over_tau == 0.0
    refined = plan_dp_synrag(DPSynRAGSpec(refine=True, text="topic_line"), 4.0, 1e-6)
    assert sum(refined.per_stage().values()) == pytest.approx(refined.rho_total)
    assert text_stage_notes(DPSynRAGSpec(text="realised")) and not text_stage_notes(DPSynRAGSpec(text="private"))


def test_plan_says_when_the_token_stage_is_off(tmp_path):
    spec = realised_spec(tmp_path, text="topic_line")
    summary = plan(spec)
    assert text_stage_notes(spec.dp_synrag) and not any("No token stage" in w for w in summary.warnings)  # a note
    assert "c_over_tau" not in summary.derived
    assert not any(w.startswith("Weak consensus") for w in summary.warnings)


# -- run specs ----------------------------------------------------------------------------------------


def test_old_specs_still_load_and_new_options_are_checked():
    assert RunSpec.from_dict({}).dp_synrag.text == DPSynRAGSpec().text
    assert RunSpec.from_dict({"dp_synrag": {"public_anchor": True}}).dp_synrag.public_prompt == "empty"
    demo = RunSpec.load(resources_dir() / "demo" / "demo_run.toml")
    assert demo.dp_synrag.text in TEXT_MODES
    spec = RunSpec.from_dict({"dp_synrag": {"text": "realised", "document_form": "review",
                                            "public_example": "Review. [product] is [opinion]."}})
    assert spec.dp_synrag.realisation and not spec.dp_synrag.token_stage
    with pytest.raises(PrivetError, match="text"):
        RunSpec.from_dict({"dp_synrag": {"text": "novel"}})
    with pytest.raises(PrivetError, match="document_form"):
        RunSpec.from_dict({"dp_synrag": {"document_form": "poem"}})
    # realised+private needs no public_prompt: its public row is the draft
    RunSpec.from_dict({"dp_synrag": {"text": "realised+private", "public_prompt": "none"}})


def test_generation_notes_name_the_variant_and_quote_the_example():
    notes = " ".join(generation_notes(DPSynRAGSpec(text="realised"), "Visit note. [name] has [complaint]."))
    assert 'text = "realised"' in notes and '"Visit note. [name] has [complaint]."' in notes
    assert "DClip" not in notes  # no token stage, no token notes


def test_no_private_text_reaches_the_writer_prompt_or_its_output(tmp_path, monkeypatch):
    prompts: list[str] = []
    outputs: list[str] = []
    real = rl.public_greedy

    def spy(llm, messages, answer_starts, max_new_tokens, **kw):
        prompts.extend(messages)
        outputs.extend(real(llm, messages, answer_starts, max_new_tokens, **kw))
        return outputs[-len(messages):]

    monkeypatch.setattr(rl, "public_greedy", spy)
    spec = realised_spec(tmp_path, text="realised")
    result = run_pipeline(spec)
    assert prompts, "the writer ran"
    example = ex.shipped_example("clinical_note")
    for prompt in prompts:
        assert CANARY not in prompt and "plenty of water" not in prompt and "Patient" not in prompt
        assert example in prompt and TASK in prompt
    for answer in outputs:
        assert CANARY not in answer
    assert CANARY not in result.synthetic_path.read_text(encoding="utf-8")
