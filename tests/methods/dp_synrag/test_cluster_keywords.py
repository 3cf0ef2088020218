"""DP-SynRAG step 2b: co-keywords of each cluster (docs/method.md §2.2b).

Each unit votes for at most M candidate words in each of its at most L clusters; Gaussian noise on
the whole count matrix (L2 sensitivity √(L·M)); each cluster releases the words whose noisy count
clears the noise level. The released words, and only they, describe the cluster to the public row.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from core.methods.dp_synrag.release.budget import plan_dp_synrag
from core.methods.dp_synrag.release.clusters import (
    cluster_keyword_candidates,
    cluster_keyword_counts,
    co_keyword_level,
    release_cluster_keywords,
    released_cluster_keywords,
    soft_clusters,
)
from core.methods.dp_synrag.vocab.vocabulary import Vocabulary
from core.methods.private_prediction.prompts import answer_start, public_message
from core.privacy.accountant import Accountant
from core.privacy.planner import STAGE_CLUSTER_KEYWORDS
from core.specs.runspec import DPSynRAGSpec, RunSpec
from tests.helpers import statistical

WORDS = ["tusfosemia", "tregedcillin", "insomnia", "wheezing", "skin rash", "drimkitopathy", "remkatstatin",
         "sore throat", "back stiffness", "patient", "weeks", "fever"]


def _units(seed: int = 0, n: int = 60) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    return [list(rng.choice(WORDS, size=int(rng.integers(1, 7)), replace=False)) for _ in range(n)]


def _count_matrix(keywords, W, L, M):
    clusters = soft_clusters(keywords, W, L)
    return cluster_keyword_counts(keywords, clusters, W, WORDS, M)


@pytest.mark.parametrize("L,M", [(1, 1), (2, 3), (3, 5), (5, 2)])
def test_one_unit_moves_the_count_matrix_by_at_most_sqrt_L_M(L, M):
    """Add-or-remove one unit: every entry moves by at most 1, at most L·M of them (L2 ≤ √(L·M))."""
    W = ["tusfosemia", "insomnia", "drimkitopathy", "back stiffness", "wheezing", "fever"]
    worst = 0.0
    for seed in range(6):
        keywords = _units(seed)
        full = _count_matrix(keywords, W, L, M)
        for u in range(len(keywords)):
            less = _count_matrix(keywords[:u] + keywords[u + 1 :], W, L, M)
            diff = full - less
            assert np.all((diff == 0) | (diff == 1))  # one unit only adds votes
            worst = max(worst, float(np.linalg.norm(diff)))
    assert worst <= math.sqrt(L * M) + 1e-9
    assert worst > 0


def test_a_unit_never_votes_for_its_own_cluster_word_nor_outside_the_candidates():
    keywords = [["tusfosemia", "insomnia", "secret-word"]]
    counts = cluster_keyword_counts(keywords, [[0]], ["tusfosemia"], ["tusfosemia", "insomnia"], 5)
    assert counts.tolist() == [[0.0, 1.0]]


def test_candidates_depend_on_the_released_histogram_only():
    vocab = Vocabulary.from_words(WORDS)
    noisy = np.arange(len(vocab.words), dtype=float)[::-1]  # the first word of V is the most frequent
    assert cluster_keyword_candidates(noisy, vocab, R=2) == list(vocab.words[:8])
    assert cluster_keyword_candidates(noisy, vocab, R=10) == list(vocab.words)  # at most |V|


@statistical
def test_release_is_charged_before_noise_and_noise_has_the_planned_sd():
    spec = DPSynRAGSpec(K=6, R=4, L=2, T=8, hist_fraction=0.3, cluster_keywords=3, cluster_keywords_fraction=0.3)
    plan = plan_dp_synrag(spec, 4.0, 1e-5)
    assert plan.sigma_c == pytest.approx(math.sqrt(plan.L * plan.M / (2 * plan.rho_cluster_keywords)))
    charged: list[tuple[str, float]] = []

    class Ctx:
        def charge(self, stage, rho, description, delta_part=0.0):
            charged.append((stage, rho))

        def test_rng(self):
            assert charged, "noise drawn before the charge"
            return None

        class Fresh:  # a fresh run: nothing released yet, so the stage is charged and drawn
            has = staticmethod(lambda name: False)
            save = staticmethod(lambda name, value: None)

        checkpoints = Fresh

    keywords = [[] for _ in range(400)]  # no votes: the release is pure noise
    W = ["a", "b", "c", "d"]
    clusters = [[] for _ in W]
    noisy = release_cluster_keywords(keywords, clusters, W, WORDS, plan, Ctx())
    assert charged == [(STAGE_CLUSTER_KEYWORDS, pytest.approx(plan.rho_cluster_keywords))]
    assert noisy.shape == (4, len(WORDS))
    # every entry (zeros included) carries N(0, sigma_c^2): Kolmogorov-Smirnov against that law
    assert stats.kstest(noisy.ravel() / plan.sigma_c, "norm").pvalue > 1e-3


def test_released_words_clear_the_noise_level_and_are_at_most_M():
    sigma = 2.0
    level = sigma * (math.sqrt(2 * math.log(len(WORDS))) + 1.0)  # one cluster: N = 1·|candidates| draws
    assert co_keyword_level(sigma, 1, len(WORDS)) == pytest.approx(level)
    row = np.zeros(len(WORDS))
    row[[1, 2, 3, 4]] = [level + 5, level + 1, level - 0.1, level + 9]
    assert released_cluster_keywords(np.array([row]), WORDS, 2, sigma) == [["skin rash", "tregedcillin"]]
    assert released_cluster_keywords(np.array([row]), WORDS, 5, sigma) == [["skin rash", "tregedcillin", "insomnia"]]


def test_pure_noise_rarely_releases_a_word():
    rng = np.random.default_rng(3)
    sigma = 4.0
    noisy = rng.normal(0, sigma, size=(2000, 48))
    released = released_cluster_keywords(noisy, [f"w{i}" for i in range(48)], 5, sigma)
    assert np.mean([bool(r) for r in released]) < 0.2


def test_pure_noise_releases_almost_nothing_across_all_clusters():
    """Issue 23 item 5: with all-zero counts, R clusters × 4R candidates of pure noise release almost no
    word over the whole run (the level is the typical maximum of all R·|candidates| draws plus a margin)."""
    rng = np.random.default_rng(11)
    sigma, R = 3.0, 24
    candidates = [f"w{i}" for i in range(4 * R)]
    runs = 200
    released_total = 0
    for _ in range(runs):
        noisy = np.zeros((R, len(candidates))) + rng.normal(0, sigma, size=(R, len(candidates)))
        released_total += sum(len(r) for r in released_cluster_keywords(noisy, candidates, 5, sigma))
    # N·Φ̄(√(2 ln N) + 1) ≈ 0.002 expected words per run for N = 2304: 200 runs release well under 5.
    assert released_total <= 4
    # The one-cluster level of before (σ·√(2 ln |candidates|)) releases words in most runs.
    old_level = sigma * math.sqrt(2 * math.log(len(candidates)))
    assert np.mean([(rng.normal(0, sigma, size=(R, len(candidates))) >= old_level).any() for _ in range(50)]) > 0.5


def test_public_row_and_answer_start_hold_only_released_words_and_the_task():
    task = "Answer patients' questions about which disease matches their symptoms."
    message = public_message("keyword", task, "tusfosemia", ["insomnia", "wheezing"])
    assert "tusfosemia" in message and "insomnia, wheezing" in message
    assert "CANARY" not in message and "Zorvath" not in message
    assert public_message("keyword", task, "tusfosemia", []) == public_message("keyword", task, "tusfosemia")
    assert answer_start("keywords", "tusfosemia", ["insomnia"]) == "tusfosemia (insomnia):"
    assert answer_start("keywords", "tusfosemia", []) == answer_start("keyword", "tusfosemia") == "tusfosemia:"


def test_plan_charges_sum_to_the_total_with_and_without_the_stage():
    for M, refine in itertools.product((0, 5), (False, True)):
        spec = DPSynRAGSpec(cluster_keywords=M, refine=refine, hist_fraction=0.3, text="private")
        plan = plan_dp_synrag(spec, 10.0, 1e-6)
        stages = plan.per_stage()
        assert (STAGE_CLUSTER_KEYWORDS in stages) == bool(M)
        assert sum(stages.values()) == pytest.approx(plan.rho_total)
        acc: Accountant = plan.accountant()
        assert acc.total_rho() == pytest.approx(plan.rho_total)
        if M:
            assert stages[STAGE_CLUSTER_KEYWORDS] == pytest.approx(0.2 * plan.rho_total)
    # the stage's budget comes out of the tokens' share
    on = plan_dp_synrag(DPSynRAGSpec(cluster_keywords=5, hist_fraction=0.3, text="private"), 10.0, 1e-6)
    off = plan_dp_synrag(DPSynRAGSpec(cluster_keywords=0, hist_fraction=0.3, text="private"), 10.0, 1e-6)
    assert on.c_over_tau < off.c_over_tau


def test_round_one_specs_release_no_co_keywords():
    assert RunSpec.from_dict({"dp_synrag": {"public_anchor": True}}).dp_synrag.cluster_keywords == 0
    assert RunSpec.from_dict({}).dp_synrag.cluster_keywords == 5
