"""DP-SynRAG's budget split (SPEC §2): (ε, δ) shared across the stages of the plan (``plan.py``), and each stage's
noise derived from its share.

Budget split. The seed's defaults (ε = 10, δ = 1e-3, K = 10, L = 5, T = 70: ρ_hist = 0.1,
ρ_μ = 0.009, ε_θ = 0.4) are kept as *shares of the total ρ*: the histogram gets 0.1/ρ_ref of it,
the cluster means L·0.009/ρ_ref, the thresholds L·0.02/ρ_ref (with L = 5 and ρ_ref the ρ of
(10, 1e-3) under the chosen conversion), and private prediction the rest. So the reference run
reproduces the seed exactly (c/τ = 0.1162 tight, 0.1057 loose) and any ε plans: at ε = 1 the fixed
ρ_hist = 0.1 alone would exceed the whole budget, whereas a share never does. ``hist_fraction``,
``mu_fraction`` and ``theta_fraction`` in the run spec, when non-zero, replace these shares (each is the
share of the total ρ spent on that stage over all clusters)."""

from __future__ import annotations

import math
from typing import Any

from core.methods.dp_synrag.release.plan import DPSynRAGPlan
from core.privacy.conversion import approx_eps_to_rho, approx_rho_to_eps, eps_to_rho
from core.privacy.plan_base import (
    _check_privacy_target,
    _reject,
)
from core.privacy.set_union import release_threshold
from core.specs.runspec import DocumentSpec, DPSynRAGSpec
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

# Without a token stage (text = "realised" or "topic_line", the default) the whole budget releases topics: the
# histogram, the co-keywords and the phrases share it as 0.4 : 0.4 : 0.2 unless the spec says otherwise (then
# rescaled to 1). Round 3's ablation on the demo clinic (docs/results/history.md "Round 3: ablation") measured the
# realised writer best with the histogram and the co-keywords sharing the budget equally (0.4 / 0.4); the seed's
# split (histogram ~4 %, co-keywords 20 %) was made for a token stage that takes two thirds of ρ. Public constants.
REALISED_FRACTIONS = {"hist": 0.4, "cluster_keywords": 0.4, "phrases": 0.2, "forms": 0.4}

# Structure discovery (docs/method.md §2.0b): its three releases share its part of ρ 0.55 : 0.25 : 0.2 (the openers'
# release has m_o items per unit, the skeletons' m_s, the slot values' m_v), and its part of δ equally. Public constants.
OPENERS_SHARE = 0.55
SKELETONS_SHARE = 0.25
VALUES_PER_UNIT = 4  # m_v: a unit's short slot values proposed (shortest first)

DEFAULT_FORMS_DELTA_FRACTION = 0.25  # δ's share for a skeleton or opener of one unit when the spec says 0


def default_fractions(conversion: str = "tight") -> tuple[float, float, float]:
    """The seed's budget split as shares of total ρ: (histogram, cluster means, thresholds)."""
    rho_ref = eps_to_rho(REFERENCE_EPSILON, REFERENCE_DELTA, conversion)
    return (
        REFERENCE_RHO_HIST / rho_ref,
        REFERENCE_L * REFERENCE_RHO_MU / rho_ref,
        REFERENCE_L * (REFERENCE_EPS_THETA**2 / 8.0) / rho_ref,
    )


def _fraction(override: float, default: float) -> float:
    """A share of the budget: the spec's (its rule: strictly between 0 and 1), or the default when it says 0."""
    return float(override) if override else default


def _forms_share(spec: DPSynRAGSpec, forms: bool) -> float:
    """Structure discovery's share of ρ before scaling (0 when it does not run: ``forms`` false)."""
    return _fraction(spec.forms_fraction, REALISED_FRACTIONS["forms"]) if forms else 0.0


def _shares(spec: DPSynRAGSpec, conversion: str,
            forms: bool) -> tuple[float, float, float, float, float, float, int, int]:
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
        scale = (1.0 - f_n) / (f_p + f_hist + f_ck + f_mu + f_theta + _forms_share(spec, forms))
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


def plan_dp_synrag(spec: DPSynRAGSpec, epsilon: float, delta: float, conversion: str = "tight",
                   document: DocumentSpec | None = None) -> DPSynRAGPlan:
    """Split (ε, δ) across the DP-SynRAG stages and derive σ_h, σ_μ, ε_θ and c/τ. ``document``: the run spec's
    ``[document]`` (None: its defaults, an automatic form), which says whether structure discovery runs."""
    _check_privacy_target(epsilon, delta, conversion)
    check_section(spec, "dp_synrag")  # DPSynRAGSpec.RULES: K, L, T ≥ 1, τ > 0, every share strictly in (0, 1), ...
    forms = spec.discovers_forms_with(document or DocumentSpec())

    shares = _shares(spec, conversion, forms)
    f_p, f_hist, f_ck, f_mu, f_theta, _, _, K_p = shares
    delta_p = (
        _fraction(spec.phrases_delta_fraction, DEFAULT_PHRASES_DELTA_FRACTION) * delta
        if K_p
        else 0.0
    )
    # structure discovery runs with the public writer only (no token stage): what the scaled shares leave
    f_forms = 1.0 - _size_share(spec) - _length_share(spec) - (f_p + f_hist + f_ck + f_mu + f_theta) \
        if forms else 0.0
    delta_forms = _fraction(spec.forms_delta_fraction, DEFAULT_FORMS_DELTA_FRACTION) * delta if forms else 0.0
    rho_total = approx_eps_to_rho(epsilon, delta, delta_p + delta_forms, conversion)
    return DPSynRAGPlan(
        epsilon=float(epsilon),
        delta=float(delta),
        conversion=conversion,
        rho_total=rho_total,
        epsilon_tight=approx_rho_to_eps(rho_total, delta, delta_p + delta_forms, "tight"),
        epsilon_loose=approx_rho_to_eps(rho_total, delta, delta_p + delta_forms, "loose"),
        delta_conversion=delta - delta_p - delta_forms,
        **_topic_noise(spec, shares, rho_total),
        **_phrase_noise(K_p, f_p, rho_total, delta_p),
        **_first_noise(spec, rho_total),
        **_forms_noise(spec, f_forms, rho_total, delta_forms),
    )


def _topic_noise(spec: DPSynRAGSpec, shares: tuple[float, float, float, float, float, float, int, int],
                 rho_total: float) -> dict[str, Any]:
    """The histogram's, the co-keywords', the refinement's and the token stage's noise from their shares of ρ."""
    f_p, f_hist, f_ck, f_mu, f_theta, f_tokens, M, _ = shares
    K, L, T, tau = int(spec.K), spec.clusters_per_unit, int(spec.T), float(spec.tau)
    rho_p = f_p * rho_total
    rho_hist = f_hist * rho_total
    rho_ck = f_ck * rho_total
    rho_mu = f_mu * rho_total / L
    rho_theta = f_theta * rho_total / L
    rho_size = _size_share(spec) * rho_total
    rho_length = _length_share(spec) * rho_total
    rho_tokens_per_cluster = (
        (rho_total - rho_size - rho_length - rho_p - rho_hist - rho_ck) / L - rho_mu - rho_theta
        if spec.token_stage else 0.0
    )
    if spec.token_stage and not rho_tokens_per_cluster > 0.0:  # only reachable through rounding at extreme shares
        raise _reject("The budget shares leave nothing for generating text.", "Lower the other shares.")
    rho_per_token = rho_tokens_per_cluster / T
    c_over_tau = math.sqrt(2.0 * rho_per_token)
    return {
        "K": K, "L": L, "T": T, "tau": tau,
        "hist_fraction": f_hist, "mu_fraction": f_mu, "theta_fraction": f_theta, "tokens_fraction": f_tokens,
        "rho_hist": rho_hist, "sigma_h": math.sqrt(K / (2.0 * rho_hist)),
        "M": M, "cluster_keywords_fraction": f_ck, "rho_cluster_keywords": rho_ck,
        "sigma_c": math.sqrt(L * M / (2.0 * rho_ck)) if M else math.inf,
        "rho_mu": rho_mu, "sigma_mu": math.sqrt(1.0 / (2.0 * rho_mu)) if rho_mu > 0 else math.inf,
        "eps_theta": math.sqrt(8.0 * rho_theta), "rho_theta": rho_theta,
        "rho_tokens_per_cluster": rho_tokens_per_cluster, "rho_per_token": rho_per_token,
        "c_over_tau": c_over_tau, "c": c_over_tau * tau, "rho_cluster": rho_mu + rho_theta + rho_tokens_per_cluster,
    }


def _phrase_noise(K_p: int, f_p: float, rho_total: float, delta_p: float) -> dict[str, Any]:
    """Phrase discovery's noise and threshold from its share of ρ and its δ_p."""
    rho_p = f_p * rho_total
    sigma_p = math.sqrt(K_p / (2.0 * rho_p)) if K_p else math.inf
    return {"K_p": K_p, "phrases_fraction": f_p, "rho_phrases": rho_p, "sigma_p": sigma_p,
                "tau_p": release_threshold(sigma_p, K_p, delta_p) if K_p else math.inf, "delta_phrases": delta_p}


def _first_noise(spec: DPSynRAGSpec, rho_total: float) -> dict[str, Any]:
    """The stages drawn first: the size count's σ_n and the length statistic's ε_len."""
    rho_size = _size_share(spec) * rho_total
    rho_length = _length_share(spec) * rho_total
    return {"size_fraction": _size_share(spec), "rho_size": rho_size,
                "sigma_size": math.sqrt(1.0 / (2.0 * rho_size)) if rho_size > 0 else math.inf,
                "length_fraction": _length_share(spec), "rho_length": rho_length, "epsilon_length": math.sqrt(8.0 * rho_length)}


def _forms_noise(spec: DPSynRAGSpec, f_forms: float, rho_total: float, delta_forms: float) -> dict[str, Any]:
    """Structure discovery's two releases: the openers' and the skeletons' noise and thresholds."""
    rho_forms = f_forms * rho_total
    m_o, m_s = (int(spec.openers_per_unit), int(spec.skeletons_per_unit)) if f_forms else (0, 0)
    m_v = VALUES_PER_UNIT if m_s else 0
    shares = {"o": OPENERS_SHARE, "s": SKELETONS_SHARE, "v": 1.0 - OPENERS_SHARE - SKELETONS_SHARE}
    out: dict[str, Any] = {"forms_fraction": f_forms, "m_o": m_o, "m_s": m_s, "m_v": m_v}
    for sub, m, name in (("o", m_o, "openers"), ("s", m_s, "skeletons"), ("v", m_v, "values")):
        rho = shares[sub] * rho_forms if m_s else 0.0
        sigma = math.sqrt(m / (2.0 * rho)) if m_s else math.inf
        out |= {f"rho_{name}": rho, f"sigma_{sub}": sigma, f"delta_{name}": delta_forms / 3 if m_s else 0.0,
                f"tau_{sub}": release_threshold(sigma, m, delta_forms / 3) if m_s else math.inf}
    return out
