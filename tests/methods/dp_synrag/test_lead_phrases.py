"""The lead's released words joined into phrases by the public model (core/methods/dp_synrag/write/lead_phrases.py)."""

from __future__ import annotations

import pytest
import torch

from core.methods.dp_synrag.write import lead_phrases as lp
from core.methods.dp_synrag.write.lead_phrases import Join, JoinScorer, chosen_joins, joined, phrases_of
from core.methods.dp_synrag.write.roles import DRUG, SYMPTOM
from core.methods.dp_synrag.write.slots import form_slots, place

CLINIC_FORM = "Consultation note. [name], [age], reports [symptoms]. Impression: [condition]. Plan: [treatment]."
LEAD = "Consultation note. K. M., 47, reports"


@pytest.fixture(scope="module")
def tiny():
    from core.models.registry import packaged_tokenizer
    from core.models.tiny import build_tiny_language_model

    return build_tiny_language_model(packaged_tokenizer())


def _brute_force(llm, context: str, continuation: str) -> float:
    """log P(continuation | context), one prompt per continuation token (the definition)."""
    tok = llm.chat.tokenizer
    ctx, cont = tok.encode(context, add_special_tokens=False), tok.encode(continuation, add_special_tokens=False)
    total = 0.0
    for i, token in enumerate(cont):
        logits = llm.start_logits([ctx + cont[:i]]).logits()[0].float()
        total += torch.log_softmax(logits, -1)[token].item()
    return total


def test_continuation_scores_are_the_log_probability_of_each_continuation(tiny, monkeypatch):
    monkeypatch.setattr(lp, "SCORE_BATCH", 3)  # ragged rows across two batches
    contexts = [LEAD, f"{LEAD} metallic", f"{LEAD} shortness", "Notes", f"{LEAD} blisters"]
    continuations = [" taste", " taste", " of breath", " irregular heartbeat and", " on the palms"]
    got = lp.continuation_logprobs(tiny, contexts, continuations)
    for c, x, g in zip(contexts, continuations, got):
        assert g == pytest.approx(_brute_force(tiny, c, x), abs=1e-3)


def _join(a: str, b: str, gain: float, logp: float = -2.0, joiner: str = "") -> Join:
    return Join(a, joiner, b, gain, logp)


def test_pairs_are_joined_best_first_each_word_once_and_only_above_both_thresholds():
    candidates = [
        _join("weight", "gain", 11.5), _join("weight", "loss", 10.1), _join("hair", "loss", 9.9),
        _join("fever", "rash", lp.JOIN_GAIN - 0.1), _join("cough", "fever", 8.0, logp=lp.JOIN_LOGP - 0.1),
    ]
    taken = chosen_joins(candidates)
    assert [j.phrase for j in taken] == ["weight gain", "hair loss"]
    assert joined(["hair", "cough", "weight", "loss", "gain", "fever"], {w: j.phrase for j in taken for w in (j.first, j.second)}) == [
        "hair loss", "cough", "weight gain", "fever"]
    assert Join("blisters", " on the", "palms", 6.0, -8.0).phrase == "blisters on the palms"
    # "sweating rash": as likely after "sweating," (the list's next item) as after "sweating": not one phrase
    assert chosen_joins([Join("sweating", "", "rash", 7.0, -6.0, apart=-6.5)]) == []
    assert [j.phrase for j in chosen_joins([Join("brittle", "", "nails", 7.0, -4.0, apart=-9.0)])] == ["brittle nails"]


class _Phrasebook:
    """A stand-in scorer: known phrases have high probability after their first word."""

    def __init__(self, known: dict[tuple[str, str, str], float]) -> None:
        self.known, self.asked = known, []

    def __call__(self, llm, contexts, continuations):
        self.asked.extend(zip(contexts, continuations))
        out = []
        for c, x in zip(contexts, continuations):
            words = c.split(" ")
            joiner, _, second = x.rpartition(" ")
            out.append(self.known.get((words[-1], joiner, second), -8.0) if c != LEAD else -8.0)
        return out


def test_the_scorer_reads_the_lead_and_the_released_words_only_and_scores_each_pair_once(monkeypatch):
    book = _Phrasebook({("metallic", "", "taste"): -2.0, ("blisters", " on the", "palms"): -2.5})
    monkeypatch.setattr(lp, "continuation_logprobs", book)
    scorer = JoinScorer(llm=None, lead=LEAD)  # type: ignore[arg-type]
    words = ["palms", "metallic", "blisters", "taste"]
    assert phrases_of(scorer, words) == {"metallic": "metallic taste", "taste": "metallic taste",
                                         "blisters": "blisters on the palms", "palms": "blisters on the palms"}
    texts = {t for pair in book.asked for t in pair}
    allowed = {*words, *" ".join(lp.JOINERS).split()}
    assert all(set(t.replace(LEAD, " ").replace(",", " ").split()) <= allowed for t in texts), "only the lead, words, joiners"
    n = len(book.asked)
    assert n == len(words) + 2 * len(words) * (len(words) - 1) * len(lp.JOINERS)  # after "a" and after "a,"
    phrases_of(scorer, words[:3])
    assert len(book.asked) == n, "a pair already scored is not asked again"
    assert phrases_of(scorer, ["fever"]) == {}


def test_the_lead_writes_joined_phrases_and_keeps_every_released_word():
    slots = form_slots(CLINIC_FORM)
    words = ["palms", "metallic", "blisters", "taste"]
    roles = {w: SYMPTOM for w in words}
    phrases = {"metallic": "metallic taste", "taste": "metallic taste", "blisters": "blisters on the palms",
               "palms": "blisters on the palms"}
    placed = place(words, roles, slots, LEAD, joiner=lambda lead, ws: joined(ws, phrases))
    assert placed.lead == "blisters on the palms and metallic taste"
    assert placed.lead_words == tuple(words)
    turned = place(words, roles, slots, LEAD, turn=1, joiner=lambda lead, ws: joined(ws, phrases))
    assert turned.lead == "metallic taste and blisters on the palms"
    assert place(words, roles, slots, LEAD).lead == "palms, metallic, blisters and taste"
    assert not placed.lead_ends_bare  # the lead's slot has its words
    assert place(["remkatstatin"], {"remkatstatin": DRUG}, slots, LEAD).lead_ends_bare  # "… reports" and nothing after it


def test_the_two_words_of_a_phrase_are_written_together_when_a_document_drew_one(monkeypatch):
    from core.methods.dp_synrag.shape.released_topics import Topic
    from core.methods.dp_synrag.write.realisation import topic_placements
    from core.methods.dp_synrag.write.roles import CONDITION, RoleSources

    book = _Phrasebook({("metallic", "", "taste"): -2.0, ("blisters", " on the", "palms"): -2.0})
    monkeypatch.setattr(lp, "continuation_logprobs", lambda llm, c, x: book(llm, [LEAD if "reports" in s and
                        s.rstrip().endswith("reports") else s for s in c], x))
    typed = {"gumkleimalgia": CONDITION, "other": CONDITION,
             **{w: SYMPTOM for w in ("metallic", "taste", "blisters", "palms", "fever")}}
    sources = RoleSources(typed, frozenset())
    docs = [Topic("gumkleimalgia", ("metallic", "blisters")), Topic("gumkleimalgia", ("taste", "palms")),
            Topic("other", ("metallic", "fever"))]
    placed = topic_placements(docs, CLINIC_FORM, sources, llm=object())  # type: ignore[arg-type]
    assert placed[0].lead == "metallic taste and blisters on the palms"  # "taste" and "palms" from the topic's pool
    assert placed[1].lead in ("metallic taste and blisters on the palms", "blisters on the palms and metallic taste")
    assert placed[2].lead_words == ("metallic", "fever") and "taste" not in placed[2].lead  # another topic's pool
    assert all(p.phrases == (("Impression: gumkleimalgia", ("gumkleimalgia",)),) for p in placed[:2])
