"""Structure discovery's third release (docs/method.md §2.0b): the short values a released skeleton's text slots hold,
released under DP, and the form writer writing them as they stand."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from core.corpus import Unit
from core.methods.dp_synrag.release.form_proposals import FormLists
from core.methods.dp_synrag.release.form_values import propose_values, short_value, slot_labels, split_value_item

from core.methods.dp_synrag.release.budget import plan_dp_synrag
from core.methods.dp_synrag.release.structure import ReleasedForms
from core.privacy.mechanisms import gaussian_sparse_histogram
from core.privacy.set_union import item_counts
from core.specs.dp_synrag import DPSynRAGSpec
from tests.helpers import statistical


@pytest.fixture(scope="module")
def lists():
    return FormLists.shipped()


OPENERS = dict.fromkeys({"Product", "Customer satisfied", "Status", "closed after"}, 100.0)


def _ticket(product: str, satisfied: str, issue: str) -> str:
    return f"Product: {product}. Customer satisfied: {satisfied}. Status: closed after 3 days. {issue}"


def test_a_unit_proposes_its_labelled_short_slot_values(lists):
    doc = _ticket("Ledgerly", "yes", "Sync stuck at ninety nine and the user called twice about it.")
    items = [split_value_item(i) for i in propose_values(Unit("u", doc), OPENERS, lists, 4)]
    assert ("product: _.", "Ledgerly") in items and ("customer satisfied: _.", "yes") in items
    assert not any("called" in v for _, v in items)  # a long filler is no value
    assert len(propose_values(Unit("u", doc), OPENERS, lists, 1)) == 1  # at most m_v
    assert propose_values(Unit("u", "Free text with no form at all, ever."), OPENERS, lists, 4) == []


def test_values_are_pooled_by_their_slots_label_across_skeletons(lists):
    one, other = "Product: [text]. Customer satisfied: [text].", "Ticket. Product: [text]. Agent [text] after [text]."
    assert slot_labels(one) == ["product: _.", "customer satisfied: _."]
    assert slot_labels(other) == ["product: _.", "agent _a", "after _."]
    assert slot_labels("[name] ([text], [number] years)") == [""]  # a bracket alone is no label
    assert slot_labels("Triage [number]:[number]: [name], [number][text]. CC [text].") == [
        "triage [number]:[number]: [name], [number] _.", "cc _."]  # a letter written onto a number ("49M")
    forms = ReleasedForms((one, other), (50.0, 50.0), 3, (("product: _.", "Ledgerly", 40.0),))
    assert forms.slot_values(other) == {0: [("Ledgerly", 40.0)]} == forms.slot_values(one)


def test_a_value_holds_no_digit_no_name_of_the_public_list_and_at_most_three_words(lists):
    assert short_value("  an expired   token ", lists) == "an expired token"
    assert short_value("version 4", lists) == ""
    assert short_value("Austin Weaver", lists) == ""
    assert short_value("one two three four", lists) == ""
    assert short_value("M", lists) == "M"


@statistical
def test_a_value_only_one_unit_wrote_is_never_released_in_10000_trials(lists):
    """The release at the default plan (ε = 10, δ = 1e-6): a planted value of one unit beside one 150 units wrote."""
    plan = plan_dp_synrag(DPSynRAGSpec(), 10.0, 1e-6)
    units = [Unit(f"u{i}", _ticket("Ledgerly", "yes", "")) for i in range(150)]
    units.append(Unit("canary", _ticket("Zorblax", "yes", "")))
    counts = item_counts([propose_values(u, OPENERS, lists, plan.m_v) for u in units], plan.m_v)
    assert max(counts.values()) == 151 and min(counts.values()) == 1  # one count per unit, at most m_v per unit
    rng = np.random.default_rng()
    planted = shared = 0
    for _ in range(10_000):
        released = {split_value_item(i)[1] for i in gaussian_sparse_histogram(counts, plan.sigma_v, plan.tau_v,
                                                                              plan.m_v, rng=rng).items}
        planted += "Zorblax" in released
        shared += "yes" in released
    assert planted == 0 and shared == 10_000


def _writer():
    from core.methods.dp_synrag.write.form_writer import FormWriter
    from core.models.registry import packaged_tokenizer
    from core.models.tiny import build_tiny_language_model

    return FormWriter(build_tiny_language_model(packaged_tokenizer()), torch.Generator().manual_seed(3),
                      random.Random(3))


def test_the_writer_writes_a_topics_released_value_or_a_closed_lists_value_and_leaves_an_open_slot_to_the_model():
    skeleton = "Product: [text]. Customer satisfied: [text]. Notes: [text]."
    forms = ReleasedForms((skeleton,), (100.0,), 3, (
        ("product: _.", "Ledgerly", 50.0), ("product: _.", "ShiftBoard", 45.0),
        ("customer satisfied: _.", "yes", 60.0), ("customer satisfied: _.", "no", 35.0),
        ("notes: _.", "see above", 5.0)))
    texts = _writer().write("Answer questions about tickets.", [skeleton] * 6,
                            [("shiftboard", ("rota",))] * 6, forms=forms)
    for text in texts:
        assert text.startswith("Product: ShiftBoard. Customer satisfied: ")  # the topic's own released value
        assert text.split("Customer satisfied: ")[1].split(".")[0] in ("yes", "no")  # a closed list: drawn
        assert "see above" not in text  # 5 of 100: an open slot, the writer's own words


def test_a_closed_lists_value_stating_a_fact_the_topic_does_not_hold_is_never_drawn():
    """A released value is a filler many units wrote; "asthma" in a document about another topic would state a
    condition no released word of that topic supports (the evaluation's grounding counts it)."""
    skeleton = "Remarks: [text]. Customer satisfied: [text]."
    forms = ReleasedForms((skeleton,), (100.0,), 2, (
        ("remarks: _.", "asthma", 50.0), ("remarks: _.", "none", 45.0),
        ("customer satisfied: _.", "yes", 60.0), ("customer satisfied: _.", "no", 35.0)))
    texts = _writer().write("Answer questions about tickets.", [skeleton] * 8, [("shiftboard", ("rota",))] * 8,
                            forms=forms)
    assert len(texts) == 8 and all(t.startswith("Remarks: none.") for t in texts), texts
