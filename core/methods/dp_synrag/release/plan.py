"""DP-SynRAG's plan (SPEC §2): turn a target (ε, δ) into the noise parameters of each of its stages.

DP-SynRAG (SPEC §2) spends its budget in up to six stages (eight with the DP size count and the DP length
statistic of docs/method.md §2.7 and §6.2, each a small share drawn first):

    total ρ = ρ_n + ρ_len + ρ_p + ρ_hist + ρ_ck + L · (ρ_μ + ε_θ²/8 + T·(c/τ)²/2),  plus δ_p

* ``phrases`` — DP phrase discovery (docs/method.md §2.0, ``core.privacy.set_union``): each unit
  proposes ≤ K_p phrases, noise σ_p on the non-zero counts, release above τ_p: ρ_p = K_p/(2σ_p²) and
  δ_p = K_p·Φ̄((τ_p − 1)/σ_p). The target δ is split: δ_p = ``phrases_delta_fraction``·δ goes to the
  threshold, and the zCDP total is converted at δ − δ_p (``approx_eps_to_rho``);
* ``histogram`` — Gaussian noise σ_h on the keyword histogram (L2 sensitivity √K): ρ_hist = K/(2σ_h²);
* ``cluster_keywords`` — Gaussian noise σ_c on every cluster's co-keyword counts (docs/method.md §2.2b):
  each unit votes for at most M words in each of its ≤ L clusters, so the whole count matrix has L2
  sensitivity √(L·M) and ρ_ck = L·M/(2σ_c²), one Gaussian mechanism for all clusters at once;
* ``retrieval_mean`` — Gaussian noise σ_μ on each cluster's embedding sum (Δ = 1): ρ_μ = 1/(2σ_μ²);
* ``retrieval_threshold`` — the threshold exponential mechanism with ε_θ: ρ_θ = ε_θ²/8;
* ``private_prediction`` — T tokens per cluster, each (2c/τ)-bounded-range: ρ = (c/τ)²/2 per token.

The last three run on every cluster; a unit lies in at most L clusters and cluster membership depends
only on the unit and the released noisy histogram, so overlapping parallel composition charges them L
times (see accountant.py).

How (ε, δ) is split across the stages is ``budget.py`` (:func:`budget.plan_dp_synrag`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from core.privacy.accountant import Accountant
from core.privacy.plan_base import (
    STAGE_CLUSTER_KEYWORDS,
    STAGE_FORM_OPENERS,
    STAGE_FORM_SKELETONS,
    STAGE_FORM_VALUES,
    STAGE_HISTOGRAM,
    STAGE_MEAN,
    STAGE_PHRASES,
    STAGE_SIZE,
    STAGE_THRESHOLD,
    STAGE_TOKENS,
)
from core.privacy.release import BOUNDED_RANGE, GAUSSIAN, SPARSE_HISTOGRAM, Release, accountant_of, find
from core.privacy.release import per_stage as stage_totals

STAGE_LENGTH = "length"

# Every stage released whole and the checkpoint its Release names (``Release.key``: once saved, a resume reuses it and
# charges nothing). The noisy centres and thresholds of all clusters are released together, under the one name old
# runs used; the token stage saves group by group and is not listed (it is never finished before the run is).
CHECKPOINT_RETRIEVAL = "retrieval"
WHOLE_STAGES = {
    STAGE_SIZE: STAGE_SIZE,
    STAGE_LENGTH: STAGE_LENGTH,
    STAGE_PHRASES: STAGE_PHRASES,
    STAGE_FORM_OPENERS: STAGE_FORM_OPENERS,
    STAGE_FORM_SKELETONS: STAGE_FORM_SKELETONS,
    STAGE_FORM_VALUES: STAGE_FORM_VALUES,
    STAGE_HISTOGRAM: STAGE_HISTOGRAM,
    STAGE_CLUSTER_KEYWORDS: STAGE_CLUSTER_KEYWORDS,
    STAGE_MEAN: CHECKPOINT_RETRIEVAL,
    STAGE_THRESHOLD: CHECKPOINT_RETRIEVAL,
}


@dataclass(frozen=True)
class DPSynRAGPlan:
    """Derived noise parameters of one DP-SynRAG run; per-cluster values are for one cluster."""

    epsilon: float
    delta: float
    conversion: str
    K: int
    L: int
    T: int
    tau: float
    rho_total: float
    hist_fraction: float
    mu_fraction: float
    theta_fraction: float
    tokens_fraction: float
    rho_hist: float
    sigma_h: float  # noise on each histogram count (L2 sensitivity √K)
    M: int  # co-keywords per unit and cluster (0: the stage does not run)
    cluster_keywords_fraction: float
    rho_cluster_keywords: float  # all clusters together
    sigma_c: float  # noise on each co-keyword count (L2 sensitivity √(L·M))
    rho_mu: float  # per cluster
    sigma_mu: float  # noise on each coordinate of a cluster's embedding sum (Δ = 1)
    eps_theta: float  # threshold EM parameter, per cluster
    rho_theta: float  # = ε_θ²/8, per cluster
    rho_tokens_per_cluster: float  # = T·(c/τ)²/2
    rho_per_token: float  # = (c/τ)²/2
    c_over_tau: float
    c: float  # logit clip bound for the given τ
    rho_cluster: float  # = ρ_θ + ρ_μ + ρ_tokens_per_cluster
    epsilon_tight: float  # ε(δ) of rho_total, tight conversion
    epsilon_loose: float  # ε(δ) of rho_total, the seed's conversion
    K_p: int = 0  # phrases per unit (0: no phrase discovery)
    phrases_fraction: float = 0.0
    rho_phrases: float = 0.0  # = K_p/(2σ_p²)
    sigma_p: float = math.inf  # noise on each non-zero phrase count (L2 sensitivity √K_p on the common support)
    tau_p: float = math.inf  # release threshold of a noisy phrase count
    delta_phrases: float = 0.0  # δ_p = K_p·Φ̄((τ_p − 1)/σ_p): a phrase of one unit alone is released
    delta_conversion: float = 0.0  # δ − δ_p: the δ at which the zCDP total is converted
    size_fraction: float = 0.0  # share of ρ for the DP size count (0: the stage does not run)
    rho_size: float = 0.0  # = 1/(2σ_n²)
    sigma_size: float = math.inf  # noise on the count of units (sensitivity 1)
    length_fraction: float = 0.0  # share of ρ for the DP length statistic (0: the stage does not run)
    rho_length: float = 0.0  # = ε_len²/8
    epsilon_length: float = 0.0  # the median's exponential mechanism (utility sensitivity 1)
    forms_fraction: float = 0.0  # share of ρ for structure discovery (0: the stage does not run)
    m_o: int = 0  # openers per unit
    m_s: int = 0  # skeletons per unit
    rho_openers: float = 0.0  # = m_o/(2σ_o²)
    sigma_o: float = math.inf
    tau_o: float = math.inf
    delta_openers: float = 0.0
    rho_skeletons: float = 0.0  # = m_s/(2σ_s²)
    sigma_s: float = math.inf
    tau_s: float = math.inf
    delta_skeletons: float = 0.0
    m_v: int = 0  # slot values per unit (0: none released)
    rho_values: float = 0.0  # = m_v/(2σ_v²)
    sigma_v: float = math.inf
    tau_v: float = math.inf
    delta_values: float = 0.0

    @property
    def discovers_forms(self) -> bool:
        return self.m_s > 0

    @property
    def delta_spent(self) -> float:
        """The part of δ spent by the (ε, δ) stages (phrase and structure discovery); the rest is the conversion's."""
        return self.delta_phrases + self.delta_forms

    @property
    def rho_forms(self) -> float:
        """Structure discovery's ρ: its openers', skeletons' and slot values' releases."""
        return self.rho_openers + self.rho_skeletons + self.rho_values

    @property
    def delta_forms(self) -> float:
        """Structure discovery's part of δ (a wording, skeleton or value of one unit alone is released)."""
        return self.delta_openers + self.delta_skeletons + self.delta_values

    @property
    def discovers_phrases(self) -> bool:
        return self.K_p > 0

    @property
    def counts_size(self) -> bool:
        """Whether the run first releases a DP count of its units (the adaptive default's size)."""
        return self.rho_size > 0.0

    @property
    def releases_length(self) -> bool:
        """Whether the run releases a DP length statistic (the median words per document) after the size count."""
        return self.rho_length > 0.0

    @property
    def token_epsilon(self) -> float:
        """Each token is an exponential mechanism with ε = 2c/τ (Δ = c, sampling ∝ exp(z/τ))."""
        return 2.0 * self.c_over_tau

    @property
    def token_stage(self) -> bool:
        """Whether private prediction runs (``[dp_synrag] text`` = "private" or "realised+private")."""
        return self.tokens_fraction > 0.0

    @property
    def refine(self) -> bool:
        """Whether the retrieval-refinement stages (noisy centre, threshold) run at all."""
        return self.rho_mu > 0.0

    def releases(self) -> list[Release]:
        """The plan as its DP stages, in the order a run draws them (cluster stages already times L)."""
        stages = [self._size()] if self.counts_size else []
        if self.releases_length:
            stages.append(self._length())
        if self.discovers_phrases:
            stages.append(self._phrases())
        if self.discovers_forms:
            stages += list(self.form_releases())
        stages.append(
            Release(
                STAGE_HISTOGRAM, GAUSSIAN, "noisy keyword histogram",
                f"Gaussian noise on the keyword histogram, sigma_h={self.sigma_h:.4g}",
                sensitivity=math.sqrt(self.K), sigma=self.sigma_h,
            )
        )
        if self.M:
            stages.append(
                Release(
                    STAGE_CLUSTER_KEYWORDS, GAUSSIAN,
                    "noisy co-keyword counts of every cluster (each unit: <= M words in each of <= L clusters)",
                    f"Gaussian noise on every cluster's co-keyword counts, sigma_c={self.sigma_c:.4g}, "
                    f"<= M={self.M} words per unit in each of <= L={self.L} clusters",
                    sensitivity=math.sqrt(self.L * self.M), sigma=self.sigma_c,
                )
            )
        if self.refine:
            stages += [
                Release(
                    STAGE_MEAN, GAUSSIAN, "noisy embedding sum per cluster",
                    f"Noisy cluster embedding sums, sigma_mu={self.sigma_mu:.4g}",
                    sensitivity=1.0, sigma=self.sigma_mu, parallel=self.L, checkpoint=WHOLE_STAGES[STAGE_MEAN],
                ),
                Release(
                    STAGE_THRESHOLD, BOUNDED_RANGE, "similarity threshold per cluster",
                    f"Cluster similarity thresholds, eps_theta={self.eps_theta:.4g}",
                    epsilon=self.eps_theta, parallel=self.L, checkpoint=WHOLE_STAGES[STAGE_THRESHOLD],
                ),
            ]
        if self.token_stage:
            stages.append(
                Release(
                    STAGE_TOKENS, BOUNDED_RANGE, "tokens sampled per cluster",
                    f"Private prediction: {self.T} tokens per group, c/tau={self.c / self.tau:.4g}",
                    epsilon=self.token_epsilon, count=self.T, parallel=self.L, clip=self.c,
                )
            )
        return stages

    def _size(self) -> Release:
        return Release(
            STAGE_SIZE, GAUSSIAN,
            "noisy count of the units (people or documents) in the corpus, from which the adaptive default "
            "chose how many topics to look for",
            f"DP size count: Gaussian noise sigma_n={self.sigma_size:.4g} on the number of units",
            sensitivity=1.0, sigma=self.sigma_size,
        )

    def _length(self) -> Release:
        return Release(
            STAGE_LENGTH, BOUNDED_RANGE,
            "noisy median of the units' words per document (clipped to a public range), which the synthetic "
            "documents follow",
            f"DP length statistic: exponential-mechanism median, eps_len={self.epsilon_length:.4g}",
            epsilon=self.epsilon_length,
        )

    def _phrases(self) -> Release:
        return Release(
            STAGE_PHRASES, SPARSE_HISTOGRAM,
            f"noisy phrase counts released above a threshold (each unit: <= K_p={self.K_p} phrases of its own "
            f"text); besides rho it spends delta_p={self.delta_phrases:.3g} of delta, the largest chance that "
            "a phrase of one unit alone is released",
            f"DP phrase discovery: Gaussian noise sigma_p={self.sigma_p:.4g} on each phrase count, <= K_p={self.K_p} "
            f"phrases per unit, released above tau_p={self.tau_p:.4g} (delta_p={self.delta_phrases:.3g})",
            sensitivity=math.sqrt(self.K_p), sigma=self.sigma_p, delta=self.delta_phrases, threshold=self.tau_p,
            items_per_unit=self.K_p,
        )

    def form_releases(self) -> tuple[Release, ...]:
        """Structure discovery's DP set unions: the clause openers, the skeletons, then the slots' short values
        (docs/method.md §2.0b)."""
        parts = 3 if self.m_v else 2
        stages = (
            _set_union(STAGE_FORM_OPENERS, (f"1 of {parts}", "clause openers", "openers of its own text, never past a "
                       "name, number or rare word", "o"), self.m_o, self.sigma_o, self.tau_o, self.delta_openers),
            _set_union(STAGE_FORM_SKELETONS, (f"2 of {parts}", "document skeletons (released openers and slots only)",
                       "skeletons", "s"), self.m_s, self.sigma_s, self.tau_s, self.delta_skeletons),
        )
        if not self.m_v:
            return stages
        return (*stages, _set_union(STAGE_FORM_VALUES, ("3 of 3", "short slot values (a released skeleton's slot "
                "and its words, no name and no digit)", "values of its own documents' slots", "v"),
                self.m_v, self.sigma_v, self.tau_v, self.delta_values))

    def release(self, stage: str) -> Release:
        return find(self.releases(), stage)

    def per_stage(self) -> dict[str, float]:
        """Total ρ per stage (cluster stages already multiplied by L)."""
        return stage_totals(self.releases())

    def accountant(self) -> Accountant:
        """The events a run with this plan records, in stage order."""
        return accountant_of(self.releases())

    def to_dict(self) -> dict[str, Any]:
        d = {k: (None if isinstance(v, float) and math.isinf(v) else v) for k, v in asdict(self).items()}
        d["token_epsilon"] = self.token_epsilon
        d["per_stage"] = self.per_stage()
        return d


def _set_union(stage: str, words: tuple[str, str, str, str], m: int, sigma: float, tau: float, delta: float) -> Release:
    """One of structure discovery's releases: a Gaussian sparse histogram of <= m items per unit. ``words``: the
    certificate's (which part, its items, what a unit proposes, the subscript of its parameters)."""
    part, items, per_unit, sub = words
    return Release(
        stage, SPARSE_HISTOGRAM,
        f"the corpus's own forms, released under DP ({part}): noisy counts of {items} released above a threshold "
        f"(each unit: <= {m} {per_unit}); besides rho it spends delta_{sub}={delta:.3g} of delta",
        f"Structure discovery, {items.split(' (')[0]}: Gaussian noise sigma_{sub}={sigma:.4g}, <= {m} per unit, "
        f"released above tau_{sub}={tau:.4g} (delta_{sub}={delta:.3g})",
        sensitivity=math.sqrt(m), sigma=sigma, delta=delta, threshold=tau, items_per_unit=m,
    )


