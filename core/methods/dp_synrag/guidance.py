"""Planner guidance for DP-SynRAG (issue 10 item 5): will this plan say anything, and what fits?

Two quantities decide whether DP-SynRAG can carry a corpus's topics at a given ε:

* **Topic support.** A word becomes a cluster only if its noisy keyword count clears the
  significance threshold (``significance_threshold``: about σ_h·(√(2 ln|V|) + 1.5)). Topics
  mentioned by fewer units than that are invisible.
* **Co-keyword support.** A word describes a cluster (step 2b) only if its noisy vote count clears
  σ_c·√(2 ln 4R) (``co_keyword_support``).
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

from core.methods.dp_synrag.algorithm import CANDIDATES_PER_CLUSTER, significance_threshold
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


def co_keyword_support(spec: DPSynRAGSpec, plan: DPSynRAGPlan) -> float:
    """How many of a cluster's units must use a word for it to be released as a co-keyword (0: no such stage)."""
    if not plan.M:
        return 0.0
    return plan.sigma_c * math.sqrt(2.0 * math.log(max(CANDIDATES_PER_CLUSTER * spec.R, 2)))


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
    hist_fraction = min(MAX_HIST_FRACTION, max(default_hist, spec.K / (2.0 * sigma_h**2) / probe.rho_total))
    # Tokens: as many as keep k·c/τ at the "good" level, between 24 and 70.
    tuned = replace(spec, k=k, R=R, hist_fraction=hist_fraction)
    T = 70
    def strength(t: int) -> float:
        return consensus_nats(replace(tuned, T=t), plan_dp_synrag(replace(tuned, T=t), epsilon, delta, conversion))

    while T > 24 and strength(T) < GOOD_CONSENSUS_NATS:
        T -= 2
    return replace(tuned, T=T)


def _share(count: float, n_units: int) -> str:
    if count >= n_units:
        return f"more than the {n_units} units of this corpus"
    return f"{100 * count / max(n_units, 1):.0f}% of the {n_units} units of this corpus"


def topic_support_words(support: float, n_units: int) -> str:
    """The one sentence on how many units a topic needs (the figure is ``Guidance.min_topic_support``)."""
    if support >= n_units:
        return (f"No topic can be found: at this ε a topic must be mentioned by about {support:.0f} or more units "
                f"(people or documents), and this corpus has only {n_units}. The run would produce few or no "
                "synthetic documents. What to do: raise ε, give a larger share of the budget to finding topics "
                "(under Advanced), or use more data.")
    return (f"Only topics mentioned by about {support:.0f} or more units can be found at this ε "
            f"({_share(support, n_units)}); rarer topics are left out. What to do: raise ε or give a larger "
            "share of the budget to finding topics (under Advanced).")


def guide(
    spec: DPSynRAGSpec, epsilon: float, delta: float, n_units: int, vocab_size: int, conversion: str = "tight"
) -> Guidance:
    plan = plan_dp_synrag(spec, epsilon, delta, conversion)
    strength = consensus_nats(spec, plan)
    support = significance_threshold(plan.sigma_h, vocab_size)
    better = suggest(spec, epsilon, delta, n_units, vocab_size, conversion)
    better_plan = plan_dp_synrag(better, epsilon, delta, conversion)
    warnings: list[str] = []
    if strength < WEAK_CONSENSUS_NATS:
        warnings.append(
            f"The private documents will barely steer the wording: even when all {spec.k} documents of a topic "
            f"agree on a word, they make it at most {math.exp(strength):.1f} times more likely than the public "
            f"model alone would (e^{strength:.2f}; advanced: k·c/τ = {strength:.2f}, where k is the documents per "
            "topic, c the per-word limit and τ the temperature). The synthetic text will mostly read like the "
            "public model's. What to do: raise ε, write fewer tokens per document, or use more documents per topic."
        )
    if support > n_units / 10:
        warnings.append(topic_support_words(support, n_units))
    co_support = co_keyword_support(spec, plan)
    if co_support > n_units / 10:
        warnings.append(
            f"A topic is described by extra words only when about {co_support:.0f} of its units use them "
            f"({_share(co_support, n_units)}). What to do: raise ε, lower the topics per unit (L) or the words "
            "per topic, or raise the budget share for describing topics (under Advanced)."
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
    )
