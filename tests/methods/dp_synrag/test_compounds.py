"""Two-word symptoms written whole, a note's symptoms drawn among its topic's, and the clinical note's topics
(docs/method.md §2.6b)."""

from __future__ import annotations

import random
from types import SimpleNamespace

import torch

from core.methods.dp_synrag.write import compounds
from core.methods.dp_synrag.write.roles import CONDITION, DRUG, SYMPTOM
from core.methods.dp_synrag.write.slot_fillers import first_symptoms, role_filler, some_symptoms
from core.models.registry import packaged_tokenizer


class _Continuing:
    """A stand-in public model: after a text whose last word is ``a`` it writes b with the logit ``after[(a, b)]``,
    every other token 0 (so after the bare lead no symptom is likelier than another)."""

    def __init__(self, after: dict[tuple[str, str], float]) -> None:
        self.tokenizer = packaged_tokenizer()
        self.chat = SimpleNamespace(tokenizer=self.tokenizer)
        self.device = "cpu"
        self.after, self.asked = after, []

    def start_logits(self, prompts, shared_prefix=0):
        model, ids = self, [list(p) for p in prompts]
        self.asked.extend(self.tokenizer.decode(p) for p in prompts)

        def logits():
            rows = torch.zeros(len(ids), len(model.tokenizer))
            for r, row in enumerate(ids):
                last = model.tokenizer.decode(row).split()[-1]
                for (a, b), value in model.after.items():
                    if a == last:
                        rows[r, model.tokenizer.encode(" " + b, add_special_tokens=False)[0]] = value
            return rows

        def append(tokens):
            for row, token in zip(ids, tokens.tolist()):
                row.append(token)

        return SimpleNamespace(logits=logits, append=append)


def test_a_topics_symptoms_of_two_words_are_joined_by_the_shared_scorer_in_a_clinical_run():
    """The output check's "nails, brittle and itchy": two released words the public model writes as one phrase are
    listed as one symptom, in its order, a word in one phrase at most, the likelier first (``lead_phrases.py``, the
    shipped form's scorer, after the lead "Symptoms:"); a run with no word typed as a symptom is left as it is."""
    model = _Continuing({("brittle", "nails"): 12.0, ("itchy", "nails"): 10.0, ("zimtroszole", "nails"): 12.0})
    topics = [("stosstouxemia", ("zimtroszole", "itchy", "nails", "brittle")), ("pelnamitis", ("brittle", "yellowish"))]
    roles = {"stosstouxemia": CONDITION, "zimtroszole": DRUG, "itchy": SYMPTOM}
    assert compounds.compound_topics(model, topics, roles) == [
        ("stosstouxemia", ("zimtroszole", "itchy", "brittle nails")), ("pelnamitis", ("brittle", "yellowish"))]
    # a document that drew "brittle" without "nails" writes the phrase its topic's other documents join
    drew = [("stosstouxemia", ("brittle", "itchy")), ("stosstouxemia", ("nails", "brittle"))]
    assert compounds.compound_topics(model, drew, roles) == [
        ("stosstouxemia", ("brittle nails", "itchy")), ("stosstouxemia", ("brittle nails",))]
    assert all(text.startswith(compounds.HEAD) for text in model.asked)  # the public lead and released words only
    untyped = _Continuing({("brittle", "nails"): 12.0})
    assert compounds.compound_topics(untyped, topics, {"zimtroszole": DRUG}) == [
        (w, tuple(r)) for w, r in topics]  # no word typed as a symptom: no clinical list to write
    assert untyped.asked == []


def test_a_note_lists_three_to_five_of_its_topics_symptoms_in_a_drawn_order():
    symptoms = ["rash", "wheezing", "insomnia", "brittle nails", "sweats", "cramps"]
    pick = some_symptoms(random.Random(5))
    drawn = [pick(list(symptoms)) for _ in range(300)]
    assert all(3 <= len(d) <= 5 and len(set(d)) == len(d) and set(d) <= set(symptoms) for d in drawn)
    assert {len(d) for d in drawn} == {3, 4, 5}
    assert len({tuple(d) for d in drawn}) > 100  # not the same three every time
    assert some_symptoms(random.Random(1))(["rash", "cramps"]) in (["rash", "cramps"], ["cramps", "rash"])  # all of few
    assert first_symptoms(symptoms) == symptoms[:3]
    assert role_filler(SYMPTOM, ["tusfosemia", *symptoms], {}, "tusfosemia", "", pick).count(",") in (1, 2, 3)


def test_the_clinical_note_writes_no_document_whose_topic_names_no_condition():
    """The clinic evaluation at ε = 4 (shipped clinical note, no form released): topics of a symptom alone
    ("stiffness", "swelling") were written with the writer's own impression ("Impression: glaucoma", "soft tissue
    hernia"). In the clinical note, when a released word is typed as a condition, only topics holding one are written;
    another form (news about "cancer") or a run with no condition keeps every document; the count is said."""
    from core.methods.dp_synrag.shape.released_topics import Topic
    from core.methods.dp_synrag.write.text import named_topics
    from core.specs.document_forms import shipped_example
    from core.specs.runspec import DPSynRAGSpec

    events = []
    ctx = SimpleNamespace(llm=_Continuing({}), reporter=SimpleNamespace(emit=events.append))  # answers nothing
    topics = [Topic("stiffness"), Topic("drimkitopathy", ("stiffness", "sore")), Topic("wheezing", ("tusfosemia",)),
              Topic("lounthounosis"), Topic("swelling", ("facial",))]
    note = shipped_example("clinical_note")
    assert named_topics(topics, note, DPSynRAGSpec(), ctx) == [1, 2, 3]  # morphology types "-pathy", "-emia"
    assert [e.message for e in events] == ["2 of 5 documents not written: their topic names no condition"]
    assert named_topics(topics, shipped_example("news_article"), DPSynRAGSpec(), ctx) == [0, 1, 2, 3, 4]
    symptoms = [Topic("stiffness"), Topic("swelling", ("facial",))]
    assert named_topics(symptoms, note, DPSynRAGSpec(), ctx) == [0, 1]  # no word typed as a condition
