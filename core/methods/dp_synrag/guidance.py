"""Planner guidance for DP-SynRAG (issue 10 item 5): will this plan say anything, and what fits?

Two quantities decide whether DP-SynRAG can carry a corpus's topics at a given ε:

* **Topic support.** A word becomes a cluster only if its noisy keyword count clears the
  significance threshold (``significance_threshold``: about σ_h·(√(2 ln|V|) + 1.5)). Topics
  mentioned by fewer units than that are invisible.
* **Co-keyword support.** A word describes a cluster (step 2b) only if its noisy vote count clears
  σ_c·(√(2 ln(R·4R)) + 1) (``co_keyword_support``; ``algorithm.co_keyword_level``).
* **Phrase support.** A phrase of the corpus (step 0) is released only if its noisy unit count
  exceeds τ_p; a phrase held by about τ_p units is released half the time (``phrase_support``).
* **Consensus strength.** Under DClip each of a cluster's rows moves a token's score by at
  most c/τ nats, so k rows that all agree move it by k·c/τ nats against the public base. Below
  about 1 nat the text follows the public model; about 2 nats or more lets the cluster's shared
  content through.

``guide`` reports both for a spec and suggests R, L, k, T and the histogram's budget share for
the corpus's size. The suggestion is shown to the custodian only; if they adopt it, those
parameters (which reflect the corpus's order of magnitude) appear in the certificate like any
other parameter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from core.methods.dp_synrag.algorithm import CANDIDATES_PER_CLUSTER, co_keyword_level, significance_threshold
from core.privacy.planner import DPSynRAGPlan, default_fractions, plan_dp_synrag
from core.runspec import DPSynRAGSpec

WEAK_CONSENSUS_NATS = 1.0
GOOD_CONSENSUS_NATS = 2.0
MAX_HIST_FRACTION = 0.5


@dataclass(frozen=True)
class Guidance:
    consensus_nats: float  # k·c/τ: how far k agreeing rows can move one token's score
    min_topic_support: float  # noisy count a word needs to become a cluster
    warnings: list[str]
    suggestion: dict[str, float]  # R, L, k, T, hist_fraction that fit the corpus's size and ε
    suggested_consensus_nats: float
    suggested_min_topic_support: float
    min_co_keyword_support: float = 0.0  # units of a cluster that must share a word for it to describe the cluster
    min_phrase_support: float = 0.0  # units that must share a phrase for it to be released half the time (0: off)


def co_keyword_support(spec: DPSynRAGSpec, plan: DPSynRAGPlan) -> float:
    """How many of a cluster's units must use a word for it to be released as a co-keyword (0: no such stage)."""
    if not plan.M:
        return 0.0
    return co_keyword_level(plan.sigma_c, spec.R, CANDIDATES_PER_CLUSTER * spec.R)


def phrase_support(plan: DPSynRAGPlan) -> float:
    """How many units must propose a phrase for DP phrase discovery to release it half the time (0: off)."""
    return plan.tau_p if plan.discovers_phrases else 0.0


def consensus_nats(spec: DPSynRAGSpec, plan: DPSynRAGPlan) -> float:
    return spec.k * plan.c_over_tau


def suggest(
    spec: DPSynRAGSpec, epsilon: float, delta: float, n_units: int, vocab_size: int, conversion: str = "tight"
) -> DPSynRAGSpec:
    """R, L, k, T and the histogram share that fit a corpus of about ``n_units`` units at ε."""
    n = max(int(n_units), 1)
    k = int(min(80, max(10, round(n / 10))))
    L = spec.L
    R = int(min(1000, max(4, round(n * L / k))))
    # Histogram share: enough that a topic held by ~1/30 of the corpus clears the threshold.
    default_hist = default_fractions(conversion)[0]
    want_support = max(n / 30.0, 10.0)
    sigma_h = want_support / (math.sqrt(2.0 * math.log(max(vocab_size, 2))) + 1.5)
    probe = plan_dp_synrag(replace(spec, k=k, R=R), epsilon, delta, conversion)
    # Never more than leaves a tenth of the budget for the text after the other stages' shares.
    others = probe.phrases_fraction + probe.cluster_keywords_fraction + probe.mu_fraction + probe.theta_fraction
    cap = min(MAX_HIST_FRACTION, max(0.9 - others, spec.hist_fraction or default_hist))
    hist_fraction = min(cap, max(default_hist, spec.K / (2.0 * sigma_h**2) / probe.rho_total))
    # Tokens: as many as keep k·c/τ at the "good" level, between 24 and 70.
    tuned = replace(spec, k=k, R=R, hist_fraction=hist_fraction)
    if not tuned.token_stage:  # no private prediction: T plays no part
        return tuned
    T = 70
    def strength(t: int) -> float:
        return consensus_nats(replace(tuned, T=t), plan_dp_synrag(replace(tuned, T=t), epsilon, delta, conversion))

    while T > 24 and strength(T) < GOOD_CONSENSUS_NATS:
        T -= 2
    return replace(tuned, T=T)


def guide(
    spec: DPSynRAGSpec, epsilon: float, delta: float, n_units: int, vocab_size: int, conversion: str = "tight"
) -> Guidance:
    plan = plan_dp_synrag(spec, epsilon, delta, conversion)
    strength = consensus_nats(spec, plan)
    support = significance_threshold(plan.sigma_h, vocab_size)
    better = suggest(spec, epsilon, delta, n_units, vocab_size, conversion)
    better_plan = plan_dp_synrag(better, epsilon, delta, conversion)
    warnings: list[str] = []
    if plan.token_stage and strength < WEAK_CONSENSUS_NATS:
        warnings.append(
            f"Weak consensus: {spec.k} agreeing documents can shift a word's odds by at most e^{strength:.2f} "
            f"(k·c/τ = {strength:.2f}), so the synthetic text will mostly follow the public model. "
            f"Raise ε, lower T, or raise k."
        )
    if support > n_units / 10:
        warnings.append(
            f"Only topics mentioned by about {support:.0f} or more units can become clusters, "
            f"{100 * support / max(n_units, 1):.0f}% of this corpus. Raise ε or the histogram's budget share."
        )
    co_support = co_keyword_support(spec, plan)
    if co_support > n_units / 10:
        warnings.append(
            f"A cluster's co-keywords are released only when about {co_support:.0f} of its units share them, "
            f"{100 * co_support / max(n_units, 1):.0f}% of this corpus. Raise ε, lower L or cluster_keywords, or raise "
            "the co-keywords' budget share."
        )
    phrases_needed = phrase_support(plan)
    if phrases_needed > n_units / 10:
        warnings.append(
            f"A phrase of the corpus becomes a possible topic name only when about {phrases_needed:.0f} units use it, "
            f"{100 * phrases_needed / max(n_units, 1):.0f}% of this corpus. Raise ε or phrases_fraction, lower "
            "phrases_per_unit, or give a public domain list and set discover_phrases = false."
        )
    suggestion = {
        "R": better.R,
        "L": better.L,
        "k": better.k,
        "T": better.T,
        "hist_fraction": round(better.hist_fraction, 3),
    }
    return Guidance(
        consensus_nats=strength,
        min_topic_support=support,
        warnings=warnings,
        suggestion=suggestion,
        suggested_consensus_nats=consensus_nats(better, better_plan),
        suggested_min_topic_support=significance_threshold(better_plan.sigma_h, vocab_size),
        min_co_keyword_support=co_support,
        min_phrase_support=phrases_needed,
    )
