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

Budget split. The seed's defaults (ε = 10, δ = 1e-3, K = 10, L = 5, T = 70: ρ_hist = 0.1,
ρ_μ = 0.009, ε_θ = 0.4) are kept as *shares of the total ρ*: the histogram gets 0.1/ρ_ref of it,
the cluster means L·0.009/ρ_ref, the thresholds L·0.02/ρ_ref (with L = 5 and ρ_ref the ρ of
(10, 1e-3) under the chosen conversion), and private prediction the rest. So the reference run
reproduces the seed exactly (c/τ = 0.1162 tight, 0.1057 loose) and any ε plans: at ε = 1 the fixed
ρ_hist = 0.1 alone would exceed the whole budget, whereas a share never does. ``hist_fraction``,
``mu_fraction`` and ``theta_fraction`` in the run spec, when non-zero, replace these shares (each is the
share of the total ρ spent on that stage over all clusters).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from core.privacy.accountant import Accountant
from core.privacy.conversion import approx_eps_to_rho, approx_rho_to_eps, eps_to_rho
from core.privacy.plan_base import (
    STAGE_CLUSTER_KEYWORDS,
    STAGE_FORM_OPENERS,
    STAGE_FORM_SKELETONS,
    STAGE_HISTOGRAM,
    STAGE_MEAN,
    STAGE_PHRASES,
    STAGE_SIZE,
    STAGE_THRESHOLD,
    STAGE_TOKENS,
    _check_privacy_target,
    _reject,
)
from core.privacy.release import BOUNDED_RANGE, GAUSSIAN, SPARSE_HISTOGRAM, Release, accountant_of, find
from core.privacy.release import per_stage as stage_totals
from core.privacy.set_union import release_threshold
from core.specs.runspec import DPSynRAGSpec
from core.specs.rules import check_section

REFERENCE_EPSILON = 10.0

REFERENCE_DELTA = 1e-3

REFERENCE_L = 5

REFERENCE_RHO_HIST = 0.1

REFERENCE_RHO_MU = 0.009

REFERENCE_EPS_THETA = 0.4

DEFAULT_CLUSTER_KEYWORDS_FRACTION = 0.2  # share of ρ for the co-keyword counts when the spec says 0

DEFAULT_PHRASES_FRACTION = 0.1  # share of ρ for DP phrase discovery when the spec says 0

DEFAULT_PHRASES_DELTA_FRACTION = 0.5  # share of δ for releasing a phrase of one unit when the spec says 0

# The adaptive default's DP size count (docs/method.md §2.7): 2 % of ρ. At ε = 10 (δ = 1e-6) its noise is σ ≈ 4
# units, at ε = 1 about 37: the settings it chooses (R, k) change little within a few σ of the true size.
DEFAULT_SIZE_FRACTION = 0.02

# The DP length statistic (docs/method.md §6.2, ``[dp_synrag] length = "dp"``): a noisy median of the units' words per
# document, 2 % of ρ, by the exponential mechanism over a public range (``core.privacy.median``). At ε = 10 (δ = 1e-6)
# its ε is about 0.49 (0.22 at ε = 4): the median lands within a few units' ranks of the true one for a few hundred units.
DEFAULT_LENGTH_FRACTION = 0.02
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
    STAGE_HISTOGRAM: STAGE_HISTOGRAM,
    STAGE_CLUSTER_KEYWORDS: STAGE_CLUSTER_KEYWORDS,
    STAGE_MEAN: CHECKPOINT_RETRIEVAL,
    STAGE_THRESHOLD: CHECKPOINT_RETRIEVAL,
}

# Without a token stage (text = "realised" or "topic_line", the default) the whole budget releases topics: the
# histogram, the co-keywords and the phrases share it as 0.4 : 0.4 : 0.2 unless the spec says otherwise (then
# rescaled to 1). Round 3's ablation on the demo clinic (docs/results/history.md "Round 3: ablation") measured the
# realised writer best with the histogram and the co-keywords sharing the budget equally (0.4 / 0.4); the seed's
# split (histogram ~4 %, co-keywords 20 %) was made for a token stage that takes two thirds of ρ. Public constants.
REALISED_FRACTIONS = {"hist": 0.4, "cluster_keywords": 0.4, "phrases": 0.2, "forms": 0.35}

# Structure discovery (docs/method.md §2.0b): its two releases share its part of ρ 0.7 : 0.3 (the openers' release
# has m_o items per unit, the skeletons' m_s), and its part of δ equally. Public constants.
OPENERS_SHARE = 0.7
DEFAULT_FORMS_DELTA_FRACTION = 0.25  # δ's share for a skeleton or opener of one unit when the spec says 0



def default_fractions(conversion: str = "tight") -> tuple[float, float, float]:
    """The seed's budget split as shares of total ρ: (histogram, cluster means, thresholds)."""
    rho_ref = eps_to_rho(REFERENCE_EPSILON, REFERENCE_DELTA, conversion)
    return (
        REFERENCE_RHO_HIST / rho_ref,
        REFERENCE_L * REFERENCE_RHO_MU / rho_ref,
        REFERENCE_L * (REFERENCE_EPS_THETA**2 / 8.0) / rho_ref,
    )



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

    @property
    def discovers_forms(self) -> bool:
        return self.m_s > 0

    @property
    def delta_spent(self) -> float:
        """The part of δ spent by the (ε, δ) stages (phrase and structure discovery); the rest is the conversion's."""
        return self.delta_phrases + self.delta_openers + self.delta_skeletons

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

    def form_releases(self) -> tuple[Release, Release]:
        """Structure discovery's two DP set unions: the clause openers, then the skeletons (docs/method.md §2.0b)."""
        return (
            _set_union(STAGE_FORM_OPENERS, "1 of 2", "clause openers", "openers of its own text, never past a name, "
                       "number or rare word", "o", self.m_o, self.sigma_o, self.tau_o, self.delta_openers),
            _set_union(STAGE_FORM_SKELETONS, "2 of 2", "document skeletons (released openers and slots only)",
                       "skeletons", "s", self.m_s, self.sigma_s, self.tau_s, self.delta_skeletons),
        )

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



def _set_union(stage: str, part: str, items: str, per_unit: str, sub: str, m: int, sigma: float, tau: float,
               delta: float) -> Release:
    """One of structure discovery's releases: a Gaussian sparse histogram of <= m items per unit."""
    return Release(
        stage, SPARSE_HISTOGRAM,
        f"the corpus's own forms, released under DP ({part}): noisy counts of {items} released above a threshold "
        f"(each unit: <= {m} {per_unit}); besides rho it spends delta_{sub}={delta:.3g} of delta",
        f"Structure discovery, {items.split(' (')[0]}: Gaussian noise sigma_{sub}={sigma:.4g}, <= {m} per unit, "
        f"released above tau_{sub}={tau:.4g} (delta_{sub}={delta:.3g})",
        sensitivity=math.sqrt(m), sigma=sigma, delta=delta, threshold=tau, items_per_unit=m,
    )


def _fraction(override: float, default: float) -> float:
    """A share of the budget: the spec's (its rule: strictly between 0 and 1), or the default when it says 0."""
    return float(override) if override else default



def _forms_share(spec: DPSynRAGSpec) -> float:
    """Structure discovery's share of ρ before scaling (0 when it does not run)."""
    return _fraction(spec.forms_fraction, REALISED_FRACTIONS["forms"]) if spec.discovers_forms else 0.0


def _shares(spec: DPSynRAGSpec, conversion: str) -> tuple[float, float, float, float, float, float, int, int]:
    """The shares of ρ (phrases, histogram, co-keywords, means, thresholds, tokens), M and K_p; with structure
    discovery's (``_forms_share``, scaled alike by :func:`plan_dp_synrag`) they sum to 1 − the size count's share
    (``_size_share``). Refused when the stages before the tokens leave them nothing."""
    d_hist, d_mu, d_theta = default_fractions(conversion)
    tokens = spec.token_stage
    d_ck, d_p = DEFAULT_CLUSTER_KEYWORDS_FRACTION, DEFAULT_PHRASES_FRACTION
    if not tokens:
        d_hist, d_ck, d_p = (REALISED_FRACTIONS[k] for k in ("hist", "cluster_keywords", "phrases"))
    f_hist = _fraction(spec.hist_fraction, d_hist)
    if spec.refine:
        f_mu = _fraction(spec.mu_fraction, d_mu)
        f_theta = _fraction(spec.theta_fraction, d_theta)
    else:  # no retrieval refinement: S_r = C_r, and its share goes to the tokens
        f_mu = f_theta = 0.0
    M = int(spec.cluster_keywords)
    f_ck = _fraction(spec.cluster_keywords_fraction, d_ck) if M else 0.0
    K_p = int(spec.phrases_per_unit) if spec.discover_phrases else 0
    f_p = _fraction(spec.phrases_fraction, d_p) if K_p else 0.0
    f_n = _size_share(spec) + _length_share(spec)  # the stages drawn first: the size count, the length statistic
    if not tokens:  # no private prediction: its share goes to the other stages, in proportion to theirs
        scale = (1.0 - f_n) / (f_p + f_hist + f_ck + f_mu + f_theta + _forms_share(spec))
        f_p, f_hist, f_ck, f_mu, f_theta = f_p * scale, f_hist * scale, f_ck * scale, f_mu * scale, f_theta * scale
    f_tokens = 1.0 - (f_n + f_p + f_hist + f_ck + f_mu + f_theta) if tokens else 0.0
    if tokens and not f_tokens > 0.0:
        raise _reject(
            f"The budget shares leave nothing for generating text (phrases {f_p:.3f} + histogram {f_hist:.3f} + "
            f"co-keywords {f_ck:.3f} + cluster means {f_mu:.3f} + thresholds {f_theta:.3f} ≥ 1).",
            "Lower phrases_fraction, hist_fraction, cluster_keywords_fraction, mu_fraction or theta_fraction so that "
            "they sum to well below 1.",
        )
    return f_p, f_hist, f_ck, f_mu, f_theta, f_tokens, M, K_p


def _size_share(spec: DPSynRAGSpec) -> float:
    """The DP size count's share of ρ: 0 when no setting waits for it (``DPSynRAGSpec.size_count``)."""
    return _fraction(spec.size_fraction, DEFAULT_SIZE_FRACTION) if spec.size_count else 0.0


def _length_share(spec: DPSynRAGSpec) -> float:
    """The DP length statistic's share of ρ: 0 unless the length applied is "dp" (``DPSynRAGSpec.length_setting``)."""
    return _fraction(spec.length_fraction, DEFAULT_LENGTH_FRACTION) if spec.length_setting == "dp" else 0.0


def plan_dp_synrag(spec: DPSynRAGSpec, epsilon: float, delta: float, conversion: str = "tight") -> DPSynRAGPlan:
    """Split (ε, δ) across the DP-SynRAG stages and derive σ_h, σ_μ, ε_θ and c/τ."""
    _check_privacy_target(epsilon, delta, conversion)
    check_section(spec, "dp_synrag")  # DPSynRAGSpec.RULES: K, L, T ≥ 1, τ > 0, every share strictly in (0, 1), ...

    f_p, f_hist, f_ck, f_mu, f_theta, f_tokens, M, K_p = _shares(spec, conversion)
    tokens = spec.token_stage
    K, L, T, tau = int(spec.K), spec.clusters_per_unit, int(spec.T), float(spec.tau)
    delta_p = (
        _fraction(spec.phrases_delta_fraction, DEFAULT_PHRASES_DELTA_FRACTION) * delta
        if K_p
        else 0.0
    )
    # structure discovery runs with the public writer only (no token stage): what the scaled shares leave
    f_forms = 1.0 - _size_share(spec) - _length_share(spec) - (f_p + f_hist + f_ck + f_mu + f_theta) \
        if spec.discovers_forms else 0.0
    delta_forms = (_fraction(spec.forms_delta_fraction, DEFAULT_FORMS_DELTA_FRACTION) * delta if spec.discovers_forms
                   else 0.0)
    rho_total = approx_eps_to_rho(epsilon, delta, delta_p + delta_forms, conversion)
    rho_p = f_p * rho_total
    sigma_p = math.sqrt(K_p / (2.0 * rho_p)) if K_p else math.inf
    tau_p = release_threshold(sigma_p, K_p, delta_p) if K_p else math.inf
    rho_hist = f_hist * rho_total
    rho_ck = f_ck * rho_total
    rho_mu = f_mu * rho_total / L
    rho_theta = f_theta * rho_total / L
    rho_size = _size_share(spec) * rho_total
    rho_length = _length_share(spec) * rho_total
    rho_forms = f_forms * rho_total
    m_o, m_s = (int(spec.openers_per_unit), int(spec.skeletons_per_unit)) if f_forms else (0, 0)
    sigma_o = math.sqrt(m_o / (2.0 * OPENERS_SHARE * rho_forms)) if m_s else math.inf
    sigma_s = math.sqrt(m_s / (2.0 * (1.0 - OPENERS_SHARE) * rho_forms)) if m_s else math.inf
    rho_tokens_per_cluster = (
        (rho_total - rho_size - rho_length - rho_p - rho_hist - rho_ck) / L - rho_mu - rho_theta if tokens else 0.0
    )
    if tokens and not rho_tokens_per_cluster > 0.0:  # only reachable through rounding at extreme shares
        raise _reject("The budget shares leave nothing for generating text.", "Lower the other shares.")
    rho_per_token = rho_tokens_per_cluster / T
    c_over_tau = math.sqrt(2.0 * rho_per_token)
    return DPSynRAGPlan(
        epsilon=float(epsilon),
        delta=float(delta),
        conversion=conversion,
        K=K,
        L=L,
        T=T,
        tau=tau,
        rho_total=rho_total,
        hist_fraction=f_hist,
        mu_fraction=f_mu,
        theta_fraction=f_theta,
        tokens_fraction=f_tokens,
        rho_hist=rho_hist,
        sigma_h=math.sqrt(K / (2.0 * rho_hist)),
        M=M,
        cluster_keywords_fraction=f_ck,
        rho_cluster_keywords=rho_ck,
        sigma_c=math.sqrt(L * M / (2.0 * rho_ck)) if M else math.inf,
        rho_mu=rho_mu,
        sigma_mu=math.sqrt(1.0 / (2.0 * rho_mu)) if rho_mu > 0 else math.inf,
        eps_theta=math.sqrt(8.0 * rho_theta),
        rho_theta=rho_theta,
        rho_tokens_per_cluster=rho_tokens_per_cluster,
        rho_per_token=rho_per_token,
        c_over_tau=c_over_tau,
        c=c_over_tau * tau,
        rho_cluster=rho_mu + rho_theta + rho_tokens_per_cluster,
        epsilon_tight=approx_rho_to_eps(rho_total, delta, delta_p + delta_forms, "tight"),
        epsilon_loose=approx_rho_to_eps(rho_total, delta, delta_p + delta_forms, "loose"),
        K_p=K_p,
        phrases_fraction=f_p,
        rho_phrases=rho_p,
        sigma_p=sigma_p,
        tau_p=tau_p,
        delta_phrases=delta_p,
        delta_conversion=delta - delta_p - delta_forms,
        size_fraction=_size_share(spec),
        rho_size=rho_size,
        sigma_size=math.sqrt(1.0 / (2.0 * rho_size)) if rho_size > 0 else math.inf,
        length_fraction=_length_share(spec),
        rho_length=rho_length,
        epsilon_length=math.sqrt(8.0 * rho_length),
        forms_fraction=f_forms,
        m_o=m_o,
        m_s=m_s,
        rho_openers=OPENERS_SHARE * rho_forms if m_s else 0.0,
        sigma_o=sigma_o,
        tau_o=release_threshold(sigma_o, m_o, delta_forms / 2) if m_s else math.inf,
        delta_openers=delta_forms / 2 if m_s else 0.0,
        rho_skeletons=(1.0 - OPENERS_SHARE) * rho_forms if m_s else 0.0,
        sigma_s=sigma_s,
        tau_s=release_threshold(sigma_s, m_s, delta_forms / 2) if m_s else math.inf,
        delta_skeletons=delta_forms / 2 if m_s else 0.0,
    )
