"""Turn a target (ε, δ) into the noise parameters of a run (SPEC §1–§3).

DP-SynRAG (SPEC §2) spends its budget in up to six stages:

    total ρ = ρ_p + ρ_hist + ρ_ck + L · (ρ_μ + ε_θ²/8 + T·(c/τ)²/2),  plus δ_p

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

from core.errors import PrivetError
from core.privacy.accountant import Accountant
from core.privacy.conversion import METHODS, approx_eps_to_rho, approx_rho_to_eps, eps_to_rho, rho_to_eps
from core.privacy.release import BOUNDED_RANGE, GAUSSIAN, SPARSE_HISTOGRAM, Release, accountant_of, find
from core.privacy.release import per_stage as stage_totals
from core.privacy.set_union import release_threshold
from core.runspec import AugPESpec, DPSynRAGSpec

STAGE_PHRASES = "phrases"
STAGE_HISTOGRAM = "histogram"
STAGE_CLUSTER_KEYWORDS = "cluster_keywords"
STAGE_MEAN = "retrieval_mean"
STAGE_THRESHOLD = "retrieval_threshold"
STAGE_TOKENS = "private_prediction"
STAGE_RPSG_SELECTION = "rpsg_selection"

# The seed's reference point (SPEC §2, seed Table 6).
REFERENCE_EPSILON = 10.0
REFERENCE_DELTA = 1e-3
REFERENCE_L = 5
REFERENCE_RHO_HIST = 0.1
REFERENCE_RHO_MU = 0.009
REFERENCE_EPS_THETA = 0.4
DEFAULT_CLUSTER_KEYWORDS_FRACTION = 0.2  # share of ρ for the co-keyword counts when the spec says 0
DEFAULT_PHRASES_FRACTION = 0.1  # share of ρ for DP phrase discovery when the spec says 0
DEFAULT_PHRASES_DELTA_FRACTION = 0.5  # share of δ for releasing a phrase of one unit when the spec says 0


def _reject(what: str, fix: str) -> PrivetError:
    return PrivetError(what, fix)


def _check_privacy_target(epsilon: float, delta: float, conversion: str) -> None:
    if conversion not in METHODS:
        raise _reject(f"Unknown zCDP conversion {conversion!r}.", f"Use one of {', '.join(METHODS)}.")
    if not (epsilon > 0.0) or math.isinf(epsilon):
        raise _reject(f"The privacy budget ε must be a finite number > 0 (got {epsilon}).", "Choose ε, e.g. 1, 4 or 10.")
    if not (0.0 < delta < 1.0):
        raise _reject(
            f"δ must lie strictly between 0 and 1 (got {delta}).",
            "Leave δ at 0 for the public default (1e-6, or 1/(10·N) for a stated upper bound N on the units).",
        )


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

    @property
    def discovers_phrases(self) -> bool:
        return self.K_p > 0

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
        stages = [self._phrases()] if self.discovers_phrases else []
        stages.append(
            Release(
                STAGE_HISTOGRAM, GAUSSIAN, self.rho_hist, "noisy keyword histogram",
                f"Gaussian noise on the keyword histogram, sigma_h={self.sigma_h:.4g}",
                sensitivity=math.sqrt(self.K), sigma=self.sigma_h,
            )
        )
        if self.M:
            stages.append(
                Release(
                    STAGE_CLUSTER_KEYWORDS, GAUSSIAN, self.rho_cluster_keywords,
                    "noisy co-keyword counts of every cluster (each unit: <= M words in each of <= L clusters)",
                    f"Gaussian noise on every cluster's co-keyword counts, sigma_c={self.sigma_c:.4g}, "
                    f"<= M={self.M} words per unit in each of <= L={self.L} clusters",
                    sensitivity=math.sqrt(self.L * self.M), sigma=self.sigma_c,
                )
            )
        if self.refine:
            stages += [
                Release(
                    STAGE_MEAN, GAUSSIAN, self.L * self.rho_mu, "noisy embedding sum per cluster",
                    f"Noisy cluster embedding sums, sigma_mu={self.sigma_mu:.4g}",
                    sensitivity=1.0, sigma=self.sigma_mu, parallel=self.L,
                ),
                Release(
                    STAGE_THRESHOLD, BOUNDED_RANGE, self.L * self.rho_theta, "similarity threshold per cluster",
                    f"Cluster similarity thresholds, eps_theta={self.eps_theta:.4g}",
                    epsilon=self.eps_theta, parallel=self.L,
                ),
            ]
        if self.token_stage:
            stages.append(
                Release(
                    STAGE_TOKENS, BOUNDED_RANGE, self.L * self.rho_tokens_per_cluster, "tokens sampled per cluster",
                    f"Private prediction: {self.T} tokens per group, c/tau={self.c / self.tau:.4g}",
                    epsilon=self.token_epsilon, count=self.T, parallel=self.L,
                )
            )
        return stages

    def _phrases(self) -> Release:
        return Release(
            STAGE_PHRASES, SPARSE_HISTOGRAM, self.rho_phrases,
            f"noisy phrase counts released above a threshold (each unit: <= K_p={self.K_p} phrases of its own "
            f"text); besides rho it spends delta_p={self.delta_phrases:.3g} of delta, the largest chance that "
            "a phrase of one unit alone is released",
            f"DP phrase discovery: Gaussian noise sigma_p={self.sigma_p:.4g} on each phrase count, <= K_p={self.K_p} "
            f"phrases per unit, released above tau_p={self.tau_p:.4g} (delta_p={self.delta_phrases:.3g})",
            sensitivity=math.sqrt(self.K_p), sigma=self.sigma_p, delta=self.delta_phrases, threshold=self.tau_p,
            items_per_unit=self.K_p,
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


def _fraction(name: str, override: float, default: float) -> float:
    value = float(override) if override else default
    if not (0.0 < value < 1.0):
        raise _reject(
            f"The budget share {name} must lie strictly between 0 and 1 (got {value}).",
            f"Set {name} to e.g. 0.05, or to 0 for the default.",
        )
    return value


def plan_dp_synrag(spec: DPSynRAGSpec, epsilon: float, delta: float, conversion: str = "tight") -> DPSynRAGPlan:
    """Split (ε, δ) across the DP-SynRAG stages and derive σ_h, σ_μ, ε_θ and c/τ."""
    _check_privacy_target(epsilon, delta, conversion)
    for name in ("K", "L", "T"):
        value = getattr(spec, name)
        if int(value) != value or value < 1:
            raise _reject(f"{name} must be a whole number ≥ 1 (got {value}).", f"Fix dp_synrag.{name} in the run spec.")
    if not (spec.tau > 0.0) or math.isinf(spec.tau):
        raise _reject(f"The temperature τ must be > 0 (got {spec.tau}).", "Use τ = 1.0.")

    d_hist, d_mu, d_theta = default_fractions(conversion)
    f_hist = _fraction("hist_fraction", spec.hist_fraction, d_hist)
    if spec.refine:
        f_mu = _fraction("mu_fraction", spec.mu_fraction, d_mu)
        f_theta = _fraction("theta_fraction", spec.theta_fraction, d_theta)
    else:  # no retrieval refinement: S_r = C_r, and its share goes to the tokens
        f_mu = f_theta = 0.0
    M = int(spec.cluster_keywords)
    if int(spec.cluster_keywords) != spec.cluster_keywords or M < 0:
        raise _reject(
            f"cluster_keywords must be a whole number ≥ 0 (got {spec.cluster_keywords}).",
            "Set dp_synrag.cluster_keywords to e.g. 5, or to 0 to release no co-keywords.",
        )
    f_ck = (
        _fraction("cluster_keywords_fraction", spec.cluster_keywords_fraction, DEFAULT_CLUSTER_KEYWORDS_FRACTION)
        if M
        else 0.0
    )
    K_p = int(spec.phrases_per_unit) if spec.discover_phrases else 0
    if spec.discover_phrases and (int(spec.phrases_per_unit) != spec.phrases_per_unit or K_p < 1):
        raise _reject(
            f"phrases_per_unit must be a whole number ≥ 1 (got {spec.phrases_per_unit}).",
            "Set dp_synrag.phrases_per_unit to e.g. 8, or discover_phrases = false.",
        )
    f_p = _fraction("phrases_fraction", spec.phrases_fraction, DEFAULT_PHRASES_FRACTION) if K_p else 0.0
    tokens = spec.token_stage
    if not tokens:  # no private prediction: its share goes to the other stages, in proportion to theirs
        scale = 1.0 / (f_p + f_hist + f_ck + f_mu + f_theta)
        f_p, f_hist, f_ck, f_mu, f_theta = f_p * scale, f_hist * scale, f_ck * scale, f_mu * scale, f_theta * scale
    f_tokens = 1.0 - (f_p + f_hist + f_ck + f_mu + f_theta) if tokens else 0.0
    if tokens and not f_tokens > 0.0:
        raise _reject(
            f"The budget shares leave nothing for generating text (phrases {f_p:.3f} + histogram {f_hist:.3f} + "
            f"co-keywords {f_ck:.3f} + cluster means {f_mu:.3f} + thresholds {f_theta:.3f} ≥ 1).",
            "Lower phrases_fraction, hist_fraction, cluster_keywords_fraction, mu_fraction or theta_fraction so that "
            "they sum to well below 1.",
        )

    K, L, T, tau = int(spec.K), int(spec.L), int(spec.T), float(spec.tau)
    delta_p = (
        _fraction("phrases_delta_fraction", spec.phrases_delta_fraction, DEFAULT_PHRASES_DELTA_FRACTION) * delta
        if K_p
        else 0.0
    )
    rho_total = approx_eps_to_rho(epsilon, delta, delta_p, conversion)
    rho_p = f_p * rho_total
    sigma_p = math.sqrt(K_p / (2.0 * rho_p)) if K_p else math.inf
    tau_p = release_threshold(sigma_p, K_p, delta_p) if K_p else math.inf
    rho_hist = f_hist * rho_total
    rho_ck = f_ck * rho_total
    rho_mu = f_mu * rho_total / L
    rho_theta = f_theta * rho_total / L
    rho_tokens_per_cluster = (rho_total - rho_p - rho_hist - rho_ck) / L - rho_mu - rho_theta if tokens else 0.0
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
        epsilon_tight=approx_rho_to_eps(rho_total, delta, delta_p, "tight"),
        epsilon_loose=approx_rho_to_eps(rho_total, delta, delta_p, "loose"),
        K_p=K_p,
        phrases_fraction=f_p,
        rho_phrases=rho_p,
        sigma_p=sigma_p,
        tau_p=tau_p,
        delta_phrases=delta_p,
        delta_conversion=delta - delta_p,
    )


# --- δ -------------------------------------------------------------------------------------------

DEFAULT_DELTA = 1e-6


def public_delta(max_units: int = 0) -> float:
    """The default δ, from public numbers only (SPEC §1): 1/(10·N) for a stated public bound N, else 1e-6.

    ``max_units`` is the custodian's public upper bound N on the number of units (0 = not stated). δ is
    never computed from the loaded data: a δ that follows n would reveal n's order of magnitude.
    """
    if int(max_units) != max_units or max_units < 0:
        raise _reject(
            f"The stated upper bound on the number of units must be a whole number ≥ 0 (got {max_units}).",
            "Set [privacy] max_units to a public upper bound on the number of units, or to 0.",
        )
    return 1.0 / (10.0 * max_units) if max_units else DEFAULT_DELTA


def delta_rule(delta: float, max_units: int = 0) -> str:
    """How the run's δ was chosen, in plain words for the custodian (δ = 0 in the spec: the default)."""
    if delta > 0:
        return f"δ = {delta:g}, as set in the run spec."
    if max_units:
        return (f"δ = {public_delta(max_units):g} = 1/(10·N), N = {max_units}: the stated public upper bound on the "
                "number of units. It is never computed from the data.")
    return (f"δ = {DEFAULT_DELTA:g}, the fixed default (no upper bound on the number of units was stated). "
            "It is never computed from the data.")


def delta_warnings(delta: float, max_units: int = 0, n_units: int | None = None) -> list[str]:
    """Warnings for the custodian's screen: δ ≥ 1/N, and (on screen only) a loaded n above the stated N.

    ``n_units`` is the private count of the loaded data: warnings that use it are for the custodian's
    screen and never enter a record or a certificate.
    """
    warnings = []
    if max_units and delta >= 1.0 / max_units:
        warnings.append(
            f"δ = {delta:g} is at least 1/N = 1/{max_units} (N = the stated upper bound on the number of units): "
            f"with this δ a mechanism may reveal one unit outright and still meet the guarantee. "
            f"Use δ ≤ 1/(10·N) = {public_delta(max_units):g} (leave δ at 0 for that default)."
        )
    if n_units is not None and max_units and n_units > max_units:
        warnings.append(
            f"The loaded data has {n_units} units, more than the stated upper bound N = {max_units} "
            "(shown here only; never exported). Raise [privacy] max_units to a true public bound."
        )
    elif n_units and not max_units and delta >= 1.0 / n_units:
        warnings.append(
            f"δ = {delta:g} is at least 1/n for the {n_units} units loaded (shown here only; never exported): "
            "a mechanism may reveal one unit outright and still meet the guarantee. Choose a smaller δ."
        )
    return warnings


# --- resume ----------------------------------------------------------------------------------------


def prediction_charge(per_group_rho: float, L: int, n_redrawn: int, resumed: bool) -> float:
    """ρ to charge when private prediction (re)draws ``n_redrawn`` groups; ``per_group_rho`` is one group's cost.

    A fresh run charges the plan's L · per-group cost. A resumed run redraws only the groups that did
    not finish (their first, unfinished draw was charged and is thrown away). Groups overlap — a unit
    lies in at most L of them — so the redrawn groups cost min(L, number redrawn) · per-group cost by
    overlapping parallel composition. For disjoint groups (DP-Synth, L = 1) that is one group's cost.
    """
    return (min(int(L), int(n_redrawn)) if resumed else int(L)) * per_group_rho


# --- private prediction: one cost for the plan and the charge (DP-SynRAG step 4, DP-Synth) ---------


@dataclass(frozen=True)
class PredictionCost:
    """The private-prediction stage as a plan fixes it: each group draws ``T`` tokens with logits clipped
    to ``c`` at temperature ``tau`` (each draw an exponential mechanism with ε = 2c/τ, ρ = ε²/8 =
    (c/τ)²/2), and a unit lies in at most ``overlap`` groups (L for DP-SynRAG, 1 for DP-Synth's disjoint
    batches). The plan's record and the stage's charge both come from here, so they cannot disagree.
    """

    T: int
    c: float
    tau: float
    overlap: int

    @property
    def token_epsilon(self) -> float:
        return 2.0 * self.c / self.tau

    def record(self, acc: Accountant, stage: str = STAGE_TOKENS, description: str = "tokens sampled per group") -> None:
        """Record the stage in ``acc`` (the plan's accountant)."""
        acc.bounded_range(stage, self.token_epsilon, count=self.T, parallel=self.overlap, description=description)

    @property
    def rho_per_group(self) -> float:
        acc = Accountant()
        acc.bounded_range(STAGE_TOKENS, self.token_epsilon, count=self.T)
        return acc.total_rho()

    def charge(self, n_redrawn: int, resumed: bool) -> float:
        """ρ to charge when the stage starts (``prediction_charge``: on a resume only the redrawn groups)."""
        return prediction_charge(self.rho_per_group, self.overlap, n_redrawn, resumed)


def dp_synrag_prediction_cost(plan: DPSynRAGPlan) -> PredictionCost:
    """DP-SynRAG's step 4: T tokens per cluster at the plan's c, each unit in at most L clusters."""
    return PredictionCost(T=plan.T, c=plan.c, tau=plan.tau, overlap=plan.L)


@dataclass(frozen=True)
class DPSynthPlan:
    """DP-Synth (docs/method.md §4): the whole budget goes to one private prediction over disjoint batches."""

    rho_total: float
    c_over_tau: float
    T: int
    tau: float

    def prediction_cost(self) -> PredictionCost:
        return PredictionCost(T=self.T, c=self.c_over_tau * self.tau, tau=self.tau, overlap=1)

    def releases(self) -> list[Release]:
        """One stage: private prediction over disjoint batches (each unit in one group)."""
        cost = self.prediction_cost()
        return [
            Release(
                STAGE_TOKENS, BOUNDED_RANGE, self.rho_total,
                "Private prediction: one exponential-mechanism token draw per step, T steps",
                f"Private prediction: {cost.T} tokens per group, c/tau={cost.c / cost.tau:.4g}",
                epsilon=cost.token_epsilon, count=cost.T, parallel=cost.overlap,
            )
        ]

    def accountant(self) -> Accountant:
        return accountant_of(self.releases())


def plan_dp_synth(spec: DPSynRAGSpec, epsilon: float, delta: float, conversion: str = "tight") -> DPSynthPlan:
    """Each unit is in one batch, so the run costs one group's budget: ρ = (T/2)(c/τ)², i.e. c/τ = √(2ρ/T)."""
    rho = eps_to_rho(epsilon, delta, conversion)
    return DPSynthPlan(rho_total=rho, c_over_tau=math.sqrt(2.0 * rho / spec.T), T=int(spec.T), tau=float(spec.tau))


# --- RPSG (SPEC §3) --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RPSGPlan:
    """Noise for RPSG's private choice among m candidate abstractions of one seed, honestly accounted.

    The seed calibrates σ = √(2 ln(1.25/δ))/ε (Dwork & Roth, Thm A.1) as if the utility vector had
    sensitivity 1. It does not: the m utilities cosine(seed, candidate_j) all depend on the seed, so
    replacing the seed can move every one of them anywhere in [0, 1]; the L2 sensitivity of the vector
    is √m. The classic formula is moreover only proved for ε < 1. We therefore use
    σ = max(seed σ, σ_target) where σ_target = √(m / (2 ρ_target)) and ρ_target = eps_to_rho(ε, δ):
    never less noise than SPEC §3's formula, and enough that the selection, recorded as a Gaussian
    mechanism with Δ = √m (ρ = m/(2σ²), valid for every ε), meets the requested ε at δ.
    ``epsilon_guaranteed`` is the (ε, δ) actually achieved (≤ the requested ε); the index choice is
    post-processing of the noisy utilities (report-noisy-max).

    Scope, to be stated in plain words: this covers only *which* candidate is chosen for a seed,
    holding its candidate set fixed. The candidates are themselves computed from the private seed, each
    seed yields its own output, and the filters read private seeds, so RPSG has no end-to-end DP
    guarantee. Each seed is in exactly one selection (disjoint), so the per-seed cost is the total.
    """

    epsilon: float  # the ε requested
    delta: float
    m: int
    sigma: float
    sensitivity: float  # √m
    rho: float  # m / (2σ²)
    epsilon_guaranteed: float  # tight conversion of rho at delta
    epsilon_loose: float
    scope: str

    def releases(self) -> list[Release]:
        """One stage: the noisy utilities of every seed's candidates (disjoint per seed)."""
        return [
            Release(
                STAGE_RPSG_SELECTION, GAUSSIAN, self.rho,
                "noisy utilities of the m candidate abstractions of each seed (disjoint per seed)",
                "noisy utilities of the m candidate abstractions of each seed (disjoint per seed)",  # RPSG charges the event
                sensitivity=self.sensitivity, sigma=self.sigma,
            )
        ]

    def accountant(self) -> Accountant:
        return accountant_of(self.releases())

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


RPSG_SCOPE = (
    "The formal guarantee covers only which of the candidate abstractions is chosen for each seed. "
    "The candidates are computed from the private text and the filters read it, so the synthetic "
    "corpus as a whole has no differential-privacy guarantee; rely on the empirical audit."
)


def plan_rpsg(epsilon: float, delta: float, m: int = 5, conversion: str = "tight") -> RPSGPlan:
    """σ for RPSG's selection (at least SPEC §3's √(2 ln(1.25/δ))/ε, enough to meet ε at δ; see RPSGPlan)."""
    _check_privacy_target(epsilon, delta, conversion)
    if int(m) != m or m < 1:
        raise _reject(f"The number of candidates m must be a whole number ≥ 1 (got {m}).", "Use m = 5.")
    seed_sigma = math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon
    target_sigma = math.sqrt(m / (2.0 * eps_to_rho(epsilon, delta, conversion)))
    sigma = max(seed_sigma, target_sigma)
    rho = m / (2.0 * sigma**2)
    return RPSGPlan(
        epsilon=float(epsilon),
        delta=float(delta),
        m=int(m),
        sigma=sigma,
        sensitivity=math.sqrt(m),
        rho=rho,
        epsilon_guaranteed=rho_to_eps(rho, delta, conversion),
        epsilon_loose=rho_to_eps(rho, delta, "loose"),
        scope=RPSG_SCOPE,
    )


# --- Aug-PE (SPEC §4) --------------------------------------------------------------------------------

STAGE_AUG_PE = "aug_pe_histogram"


def aug_pe_stage(iteration: int) -> str:
    """The ledger stage of iteration t (1-based): one charge per vote histogram."""
    return f"{STAGE_AUG_PE}_{iteration}"


@dataclass(frozen=True)
class AugPEPlan:
    """Noise of Aug-PE's vote histograms: T Gaussian mechanisms with Δ = 1, composed sequentially.

    Each unit casts one vote per iteration (for its nearest candidate), so adding or removing a unit
    changes one count by 1: L2 sensitivity Δ = 1 and ρ_t = 1/(2σ²). The target ρ is split equally
    over the T iterations: ρ_t = ρ/T, σ = √(T/(2ρ)). ``threshold`` is H in votes (the spec's value, or
    2σ when the spec says 0); it is post-processing of the noisy counts and costs nothing.
    """

    epsilon: float
    delta: float
    conversion: str
    iterations: int
    rho_total: float
    rho_per_iteration: float
    sigma: float
    threshold: float
    epsilon_tight: float
    epsilon_loose: float

    def releases(self) -> list[Release]:
        """One Gaussian vote histogram per iteration (Δ = 1), composed sequentially."""
        return [
            Release(
                aug_pe_stage(t), GAUSSIAN, self.rho_per_iteration,
                f"noisy nearest-neighbour vote histogram, iteration {t} of {self.iterations}",
                f"Aug-PE vote histogram, iteration {t} of {self.iterations}: Gaussian noise sigma={self.sigma:.4g}, "
                "one vote per unit (L2 sensitivity 1)",
                sensitivity=1.0, sigma=self.sigma,
            )
            for t in range(1, self.iterations + 1)
        ]

    def release(self, iteration: int) -> Release:
        """The vote histogram of iteration t (1-based)."""
        return self.releases()[iteration - 1]

    def accountant(self) -> Accountant:
        return accountant_of(self.releases())

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def plan_aug_pe(spec: AugPESpec, epsilon: float, delta: float, conversion: str = "tight") -> AugPEPlan:
    """Split (ε, δ) equally over Aug-PE's T vote histograms and derive σ and H."""
    _check_privacy_target(epsilon, delta, conversion)
    for name in ("iterations", "population"):
        value = getattr(spec, name)
        if int(value) != value or value < 1:
            raise _reject(f"{name} must be a whole number ≥ 1 (got {value}).", f"Fix aug_pe.{name} in the run spec.")
    if int(spec.variations) != spec.variations or spec.variations < 0:
        raise _reject(
            f"variations must be a whole number ≥ 0 (got {spec.variations}).", "Fix aug_pe.variations in the run spec."
        )
    if not (spec.threshold >= 0.0) or math.isinf(spec.threshold):
        raise _reject(
            f"The vote threshold H must be a finite number ≥ 0 (got {spec.threshold}).",
            "Set aug_pe.threshold to e.g. 3, or to 0 for 2σ.",
        )
    iterations = int(spec.iterations)
    rho_total = eps_to_rho(epsilon, delta, conversion)
    rho_t = rho_total / iterations
    sigma = math.sqrt(1.0 / (2.0 * rho_t))
    return AugPEPlan(
        epsilon=float(epsilon),
        delta=float(delta),
        conversion=conversion,
        iterations=iterations,
        rho_total=rho_total,
        rho_per_iteration=rho_t,
        sigma=sigma,
        threshold=float(spec.threshold) if spec.threshold > 0 else 2.0 * sigma,
        epsilon_tight=rho_to_eps(rho_total, delta, "tight"),
        epsilon_loose=rho_to_eps(rho_total, delta, "loose"),
    )

