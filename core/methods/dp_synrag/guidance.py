"""Planner guidance for DP-SynRAG (docs/method.md §1.8): will this plan say anything, and what fits?

Two quantities decide whether DP-SynRAG can carry a corpus's topics at a given ε:

* **Topic support.** A word becomes a cluster only if its noisy keyword count clears the
  significance threshold (``significance_threshold``: about σ_h·(√(2 ln|V|) + 1.5)). Topics
  mentioned by fewer units than that are invisible.
* **Co-keyword support.** A word describes a cluster (step 2b) only if its noisy vote count clears
  σ_c·(√(2 ln(R·4R)) + 1) (``co_keyword_support``; ``clusters.co_keyword_level``).
* **Phrase support.** A phrase of the corpus (step 0) is released only if its noisy unit count
  exceeds τ_p; a phrase held by about τ_p units is released half the time (``phrase_support``).
* **Consensus strength.** Under DClip each of a cluster's rows moves a token's score by at
  most c/τ nats, so k rows that all agree move it by k·c/τ nats against the public base. Below
  about 1 nat the text follows the public model; about 2 nats or more lets the cluster's shared
  content through.

* **Expected topics** (``core.privacy.forecast``): how many topics a plan can be expected to release
  under a public prior on topic sizes; about 0 means the run would spend for nothing.

``guide`` reports these for a spec and suggests R, L, k, T and the histogram's budget share for
the corpus's size. The suggestion is shown to the custodian only; if they adopt it, those
parameters (which reflect the corpus's order of magnitude) appear in the certificate like any
other parameter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from core.methods.dp_synrag.release.budget import default_fractions, plan_dp_synrag
from core.methods.dp_synrag.release.clusters import CANDIDATES_PER_CLUSTER, co_keyword_level
from core.methods.dp_synrag.release.plan import DPSynRAGPlan
from core.methods.dp_synrag.shape.adaptive import with_size
from core.methods.dp_synrag.shape.allocation import automatic_total
from core.privacy.forecast import TopicForecast, forecast_topics, significance_threshold
from core.specs.runspec import DocumentSpec, DPSynRAGSpec
from core.specs.dp_synrag import AUTOMATIC_DOCUMENTS, MAX_DOCUMENTS

WEAK_CONSENSUS_NATS = 1.0
GOOD_CONSENSUS_NATS = 2.0
MAX_HIST_FRACTION = 0.5
EPSILON_LADDER = (1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 15.0, 20.0)  # the ε values a "raise ε to …" advice names
ADVISED_HIST_FRACTION = 0.4  # the share for finding topics that the advice tries


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
    forecast: TopicForecast | None = None  # expected topics of this plan (on screen only)
    advice: tuple[str, ...] = ()  # what would help when the forecast is about 0 topics


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
    spec: DPSynRAGSpec, epsilon: float, delta: float, n_units: int, vocab_size: int, conversion: str = "tight",
    document: DocumentSpec | None = None,
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
    probe = plan_dp_synrag(replace(spec, k=k, R=R), epsilon, delta, conversion, document)
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
        shorter = replace(tuned, T=t)
        return consensus_nats(shorter, plan_dp_synrag(shorter, epsilon, delta, conversion, document))

    while T > 24 and strength(T) < GOOD_CONSENSUS_NATS:
        T -= 2
    return replace(tuned, T=T)


def topic_forecast(
    spec: DPSynRAGSpec, epsilon: float, delta: float, n_units: int, vocab_size: int, conversion: str = "tight",
    document: DocumentSpec | None = None,
) -> TopicForecast:
    """Expected topics of this plan (``core.privacy.forecast``) from its public noise and the size order."""
    plan = plan_dp_synrag(spec, epsilon, delta, conversion, document)
    return forecast_topics(n_units, spec.R, plan.sigma_h, significance_threshold(plan.sigma_h, vocab_size),
                           plan.sigma_c, co_keyword_support(spec, plan), documents_asked(spec, n_units),
                           capped=spec.documents_setting == AUTOMATIC_DOCUMENTS)


def documents_asked(spec: DPSynRAGSpec, n_units: int) -> int:
    """The documents ``[dp_synrag] documents`` asks for (0: one per topic found), with -1 and -2 (automatic) read
    on screen from the public bound or the custodian's own count (the run reads its DP size count; docs/method.md
    §6.2). Automatic without the public writer is one per topic; its "at least one per topic" is the run's."""
    if spec.documents_setting >= 0:
        return min(spec.documents_setting, MAX_DOCUMENTS)
    if spec.documents_setting == AUTOMATIC_DOCUMENTS:
        return automatic_total(spec.size_bound or n_units, 0)
    return min(max(int(spec.size_bound or n_units), 1), MAX_DOCUMENTS)


def _topics(x: float) -> str:
    return f"about {x:.0f} topic{'' if round(x) == 1 else 's'}" if x >= 1 else f"about {x:.1f} topics"


def spend_advice(
    spec: DPSynRAGSpec, epsilon: float, delta: float, n_units: int, vocab_size: int, conversion: str = "tight",
    document: DocumentSpec | None = None,
) -> list[str]:
    """Plain-words changes that would make topics expected: raise ε, a larger share for finding topics,
    the suggested settings, more units. Each names the expected topics it would give."""
    def expected(s: DPSynRAGSpec, eps: float = epsilon) -> float:
        return topic_forecast(s, eps, delta, n_units, vocab_size, conversion, document).expected_topics

    advice = []
    higher = next((e for e in EPSILON_LADDER if e > epsilon and expected(spec, e) >= 1.0), None)
    if higher is not None:
        advice.append(f"Raise ε to {higher:g} ({_topics(expected(spec, higher))} expected).")
    else:
        advice.append(f"Raising ε (even to {EPSILON_LADDER[-1]:g}) is not enough for a corpus of this size.")
    if plan_dp_synrag(spec, epsilon, delta, conversion, document).hist_fraction < ADVISED_HIST_FRACTION:
        shares = replace(spec, hist_fraction=ADVISED_HIST_FRACTION,
                         cluster_keywords_fraction=spec.cluster_keywords_fraction or ADVISED_HIST_FRACTION / 2)
        advice.append(f"Give finding topics {100 * ADVISED_HIST_FRACTION:.0f}% of the budget instead of writing text "
                      f"({_topics(expected(shares))} expected at this ε).")
    better = suggest(spec, epsilon, delta, n_units, vocab_size, conversion, document)
    advice.append(f"Use fewer, larger topics as suggested: {suggestion_words(better)} "
                  f"({_topics(expected(better))} expected).")
    need = topic_forecast(spec, epsilon, delta, n_units, vocab_size, conversion, document).units_for_one_topic
    advice.append(f"Add documents: with about {need} units or more the commonest topic is expected to be found "
                  "at these settings.")
    return advice


def suggestion_words(better: DPSynRAGSpec) -> str:
    """The suggested settings in words (no symbols): the Task page's and the Budget page's names for R, k, L
    and the share for finding topics."""
    return (f"at most {better.R} synthetic documents, each drawn from about {better.k} private documents, "
            f"each person or document counted in at most {better.L} topics, and "
            f"{100 * better.hist_fraction:.0f}% of the budget for finding topics")


def forecast_warning(forecast: TopicForecast, epsilon: float) -> str:
    """The plain-words warning when a plan is expected to release about 0 topics (a share over 100 % is
    worded as a count: 'more than the 40 units of this corpus')."""
    return (f"About {forecast.expected_topics:.1f} topics are expected to be found: a topic needs about "
            f"{forecast.min_topic_support:.0f} units sharing its word "
            f"({_share(forecast.min_topic_support, forecast.n_units)}), and even the "
            f"commonest topic of a typical collection is shared by about a quarter of it. This run would spend "
            f"ε = {epsilon:g} and is predicted to fall below the public-only baseline (a public model writing from "
            "the task alone, which costs nothing). It needs an explicit 'spend anyway'.")
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


def support_warnings(spec: DPSynRAGSpec, plan: DPSynRAGPlan, strength: float, support: float,
                     n_units: int) -> list[str]:
    """The guidance's warnings on what the plan can carry: the private rows' consensus, and the units a topic, a
    topic's description and a phrase need."""
    warnings: list[str] = []
    if plan.token_stage and strength < WEAK_CONSENSUS_NATS:
        warnings.append(
            f"The private documents will barely steer the wording: even when all {spec.k} documents of a topic "
            f"agree on a word, they make it at most {math.exp(strength):.1f} times more likely than the public "
            "model alone would. The synthetic text will mostly read like the "
            "public model's. What to do: raise ε, write fewer tokens per document, or use more documents per topic."
        )
    if support > n_units / 10:
        warnings.append(topic_support_words(support, n_units))
    co_support = co_keyword_support(spec, plan)
    if co_support > n_units / 10:
        warnings.append(
            f"A topic is described by extra words only when about {co_support:.0f} of its units use them "
            f"({_share(co_support, n_units)}). What to do: raise ε, count each person or document in fewer "
            "topics or describe each topic with fewer words, or raise the budget share for describing topics "
            "(under Advanced)."
        )
    phrases_needed = phrase_support(plan)
    if phrases_needed > n_units / 10:
        warnings.append(
            f"A phrase of the corpus can become a topic name only when about {phrases_needed:.0f} units use it "
            f"({_share(phrases_needed, n_units)}). What to do: raise ε or the budget share for finding phrases "
            "(under Advanced), let each document propose fewer phrases, or pick a public word list that holds "
            "your topics and switch phrase discovery off (a list costs no budget)."
        )
    return warnings


def guide(
    spec: DPSynRAGSpec, epsilon: float, delta: float, n_units: int, vocab_size: int, conversion: str = "tight",
    document: DocumentSpec | None = None,
) -> Guidance:
    """The guidance for ``spec``, with what it leaves to the adaptive default chosen for about ``n_units`` units
    (on screen only: the run chooses from its DP size count)."""
    plan = plan_dp_synrag(spec, epsilon, delta, conversion, document)
    spec = with_size(spec, n_units, plan.sigma_h, vocab_size)
    strength = consensus_nats(spec, plan)
    support = significance_threshold(plan.sigma_h, vocab_size)
    better = suggest(spec, epsilon, delta, n_units, vocab_size, conversion, document)
    better_plan = plan_dp_synrag(better, epsilon, delta, conversion, document)
    co_support, phrases_needed = co_keyword_support(spec, plan), phrase_support(plan)
    warnings = support_warnings(spec, plan, strength, support, n_units)
    forecast = topic_forecast(spec, epsilon, delta, n_units, vocab_size, conversion, document)
    advice: tuple[str, ...] = ()
    if forecast.about_zero:
        warnings.insert(0, forecast_warning(forecast, epsilon))
        advice = tuple(spend_advice(spec, epsilon, delta, n_units, vocab_size, conversion, document))
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
        forecast=forecast,
        advice=advice,
    )
