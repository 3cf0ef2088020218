"""Structure discovery (SPEC §7, docs/method.md §2.0b, issue 55): the corpus's own forms released under DP."""

from __future__ import annotations

import csv
import math
import re

import numpy as np
import pytest

from core.corpus import Unit
from core.methods.dp_synrag.algorithm import not_topics
from core.methods.dp_synrag.release.budget import plan_dp_synrag
from core.methods.dp_synrag.release.structure import ReleasedForms, followable, follows_forms, release_forms
from core.methods.dp_synrag.release.form_proposals import (
    SLOT,
    FormLists,
    propose_skeletons,
    skeleton_of,
)
from core.methods.dp_synrag.release.opener_proposals import propose_openers
from core.common.paths import resources_dir
from core.privacy.conversion import approx_rho_to_eps
from core.privacy.mechanisms import gaussian_sparse_histogram
from core.privacy.planner import STAGE_FORM_OPENERS, STAGE_FORM_SKELETONS, STAGE_FORM_VALUES
from core.specs.runspec import DocumentSpec, DPSynRAGSpec
from tests.helpers import statistical

NOTES = resources_dir() / "demo" / "clinic" / "notes.csv"


@pytest.fixture(scope="module")
def lists() -> FormLists:
    return FormLists.shipped()


@pytest.fixture(scope="module")
def demo_units() -> list[Unit]:
    with open(NOTES, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return [Unit(uid=r["id"], text=r["note"]) for r in rows]


NOTE = ("Seen today: Austin Weaver, 89. Presenting symptoms were insomnia, skin rash and excessive sweating. The "
        "findings are consistent with tusfosemia; I prescribed tregedcillin 100 mg once daily for 6 weeks.")


def test_openers_stop_at_names_numbers_and_words_no_english_list_holds(lists):
    openers = propose_openers(Unit("a", NOTE), lists, 64)
    assert "Seen today" in openers and "Presenting symptoms were insomnia" in openers
    assert "The findings are consistent with" in openers and "I prescribed" in openers
    joined = " | ".join(openers)
    for filler in ("Austin", "Weaver", "89", "100", "tusfosemia", "tregedcillin"):
        assert filler not in joined
    assert len(propose_openers(Unit("a", NOTE), lists, 5)) == 5  # at most m_o, clause starts first


def test_a_forms_whole_wording_comes_before_the_prefixes_of_its_fillers(lists):
    """The cap of m_o openers per unit keeps each clause's whole wording and the longest closer before a name, number,
    month or rare word ("and went home on", "the family doctor within", "confirmed") before the shorter prefixes."""
    note = ("Jon Barry (42, male) was admitted on March 3, 2024 with dry mouth and cold hands and went home on March 9, "
            "2024. A skin biopsy confirmed pelthiremia. He leaves hospital on geiklorzole 5 mg every evening for 2 weeks "
            "and should see the family doctor within 4 weeks.")
    everything = propose_openers(Unit("a", note), lists, 200)
    capped = propose_openers(Unit("a", note), lists, 12)
    assert {"and went home on", "the family doctor within", "A skin biopsy confirmed"} <= set(capped)
    assert len(everything) > 12 and "confirmed" in everything


def test_a_clause_that_is_one_wording_proposes_it_less_its_first_word_before_its_beginnings(lists):
    """The output check's "He/She leaves hospital on [drug]": the whole wording splits by its pronoun (37 and 45 units),
    and the part both share, "leaves hospital on", came 37th of a unit's 44 proposals, so m_o = 32 cut it everywhere.
    Such a clause (one wording from its start to a slot) varies at its first word: its part less that word comes right
    after the whole wordings, and its beginnings ("He", "He leaves") last."""
    note = ("Jon Barry (42, male) was admitted on March 3, 2024 with dry mouth and cold hands and went home on March 9, "
            "2024. A skin biopsy confirmed pelthiremia. He leaves hospital on geiklorzole 5 mg every evening for 2 weeks "
            "and should see the family doctor within 4 weeks.")
    everything = propose_openers(Unit("a", note), lists, 200)
    wholes = everything.index("the family doctor within")  # the last whole wording of the note
    assert everything.index("He leaves hospital on") < wholes < everything.index("leaves hospital on") <= wholes + 3
    assert everything.index("leaves hospital on") < everything.index("He") < everything.index("He leaves")
    assert everything.index("He leaves") > everything.index("doctor within")  # after the other wordings' parts
    assert everything.index("and went home on") < everything.index("went home on")  # not a clause's start: as before


def test_a_released_closer_before_a_rare_word_splits_the_text_slot(lists):
    released = dict.fromkeys({"The", "confirmed", "He leaves hospital on"}, 100.0)
    assert skeleton_of("The skin biopsy confirmed pelthiremia. He leaves hospital on geiklorzole.", released, lists) == (
        "The [text] confirmed [text]. He leaves hospital on [text].")


def test_a_or_an_belongs_to_the_filler_so_both_notes_share_one_skeleton(lists):
    released = dict.fromkeys({"A", "An", "a", "an", "We found", "We found a", "We found an", "Cause"}, 100.0)
    one = skeleton_of("Cause: a stale cache. We found a broken link.", released, lists)
    other = skeleton_of("Cause: an expired token. We found an old webhook.", released, lists)
    assert one == other == "Cause: [text]. We found [text]."
    assert not any(o.split()[-1] in ("a", "an") for o in propose_openers(Unit("u", "We found a broken link."), lists, 32))
    # before a number the article is the form's: "a 70-year-old" (the writer draws the number)
    assert "came in, a" in propose_openers(Unit("u", "Jon came in, a 70-year-old man."), lists, 32) or \
        "a" in propose_openers(Unit("u", "Jon came in, a 70-year-old man."), lists, 32)


def test_a_name_the_public_list_lacks_is_a_name_beside_a_surname_or_a_second_unknown_word(lists):
    released = dict.fromkeys({"called on", "Patient", "Customer"}, 100.0)
    for who in ("Nils Dunn", "Umar Horvat", "Dmitri Ekberg", "Austin Weaver"):
        assert skeleton_of(f"{who} called on 3 May 2025.", released, lists) == "[name] called on [number] [month] [number]."
    assert skeleton_of("Customer: Nils Dunn.", released, lists) == "Customer: [name]."
    # a title before a whole name stays the form's wording
    assert skeleton_of("Patient Austin Weaver called on 3 May 2025.", released, lists).startswith("Patient [name] called")


def test_a_labels_one_word_value_and_a_fillers_own_number_or_stop_word_stay_in_the_slot(lists):
    released = dict.fromkeys({"Customer satisfied", "yes", "no", "Resolution", "the"}, 100.0)
    yes = skeleton_of("Customer satisfied: yes. Resolution: updated the pay rule to version 4.", released, lists)
    no = skeleton_of("Customer satisfied: no. Resolution: restarted the spooler.", released, lists)
    assert yes == no == "Customer satisfied: [text]. Resolution: [text]."


def test_a_released_wording_that_opens_a_slot_after_a_comma_ends_the_text_slot_but_a_list_goes_on(lists):
    released = dict.fromkeys({"Working diagnosis of", "confirmed by", "Complains of", "skin rash and"}, 100.0)
    note = "Complains of insomnia, skin rash and excessive sweating. Working diagnosis of stoumdrirism, confirmed by a skin biopsy."
    assert skeleton_of(note, released, lists) == "Complains of [text]. Working diagnosis of [text], confirmed by [text]."


def test_a_skeleton_keeps_released_openers_and_slots_the_rest(lists):
    released = dict.fromkeys({"Seen today", "Presenting symptoms were", "The findings are consistent with",
                              "I prescribed", "mg once", "mg", "weeks"}, 100.0)
    skeleton = skeleton_of(NOTE, released, lists)
    assert skeleton == ("Seen today: [name], [number]. Presenting symptoms were [text]. The findings are consistent "
                        "with [text]; I prescribed [text] [number] mg once [text] [number] weeks.")


def test_a_skeleton_holds_no_filler_of_its_unit(lists, demo_units):
    """Canaries: a name, a number and a rare phrase planted in a structural line never reach a skeleton, even when
    every opener the unit proposes were released."""
    planted = "Seen today: Zqxvortimer Blandquist, 4471. Presenting symptoms were glorbic fennimal. Plan: review."
    unit = Unit("x", planted)
    openers = dict.fromkeys(propose_openers(unit, lists, 64), 100.0)
    for skeleton in propose_skeletons(unit, openers, lists, 4):
        assert not re.search(r"zqxvortimer|blandquist|4471|glorbic|fennimal", skeleton, re.IGNORECASE)
        assert not re.search(r"\d", SLOT.sub("", skeleton))


def test_a_branching_into_fillers_stays_in_the_slot(lists):
    """'mg' goes on as 'mg once', 'mg twice', 'mg every' (each unit one of them): the frequency stays in the slot."""
    note = "Plan: start drug 50 mg twice daily for 6 weeks."
    released = {"Plan": 100.0, "Plan: start": 100.0, "start": 100.0, "mg": 90.0, "mg once": 30.0, "mg twice": 30.0,
                "mg every": 30.0, "for": 90.0, "daily for": 30.0, "morning for": 30.0, "day for": 30.0, "weeks": 90.0}
    assert skeleton_of(note, released, lists) == "Plan: start [text] [number] mg [text] for [number] weeks."
    co_occurring = {**released, "mg once": 90.0, "mg twice": 90.0, "mg every": 90.0}  # each unit writes all three
    assert "mg twice" in skeleton_of(note, co_occurring, lists)


def test_the_demo_clinics_templates_become_few_shared_skeletons_in_their_own_wording(demo_units, lists):
    """With the openers the demo's notes share (m_o = 32, those at least 47 notes propose: τ_o at ε = 10), its
    templates give a handful of skeletons held by most notes, and most of those skeletons, their slots filled with
    anything, are in one of the demo's own templates: a form's whole wording ("Working diagnosis of", "and return
    for follow-up in", "supported a diagnosis of") is proposed before the prefixes of its fillers."""
    from core.evaluation.own_form import TemplateMatcher, load_templates

    counts: dict[str, int] = {}
    for unit in demo_units:
        for o in propose_openers(unit, lists, 32):
            counts[o] = counts.get(o, 0) + 1
    openers = {o: float(c) for o, c in counts.items() if c >= 47}
    skeletons: dict[str, int] = {}
    for unit in demo_units:
        for s in propose_skeletons(unit, openers, lists, 2):
            skeletons[s] = skeletons.get(s, 0) + 1
    top = sorted(skeletons.items(), key=lambda item: -item[1])[:10]
    held = sum(n for _, n in top)
    assert held >= 0.7 * len(demo_units)  # most notes share one of ten skeletons (fillers stay in slots)
    templates = TemplateMatcher(load_templates(NOTES.parent / "templates.json"))
    fill = {"name": "Ann Lee", "number": "12", "month": "May", "text": "fever"}
    in_template = sum(n for s, n in top if templates.which(SLOT.sub(lambda m: fill[m.group(1)], s)) is not None)
    assert in_template >= 0.7 * held  # round 5 session 1's shortest-first proposals: 230 of 550 (0.42); now 368 of 461
    assert not any(re.search(r"\d", SLOT.sub("", s)) for s in skeletons)


# -- the mechanism ---------------------------------------------------------------------------------------------------


def test_plan_has_the_three_releases_with_their_rho_and_delta_and_converts_at_what_is_left():
    plan = plan_dp_synrag(DPSynRAGSpec(), 10.0, 1e-6)
    stages = plan.per_stage()
    assert plan.discovers_forms and plan.m_v > 0
    assert stages[STAGE_FORM_OPENERS] == pytest.approx(plan.m_o / (2 * plan.sigma_o**2))
    assert stages[STAGE_FORM_SKELETONS] == pytest.approx(plan.m_s / (2 * plan.sigma_s**2))
    assert stages[STAGE_FORM_VALUES] == pytest.approx(plan.m_v / (2 * plan.sigma_v**2))
    assert plan.rho_forms == pytest.approx(sum(stages[s] for s in (STAGE_FORM_OPENERS, STAGE_FORM_SKELETONS,
                                                                    STAGE_FORM_VALUES)))
    assert plan.delta_openers > 0 and plan.delta_skeletons > 0 and plan.delta_values > 0
    assert plan.delta_conversion == pytest.approx(1e-6 - plan.delta_phrases - plan.delta_openers - plan.delta_skeletons
                                                  - plan.delta_values)
    assert sum(stages.values()) == pytest.approx(plan.rho_total)
    assert approx_rho_to_eps(plan.rho_total, 1e-6, plan.delta_spent, "tight") == pytest.approx(10.0, rel=1e-6)
    for sigma, m, tau, delta in ((plan.sigma_o, plan.m_o, plan.tau_o, plan.delta_openers),
                                 (plan.sigma_s, plan.m_s, plan.tau_s, plan.delta_skeletons),
                                 (plan.sigma_v, plan.m_v, plan.tau_v, plan.delta_values)):
        from scipy.stats import norm
        assert m * norm.sf((tau - 1.0) / sigma) <= delta


def test_a_form_chosen_by_hand_or_a_private_writer_runs_no_structure_discovery():
    assert not plan_dp_synrag(DPSynRAGSpec(text="private"), 10.0, 1e-6).discovers_forms
    assert not plan_dp_synrag(DPSynRAGSpec(), 10.0, 1e-6, document=DocumentSpec(public_example="Note. [x].")
                              ).discovers_forms
    assert not plan_dp_synrag(DPSynRAGSpec(discover_forms=False), 10.0, 1e-6).discovers_forms


@statistical
def test_a_skeleton_only_one_unit_uses_is_never_released_in_10000_trials():
    """The release step at the default plan (ε = 10, δ = 1e-6): a planted single-unit skeleton beside shared ones."""
    plan = plan_dp_synrag(DPSynRAGSpec(), 10.0, 1e-6)
    counts = {"Seen today: [name]. Plan: [text].": 150, "Planted alone: [text].": 1}
    rng = np.random.default_rng()
    planted = shared = 0
    for _ in range(10_000):
        released = gaussian_sparse_histogram(counts, plan.sigma_s, plan.tau_s, plan.m_s, rng=rng)
        planted += "Planted alone: [text]." in released.items
        shared += "Seen today: [name]. Plan: [text]." in released.items
    assert planted == 0
    assert shared == 10_000


def test_release_probability_follows_the_gaussian_tail():
    """An item held by c units is released with probability Φ̄((τ − c)/σ): measured at c = τ (one half)."""
    sigma, tau = 3.0, 20.0
    counts = {f"s{i}": 20 for i in range(4000)}
    released = gaussian_sparse_histogram(counts, sigma, tau, 2, rng=np.random.default_rng())
    rate = len(released.items) / 4000
    assert abs(rate - 0.5) < 4 * math.sqrt(0.25 / 4000)


class _Checkpoints:
    def __init__(self):
        self.saved: dict = {}

    def has(self, key):
        return key in self.saved

    def load(self, key):
        return self.saved[key]

    def save(self, key, value):
        self.saved[key] = value


class _Reporter:
    def emit(self, event):
        pass

    def cancelled(self):
        return False


class _Ctx:
    def __init__(self):
        self.charged: list[tuple[str, float]] = []
        self.checkpoints = _Checkpoints()
        self.reporter = _Reporter()

    def charge(self, stage, rho, description, delta_part=0.0):
        self.charged.append((stage, rho, delta_part))

    def test_rng(self):
        return None


@statistical
def test_the_releases_are_charged_before_drawing_and_a_resume_draws_nothing(demo_units):
    plan = plan_dp_synrag(DPSynRAGSpec(), 10.0, 1e-6)
    ctx = _Ctx()
    forms = release_forms(demo_units, plan.form_releases(), ctx, STAGE_FORM_OPENERS)
    assert [c[0] for c in ctx.charged] == [STAGE_FORM_OPENERS, STAGE_FORM_SKELETONS, STAGE_FORM_VALUES]
    assert ctx.charged[0][2] == pytest.approx(plan.delta_openers)
    # the demo's 600 notes: its templates are released. 40 draws covered 0.34-0.99; in one draw in five a template's
    # main skeleton misses τ_s (0.34-0.46; one CI draw 0.27), so the bar is one template's share with room to spare
    assert forms.skeletons and forms.coverage(600) > 0.2
    assert all(c > plan.tau_s for c in forms.counts)
    with open(NOTES, newline="", encoding="utf-8") as fh:
        names = {w for r in csv.DictReader(fh) for w in r["patient"].split()}
    assert not any(n in s.split() for s in forms.skeletons for n in names)
    again = release_forms(demo_units, plan.form_releases(), ctx, STAGE_FORM_OPENERS)
    assert again == forms and len(ctx.charged) == 3  # openers, skeletons, values: each charged once


def test_the_writer_follows_released_forms_only_when_they_stand_for_enough_of_the_corpus():
    forms = ReleasedForms(("A [text].",), (40.0,))
    assert follows_forms(forms, 100.0) and not follows_forms(forms, 1000.0)
    assert not follows_forms(ReleasedForms(), 100.0)


def test_a_form_whose_label_was_not_released_is_not_followed_and_the_certificate_says_so():
    from core.methods.dp_synrag.method import form_notes

    soap = "S: [number] [text] [name], [text].\n[text]: HR [number], BP [number]/[number].\n[text]: ? [text]."
    arrival = "Arrival time: [number]:[number]\nName: [name]\nPresenting complaint: [text] for [number] days"
    forms = ReleasedForms((soap, arrival), (60.0, 30.0))
    usable = followable(forms)
    assert usable.skeletons == (arrival,) and usable.counts == (30.0,)  # "[number]:[number]" is no label slot
    assert follows_forms(forms, 100.0) and not follows_forms(forms, 400.0)  # coverage counts the followable only
    assert not follows_forms(ReleasedForms((soap,), (90.0,)), 100.0)
    plan = plan_dp_synrag(DPSynRAGSpec(), 10.0, 1e-6)
    (followed,) = form_notes(plan, forms, True)
    assert f'"{arrival}"' in followed and soap not in followed and "1 of them held a slot where a label" in followed
    (shipped,) = form_notes(plan, ReleasedForms((soap,), (90.0,)), False)
    assert "could be followed stood for too little" in shipped and "1 of them held" in shipped


def test_the_public_rule_picks_the_fallback_form_once_and_keeps_structure_discovery_on():
    from core.methods.dp_synrag.shape.forms import with_chosen_form
    from core.specs.runspec import RunSpec

    spec = RunSpec.from_dict({"task": "Answer questions about patients."})
    once = with_chosen_form(spec)
    assert once.document.document_form == "clinical_note" and once.dp_synrag.discovers_forms_with(once.document)
    assert with_chosen_form(once) == once  # idempotent: a resume compares the settings after the rule
    by_hand = with_chosen_form(RunSpec.from_dict({"task": "x", "dp_synrag": {"document_form": "review"}}))
    assert not by_hand.dp_synrag.discovers_forms_with(by_hand.document)


def test_a_number_word_before_a_unit_of_time_is_a_number_slot_as_its_digits_are(lists):
    released = dict.fromkeys({"Presenting complaint", "for", "days"}, 100.0)
    words = skeleton_of("Presenting complaint: cough for three days.", released, lists)
    digits = skeleton_of("Presenting complaint: cough for 3 days.", released, lists)
    assert words == digits == "Presenting complaint: [text] for [number] days."
    assert "[number]" not in skeleton_of("Presenting complaint: one of them.", released, lists)


TICKET = ("Rosa Novak called on 18 Mar 2025 about ShiftBoard: rota not loading. We found a corrupted cache in the "
          "app and cleared the app cache. Follow up in 11 days.")


def test_a_unit_proposes_the_inner_wording_of_a_clause_keyed_by_its_first_word(lists):
    """Inner wording (form_inner.py): a function word inside a clause, after words of a slot and out of reach of the
    document's own openers and closers, is proposed keyed by the clause's first word, within the cap m_o."""
    everything = propose_openers(Unit("u", TICKET), lists, 500)
    assert "we … and" in everything and "we … and cleared" in everything
    assert "we … in" not in everything  # "We found a corrupted cache in": the opener reaches it
    assert "follow … in" not in everything and "we … found" not in everything  # the clause's own opener
    assert not any(o.split("… ")[1].split()[0] in ("a", "an", "the")
                   for o in everything if "…" in o)  # an article opens a filler
    assert len(propose_openers(Unit("u", TICKET), lists, 8)) == 8  # the same cap: at most m_o


def test_a_released_inner_wording_most_of_its_clauses_hold_is_kept_between_two_text_slots(lists):
    released = {"called on": 100.0, "about": 100.0, "We found": 100.0, "Follow up in": 100.0, "days": 100.0}
    without = skeleton_of(TICKET, released, lists)
    assert "We found [text]. Follow" in without  # the " and " is lost into the slot
    kept = skeleton_of(TICKET, {**released, "we … and": 80.0}, lists)
    assert kept == ("[name] called on [number] [month] [number] about [text]: [text]. We found [text] and [text]. "
                    "Follow up in [number] days.")
    # a wording only some of the clause's fillers hold (below INNER_SHARE of the opener's count) stays in the slot
    assert skeleton_of(TICKET, {**released, "we … and": 60.0}, lists) == without
    # kept once per clause: a filler's own "and" before it does not make another variant
    other = TICKET.replace("a corrupted cache in the app", "a stale cache and a bad link")
    assert skeleton_of(other, {**released, "we … and": 80.0}, lists) == kept
    # only in a clause that opens with the key's word and a released opener
    assert "and" not in skeleton_of("Rosa Novak called on 18 Mar 2025 about ShiftBoard: rota and sync broken.",
                                     {**released, "we … and": 80.0, "rota … and": 80.0}, lists).split("about")[1]


def test_the_released_forms_fixed_words_are_no_topic_but_a_public_condition_name_in_one_stays():
    """A word a released skeleton writes around its slots ("wk" in "Review in [number] wk.") is how documents are
    written: no topic (the discharge file's "Dx: wk"); a public ICD-10-CM name in a form still is one."""
    forms = ReleasedForms(skeletons=("Asthma review for [name]. Review in [number] wk.", "Seen: [text]."),
                          counts=(30.0, 20.0))
    assert forms.fixed_words() == {"asthma", "review", "for", "in", "wk", "seen"}
    words = not_topics("", forms)
    assert {"wk", "review", "seen"} <= words
    assert "asthma" not in words
    assert {"wk", "review"}.isdisjoint(not_topics("", ReleasedForms()))
