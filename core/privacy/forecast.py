"""Never spend for nothing (docs/method.md §1.9): how many topics a DP-SynRAG plan can be expected to release.

A keyword becomes a topic only when its noisy count clears the significance threshold, so a topic
needs about ``min_topic_support`` units that share its word. Whether a corpus has such topics depends
on the private data, which the forecast must not read. It uses instead a fixed, **public prior** on
how topics are shared in a collection of documents (Zipf's law for topic sizes):

    the commonest topic word is held by about ``TOP_TOPIC_SHARE`` of the units, the j-th commonest by
    about 1/j^``TOPIC_SHARE_EXPONENT`` of that,

and the plan's public noise (σ_h, the threshold, R; σ_c and its threshold for the co-keywords) with the
corpus-size order the plan already uses on screen. Topic j then clears with probability
Φ((n_j − threshold)/σ_h), n_j = n·TOP_TOPIC_SHARE/j^a, and the expected number of topics is the sum over
j = 1..R. A topic is *described* when at least one co-keyword clears too (a co-keyword shared by about
``CO_KEYWORD_SHARE`` of its cluster). When the expected number is about 0, the run would spend its
budget and release nothing beyond a public model's text: the planner says so and a run needs consent.

The prior is a rough public assumption, not a fact about any corpus. For scale: among the vocabulary
keywords of three public corpora (the shipped demo clinic notes and MovieLens users, 600 news leads of
``privet evaluate --dataset news``) the commonest is held by 29 %, 51 % and 6 % of the units, the 12th by
14 %, 10 % and 1.5 %. Hence "about": the forecast tells a plan that cannot work (200 units where a topic
needs 124) from one that may, and the custodian can always spend anyway.

The forecast is a screen-side aid: it reads counts only, never text, and never enters a certificate.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

TOP_TOPIC_SHARE = 0.25  # public prior: the commonest topic word is held by about a quarter of the units
TOPIC_SHARE_EXPONENT = 0.5  # public prior: the j-th commonest topic is held by TOP_TOPIC_SHARE / j^0.5
# The range a forecast states (documents, time) spans two further public priors, the ends of the three public
# corpora measured above: few shared topics (news-like: the commonest held by 10 %, the j-th by 10 %/j^0.55) and
# many (templated notes or profiles: the commonest by half, the j-th by 50 %/j^0.3).
FEW_TOPICS_PRIOR = (0.10, 0.55)
MANY_TOPICS_PRIOR = (0.50, 0.30)
CO_KEYWORD_SHARE = 0.5  # public prior: a topic's commonest co-keyword is shared by about half of its cluster
FEWEST_TOPICS = 10  # the shape writes at least this many topics when as many clear (docs/method.md §6.2)
# The share of a run's documents the near-duplicate filter and the self-filter may drop after the topics are chosen:
# the range's low end leaves room for it (in seven runs of docs/bench/estimate.md they dropped 0 or 1 of 10-21).
FILTER_DROP_SHARE = 0.1
ABOUT_ZERO_TOPICS = 0.5  # fewer expected topics than this: "about 0", the run needs consent
# The automatic number of documents is capped by the units the topics found stand for (docs/method.md §6.2), which
# no plan sees: measured, the runs of docs/results.md and history.md (round 4, sessions 10-12: clinic, news,
# MovieLens, 600 health tweets) kept 148 to 200 of the 200 planned, so the range's low end is 0.7 of it, or less where
# the few-topics prior expects the topics found to stand for fewer units than that (a small corpus).
AUTOMATIC_LOW_SHARE = 0.7


def significance_threshold(sigma_h: float, vocab_size: int, margin_sigmas: float = 1.5) -> float:
    """A noisy count that pure noise rarely reaches anywhere in V: the typical maximum of |V|
    draws of N(0, sigma_h^2), sigma_h * sqrt(2 ln |V|), plus ``margin_sigmas`` * sigma_h.
    Public: it depends on sigma_h and |V| only."""
    return sigma_h * (math.sqrt(2.0 * math.log(max(vocab_size, 2))) + margin_sigmas)


def _phi(x: float) -> float:
    """Standard normal CDF."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


@dataclass(frozen=True)
class TopicForecast:
    """What a plan can release, by the public prior above (on screen only)."""

    n_units: int  # the corpus-size order the plan uses (shown on screen only)
    R: int
    min_topic_support: float  # units that must share a word for it to become a topic
    min_co_keyword_support: float  # units of a cluster that must share a co-keyword (0: no co-keyword stage)
    expected_topics: float  # of at most R
    expected_described_topics: float  # topics whose co-keywords clear too (= expected_topics without that stage)
    commonest_topic_units: float  # the prior's commonest topic: TOP_TOPIC_SHARE · n units
    fewest_topics: float = 0.0  # expected topics under FEW_TOPICS_PRIOR (the range's low end)
    most_topics: float = 0.0  # expected topics under MANY_TOPICS_PRIOR (the range's high end)
    documents: int = 0  # the documents asked for ([dp_synrag] documents, resolved; 0: one per topic found)
    capped: bool = False  # the automatic number: at most ``documents``, fewer when the topics stand for fewer units
    fewest_units: float | None = None  # units the topics found stand for under FEW_TOPICS_PRIOR (None: not forecast)

    @property
    def documents_range(self) -> tuple[int, int]:
        """How many documents the run is expected to write, as a range: one per topic found, between the two
        public priors' expected topics (never above R); or, when N documents are asked for, N wherever a prior
        expects a topic at all (never more than asked). The low end leaves room for the few the near-duplicate filter
        and the self-filter drop (``FILTER_DROP_SHARE``), and for the automatic number's cap by the units the topics
        stand for (``AUTOMATIC_LOW_SHARE``, measured, or the units the few-topics prior's topics stand for when fewer:
        on 200 units that prior expects less than one topic, yet the one it expects would be written about 20 times)."""
        if self.documents > 0:
            if self.capped and self.fewest_units is not None:
                low = math.floor(min(AUTOMATIC_LOW_SHARE * self.documents,
                                     (1.0 - FILTER_DROP_SHARE) * self.fewest_units))
            else:
                share = AUTOMATIC_LOW_SHARE if self.capped else 1.0 - FILTER_DROP_SHARE
                low = math.floor(share * self.documents) if math.floor(self.fewest_topics) >= 1 else 0
            return low, self.documents if math.ceil(self.most_topics) >= 1 else low
        held = min(math.floor(self.fewest_topics), FEWEST_TOPICS, self.R)  # held topics only, down to the floor
        low = held - math.ceil(FILTER_DROP_SHARE * held)
        return low, max(held, min(math.ceil(self.most_topics), self.R))

    def documents_words(self) -> str:
        """The documents range in words, as ``privet plan`` and the wizard's Confirm page both say it."""
        low, high = self.documents_range
        span = str(high) if low == high else f"{low} to {high}"
        how = ("shared among the topics found in proportion to how often each is mentioned" if self.documents
               else "one per topic found")
        cap = "; fewer when the topics found stand for fewer units" if self.capped else ""
        return f"{span} ({how}{cap}; the junk rule and the self-filter may drop some)"

    @property
    def likely_documents(self) -> int:
        """The documents the time estimate prices: N when N are asked for; else the shape's floor of held topics or
        the range's low end, whichever is more, never above the high end. A run writes its held topics (§6.2); on the clinic file
        and news of docs/bench/estimate.md that was the floor, far below a templated corpus's high end."""
        low, high = self.documents_range
        return high if self.documents > 0 else min(high, max(low, FEWEST_TOPICS))

    @property
    def about_zero(self) -> bool:
        return self.expected_topics < ABOUT_ZERO_TOPICS

    @property
    def support_share(self) -> float:
        """The units a topic needs as a share of the corpus (on screen only)."""
        return self.min_topic_support / max(self.n_units, 1)

    @property
    def units_for_one_topic(self) -> int:
        """Units a corpus needs (same plan) before its commonest topic is expected to clear the threshold."""
        return math.ceil(self.min_topic_support / TOP_TOPIC_SHARE)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "about_zero": self.about_zero, "units_for_one_topic": self.units_for_one_topic,
                "support_share": self.support_share}


def _clears(held: float, support: float, sigma: float) -> float:
    return _phi((held - support) / sigma) if sigma > 0 else float(held >= support)


def expected_topics(n_units: int, R: int, sigma_h: float, min_topic_support: float,
                    prior: tuple[float, float] = (TOP_TOPIC_SHARE, TOPIC_SHARE_EXPONENT)) -> float:
    """Expected topics of at most R under a prior (top share, exponent) on topic sizes."""
    top, exponent = prior
    return sum(_clears(max(int(n_units), 0) * top / j**exponent, min_topic_support, sigma_h)
               for j in range(1, max(int(R), 0) + 1))


def expected_units(n_units: int, R: int, sigma_h: float, min_topic_support: float,
                   prior: tuple[float, float] = FEW_TOPICS_PRIOR) -> float:
    """Units the topics found are expected to stand for under a prior: each of the R commonest topics' units,
    weighted by the chance that it clears (the automatic number of documents is capped by this sum, §6.2)."""
    top, exponent = prior
    n = max(int(n_units), 0)
    sizes = [n * top / float(j) ** exponent for j in range(1, max(int(R), 0) + 1)]
    return math.fsum(size * _clears(size, min_topic_support, sigma_h) for size in sizes)


def forecast_topics(n_units: int, R: int, sigma_h: float, min_topic_support: float, sigma_c: float = math.inf,
                    min_co_keyword_support: float = 0.0, documents: int = 0, capped: bool = False) -> TopicForecast:
    """Expected topics (and described topics) of a plan, from public quantities and the size order n;
    ``documents``: the documents asked for (0: one per topic found); ``capped``: the automatic number (at most that)."""
    n = max(int(n_units), 0)
    expected = described = 0.0
    for j in range(1, max(int(R), 0) + 1):
        held = n * TOP_TOPIC_SHARE / j**TOPIC_SHARE_EXPONENT
        clears = _clears(held, min_topic_support, sigma_h)
        expected += clears
        if min_co_keyword_support > 0 and math.isfinite(sigma_c):
            described += clears * _phi((CO_KEYWORD_SHARE * held - min_co_keyword_support) / sigma_c)
        else:
            described += clears
    return TopicForecast(
        n_units=n,
        R=int(R),
        min_topic_support=min_topic_support,
        min_co_keyword_support=min_co_keyword_support,
        expected_topics=expected,
        expected_described_topics=described,
        commonest_topic_units=n * TOP_TOPIC_SHARE,
        fewest_topics=expected_topics(n, R, sigma_h, min_topic_support, FEW_TOPICS_PRIOR),
        most_topics=expected_topics(n, R, sigma_h, min_topic_support, MANY_TOPICS_PRIOR),
        documents=max(int(documents), 0),
        capped=capped and documents > 0,
        fewest_units=expected_units(n, R, sigma_h, min_topic_support, FEW_TOPICS_PRIOR),
    )
