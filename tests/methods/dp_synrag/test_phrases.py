"""Step 0 of DP-SynRAG: DP phrase discovery (SPEC §2.0, docs/method.md §2.0, issue 23 items 1-2)."""

from __future__ import annotations

import csv
import math
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from core.corpus import Unit
from core.common.errors import PrivetError
from core.methods.dp_synrag.release.budget import plan_dp_synrag
from core.methods.dp_synrag.release.phrases import (
    PublicLists,
    candidate_phrases,
    extend_vocabulary,
    phrase_outlook,
    propose_phrases,
    release_phrases,
)
from core.methods.dp_synrag.vocab.vocabulary import load_vocabulary
from core.common.paths import resources_dir
from core.privacy.conversion import approx_eps_to_rho, approx_rho_to_eps, rho_to_eps
from core.privacy.mechanisms import gaussian_sparse_histogram
from core.privacy.planner import STAGE_HISTOGRAM, STAGE_PHRASES
from core.privacy.set_union import item_counts, release_threshold, single_unit_release_bound
from core.specs.runspec import DPSynRAGSpec
from tests.helpers import statistical

NOTES = resources_dir() / "demo" / "clinic" / "notes.csv"


@pytest.fixture(scope="module")
def english():
    return load_vocabulary()


@pytest.fixture(scope="module")
def lists(english):
    return PublicLists.shipped(english)


@pytest.fixture(scope="module")
def demo_units() -> list[Unit]:
    with open(NOTES, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return [Unit(uid=r["id"], text=r["note"]) for r in rows]


# -- proposals: from one unit and public lists only --------------------------------------------------


def test_a_unit_proposes_no_phrase_from_a_link_or_a_handle(lists):
    found = propose_phrases("Outbreak news from Monrovia http://reut.rs/1xYz via @ReutersHealth", lists, 20)
    assert found and not any(w in phrase for phrase in found for w in ("reut", "rs", "reutershealth", "http"))


def test_a_unit_proposes_its_own_multi_word_names_but_no_numbers_names_or_fragments(lists):
    text = (
        "Seen today: Austin Weaver, 47. Diagnosed with Cinder Asthma; the Cinder Asthma flares at night. "
        "She doesn't sleep, see www.example.com. Dose 20 mg."
    )
    found = candidate_phrases(text, lists)
    assert "cinder asthma" in found and "cinder" in found
    assert not any(ch.isdigit() for p in found for ch in p)  # numbers never
    assert not any(w in {"austin", "weaver"} for p in found for w in p.split())  # a name written as a name
    assert not any(w in {"doesn", "www", "com", "t"} for p in found for w in p.split())  # fragments, markup
    assert not any(p.split()[0] in lists.stop_words or p.split()[-1] in lists.stop_words for p in found)
    assert "asthma flares" in found and "seen today" in found
    assert not any("asthma the" in p or "weaver diagnosed" in p for p in found)  # never across punctuation


def test_a_lower_case_english_word_that_is_also_a_name_stays(lists):
    assert "rose" in lists.names
    assert "rose rash" in candidate_phrases("A rose rash on the arm.", lists)
    assert not any("rose" in p for p in candidate_phrases("Rose came in with a rash.", lists))


def test_proposals_are_at_most_K_distinct_rarest_first_and_from_the_unit_alone(lists):
    text = "Diagnosed with cinder asthma. The cinder asthma worsened with cold weather."
    picked = propose_phrases(text, lists, 4)
    assert len(picked) == len(set(picked)) == 4
    assert picked[0] == "cinder"  # the rarest word in general English comes first
    assert "cinder asthma" in picked and "cinder asthma worsened" not in picked  # the shorter phrase first
    assert "weather" not in picked  # a common word loses to rarer ones
    assert propose_phrases(text, lists, 4) == picked  # deterministic: a resume proposes the same
    with pytest.raises(ValueError):
        propose_phrases(text, lists, 0)


def test_names_the_text_writes_as_names_come_first(lists):
    text = "Presenting symptoms were wheezing and sweats. The findings are consistent with Velvet Throat."
    assert propose_phrases(text, lists, 2)[0] == "velvet throat"  # capitalised mid-sentence: a name
    lower = text.replace("Velvet Throat", "velvet throat")
    assert "velvet throat" not in propose_phrases(lower, lists, 2)  # rarer single words first otherwise
    # A capital that only starts a sentence is no evidence: "Presenting symptoms" is not a name.
    assert "presenting symptoms" not in propose_phrases(text, lists, 3)


def test_a_name_written_whole_keeps_its_article_and_small_inner_words(lists):
    text = ("Films that J. K. loved: Casablanca (Drama), The Shawshank Redemption (Crime, Drama), "
            "Gone with the Wind (Drama), The Silence of the Lambs (Thriller). The Kremlin said Russia and China agree.")
    found = candidate_phrases(text, lists)
    for name in ("the shawshank redemption", "gone with the wind", "the silence of the lambs"):
        assert found.get(name) is True, name
    assert "shawshank redemption" not in found  # written after its "The": proposed with it only
    assert "the kremlin" not in found  # a "The" that starts a sentence says nothing
    assert found.get("russia and china") is False  # "and" joins names, it is not inside one
    assert set(propose_phrases(text, lists, 3)) <= {p for p, name in found.items() if name}  # names first


def test_a_stop_word_capitalised_inside_a_sentence_is_the_names_own_word(lists):
    text = "We watched The Truman Show and Top Gun. Show me the way. Then Sam said Many were there, The Others Too."
    found = candidate_phrases(text, lists)
    assert found.get("the truman show") is True and "the truman" not in found  # "show" is on the stop list
    assert found.get("top gun") is True
    assert not any(p.startswith("show") for p in found)  # a sentence's first word says nothing
    assert "the others too" not in found and propose_phrases(text, lists, 8)  # stop words alone are no name


def test_a_headline_in_title_case_is_no_evidence_of_names(lists):
    text = "Senate Confirms Education Secretary After Historic Vote\nThe vote ended the Department of Education fight."
    found = candidate_phrases(text, lists)
    assert found.get("senate confirms") is False and found.get("historic vote") is False
    assert found.get("department of education") is True  # written as a name in a sentence
    assert propose_phrases(text, lists, 1) == ["department of education"]


# -- sensitivity: removing a unit moves the count vector by at most sqrt(K_p) -----------------------------


def test_removing_a_unit_moves_the_counts_by_at_most_sqrt_K_on_the_common_support(demo_units, lists):
    K_p = 8
    proposals = [propose_phrases(u.text, lists, K_p) for u in demo_units[:200]]
    full = item_counts(proposals, K_p)
    for removed in range(0, 200, 13):
        rest = item_counts(proposals[:removed] + proposals[removed + 1 :], K_p)
        common = set(full) & set(rest)
        l2 = math.sqrt(sum((full[p] - rest[p]) ** 2 for p in common))
        assert l2 <= math.sqrt(K_p) + 1e-12
        only_removed = set(full) - set(rest)  # items of that unit alone: count 1 on one side, absent on the other
        assert all(full[p] == 1 for p in only_removed)
        assert only_removed <= set(proposals[removed])


def test_item_counts_refuse_more_than_K_or_repeated_items():
    with pytest.raises(PrivetError):
        item_counts([["a", "b", "c"]], 2)
    with pytest.raises(PrivetError):
        item_counts([["a", "a"]], 2)
    assert item_counts([["a", "b"], ["b"]], 2) == Counter({"b": 2, "a": 1})


# -- the threshold, statistically ------------------------------------------------------------------------


def test_threshold_meets_delta_by_the_union_bound():
    for sigma, K, delta in ((1.0, 4, 0.4), (3.0, 8, 5e-7), (12.0, 20, 1e-9)):
        tau = release_threshold(sigma, K, delta)
        assert single_unit_release_bound(sigma, K, tau) <= delta
        assert single_unit_release_bound(sigma, K, tau) == pytest.approx(delta, rel=1e-2)  # and not far below


@pytest.mark.parametrize("exact", [True, False])
def test_a_phrase_of_one_unit_is_released_at_rate_at_most_delta_over_K(exact):
    """δ_p/K_p is the release probability of each single-unit phrase. A large δ_p makes it measurable:
    σ = 1, K_p = 4, δ_p = 0.4 → at most 0.1 per phrase. 4,000 single-unit phrases in one release."""
    sigma, K, delta = 1.0, 4, 0.4
    tau = release_threshold(sigma, K, delta)
    n = 4000
    counts = {f"phrase {i}": 1 for i in range(n)}
    rng = None if exact else np.random.default_rng(5)
    released = gaussian_sparse_histogram(counts, sigma, tau, K, rng=rng)
    rate = len(released.items) / n
    sd = math.sqrt(0.1 * 0.9 / n)
    assert rate <= delta / K + 4 * sd  # the guarantee (4 standard deviations of sampling error)
    assert rate >= delta / K - 4 * sd  # and the threshold is not far more conservative than stated
    # Released counts are above tau and phrases are listed in alphabetical order (no private order).
    assert all(v > tau for v in released.noisy_counts)
    assert list(released.items) == sorted(released.items)


@statistical
def test_frequent_phrases_are_released_and_the_noise_has_the_planned_sd():
    sigma, K = 2.0, 4
    tau = release_threshold(sigma, K, 1e-6)
    counts = {f"p{i}": 200 for i in range(3000)}
    released = gaussian_sparse_histogram(counts, sigma, tau, K)  # exact sampler (OpenDP)
    assert len(released.items) == 3000
    noise = (np.asarray(released.noisy_counts) - 200.0) / sigma
    assert stats.kstest(noise, "norm").pvalue > 1e-3


# -- planning and accounting ---------------------------------------------------------------------------------


def test_plan_splits_delta_and_composes_the_gaussian_part_in_zcdp():
    spec = DPSynRAGSpec(phrases_per_unit=8, cluster_keywords=5, text="private", size_bound=1000)  # no size count
    eps, delta = 10.0, 1e-6
    plan = plan_dp_synrag(spec, eps, delta)
    assert plan.delta_phrases == pytest.approx(0.5 * delta)
    assert plan.delta_conversion == pytest.approx(delta - plan.delta_phrases)
    assert plan.rho_phrases == pytest.approx(8 / (2 * plan.sigma_p**2), rel=1e-12)
    assert plan.rho_phrases == pytest.approx(0.1 * plan.rho_total, rel=1e-12)
    assert single_unit_release_bound(plan.sigma_p, 8, plan.tau_p) <= plan.delta_phrases
    # The zCDP part is converted at δ − δ_p, and the run meets the target ε at the total δ.
    assert plan.rho_total == pytest.approx(approx_eps_to_rho(eps, delta, plan.delta_phrases), rel=1e-12)
    assert rho_to_eps(plan.rho_total, plan.delta_conversion) < eps
    assert plan.epsilon_tight <= eps + 1e-9
    acc = plan.accountant()
    assert acc.delta_spent() == pytest.approx(plan.delta_phrases)
    assert acc.epsilon(delta) <= eps + 1e-9
    assert list(plan.per_stage())[:2] == [STAGE_PHRASES, STAGE_HISTOGRAM]
    assert sum(plan.per_stage().values()) == pytest.approx(plan.rho_total, rel=1e-12)
    # Without discovery the whole δ goes to the conversion, as before.
    off = plan_dp_synrag(DPSynRAGSpec(discover_phrases=False), eps, delta)
    assert off.delta_phrases == 0.0 and off.rho_total > plan.rho_total
    assert STAGE_PHRASES not in off.per_stage()


def test_approximate_zcdp_conversion_is_conservative():
    rho, delta, spent = 2.0, 1e-6, 5e-7
    eps = approx_rho_to_eps(rho, delta, spent)
    assert eps == pytest.approx(rho_to_eps(rho, delta - spent) - math.log1p(-spent), rel=1e-12)
    assert eps > rho_to_eps(rho, delta)  # spending part of δ on a threshold never improves ε
    assert approx_eps_to_rho(eps, delta, spent) == pytest.approx(rho, rel=1e-8)
    with pytest.raises(PrivetError):
        approx_rho_to_eps(rho, delta, delta)


def test_zcdp_part_cross_checked_with_dp_accounting():
    dp_accounting = pytest.importorskip("dp_accounting")
    plan = plan_dp_synrag(DPSynRAGSpec(), 4.0, 1e-5)
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(dp_accounting.ZCDpEvent(plan.rho_total))
    independent = acc.get_epsilon(plan.delta_conversion)
    # dp-accounting's RDP conversion of the same ρ at δ − δ_p, plus the log(1/(1 − δ_p)) term, meets ε = 4.
    assert independent - math.log1p(-plan.delta_phrases) <= 4.0 + 1e-3
    assert plan.epsilon_tight == pytest.approx(independent - math.log1p(-plan.delta_phrases), abs=0.05)


def test_phrase_shares_leaving_nothing_for_text_are_refused():
    with pytest.raises(PrivetError, match="phrases"):
        plan_dp_synrag(DPSynRAGSpec(
        text="private", phrases_fraction=0.5, hist_fraction=0.3, cluster_keywords_fraction=0.3), 10.0, 1e-6)


# -- the stage: charged before drawing, checkpointed, resumable without a redraw -----------------------------


class _Checkpoints:
    def __init__(self):
        self.saved: dict = {}

    def has(self, name):
        return name in self.saved

    def load(self, name):
        return self.saved[name]

    def save(self, name, value):
        self.saved[name] = value


class _Reporter:
    def __init__(self):
        self.events = []

    def emit(self, event):
        self.events.append(event)

    def cancelled(self):
        return False


class _Ctx:
    def __init__(self, seed=None):
        self.charged: list[tuple[str, float]] = []
        self.delta_parts: list[float] = []  # the δ_p each charge spends outright (the ledger stores it)
        self.checkpoints = _Checkpoints()
        self.reporter = _Reporter()
        self._seed = seed

    def charge(self, stage, rho, description, delta_part=0.0):
        self.charged.append((stage, rho))
        self.delta_parts.append(delta_part)

    def test_rng(self):
        return None if self._seed is None else np.random.default_rng(self._seed)


def test_stage_charges_the_plan_before_drawing_and_a_resume_never_redraws(demo_units, english, lists, monkeypatch):
    import core.methods.dp_synrag.release.phrases as phrases

    spec = DPSynRAGSpec(phrases_per_unit=8, phrases_fraction=0.2)
    plan = plan_dp_synrag(spec, 10.0, 1e-6)
    ctx = _Ctx()
    real = phrases.gaussian_sparse_histogram
    draws = []

    def spy(*args, **kwargs):
        assert ctx.charged, "noise drawn before the charge"
        draws.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(phrases, "gaussian_sparse_histogram", spy)
    released = release_phrases(demo_units, lists, plan, ctx)
    assert ctx.charged == [(STAGE_PHRASES, pytest.approx(plan.per_stage()[STAGE_PHRASES]))]
    assert ctx.delta_parts == [pytest.approx(plan.delta_phrases)] and plan.delta_phrases > 0  # δ_p goes to the ledger
    assert ctx.checkpoints.saved[STAGE_PHRASES] == released
    # The demo's invented disease names are found; no patient name (each unique to one note) is.
    assert {"tusfosemia", "drimkitopathy"} <= set(released)
    with open(NOTES, newline="", encoding="utf-8") as fh:
        names = {w.lower() for r in csv.DictReader(fh) for w in r["patient"].split()}
    assert not any(w in names for p in released for w in p.split())
    assert all(CANARY_FREE(p) for p in released)
    # Resume: the checkpoint is reused, nothing is charged or drawn again.
    again = release_phrases(demo_units, lists, plan, ctx)
    assert again == released and len(ctx.charged) == 1 and len(draws) == 1
    vocab = extend_vocabulary(english, released, lists)
    assert "tusfosemia" in vocab and vocab.sources[-1].startswith("released phrases")
    outlook = phrase_outlook(demo_units, english, plan)
    assert outlook.rho == plan.rho_phrases and outlook.expected_released > 5


def CANARY_FREE(phrase: str) -> bool:
    return "zqxvortimer" not in phrase and "blandquist" not in phrase


def test_a_canary_in_one_unit_is_not_released(demo_units, lists):
    """Membership check: a canary phrase planted in one note never clears τ_p (its chance is ≤ δ_p/K_p)."""
    planted = list(demo_units)
    planted[5] = Unit(uid="x", text=planted[5].text + " Zqxvortimer Blandquist reported.")
    plan = plan_dp_synrag(DPSynRAGSpec(phrases_per_unit=8), 10.0, 1e-6)
    ctx = _Ctx(seed=7)
    assert "zqxvortimer" in propose_phrases(planted[5].text, lists, 8)  # it is proposed ...
    released = release_phrases(planted, lists, plan, ctx)
    assert all(CANARY_FREE(p) for p in released)  # ... and not released


def test_guidance_reports_phrase_support_and_never_suggests_an_impossible_split():
    from core.methods.dp_synrag.guidance import guide

    spec = DPSynRAGSpec(K=8, R=12, L=3, k=25, T=32, hist_fraction=0.4, cluster_keywords_fraction=0.4)
    for eps in (4.0, 10.0):
        g = guide(spec, eps, 1e-6, 240, 30_000)  # the suggestion is planned too: it must leave room for text
        plan = plan_dp_synrag(spec, eps, 1e-6)
        assert g.min_phrase_support == pytest.approx(plan.tau_p)
    assert any("phrase of the corpus" in w for w in guide(spec, 4.0, 1e-6, 240, 30_000).warnings)
