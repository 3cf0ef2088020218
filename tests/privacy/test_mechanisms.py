"""DP mechanisms and randomness (docs/method.md §1, §2.3, §2.4).

Statistical tests use a fixed false-failure rate: every test rejects at p < 1e-4.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats

from core.common.errors import PrivetError
from core.privacy import randomness
from core.privacy.mechanisms import (
    GAUSSIAN_OPENDP,
    SAMPLER_DESCRIPTIONS,
    TOKEN_SAMPLER,
    TokenSampler,
    clip_logits,
    gaussian_noise,
    threshold_exponential_mechanism,
    threshold_intervals,
)
from tests.helpers import statistical

P_REJECT = 1e-4


def chi_square_p(observed: np.ndarray, expected_p: np.ndarray) -> float:
    """Pearson chi-square p-value, merging categories with expected count < 5 into one."""
    observed = np.asarray(observed, dtype=float)
    expected = np.asarray(expected_p, dtype=float) * observed.sum()
    small = expected < 5
    if small.any():
        observed = np.append(observed[~small], observed[small].sum())
        expected = np.append(expected[~small], expected[small].sum())
        if expected[-1] == 0:
            assert observed[-1] == 0, "drew a category with zero probability"
            observed, expected = observed[:-1], expected[:-1]
    return float(stats.chisquare(observed, expected).pvalue)


# --- Gaussian noise ------------------------------------------------------------------------------


@statistical
def test_opendp_gaussian_noise_has_mean_zero_and_std_sigma():
    sigma, n = 3.0, 20_000
    values = np.linspace(-5.0, 5.0, n)
    noise = gaussian_noise(values, sigma) - values
    assert abs(noise.mean()) < 4.42 * sigma / math.sqrt(n)  # two-sided p ≈ 1e-5
    variance_stat = (n - 1) * noise.var(ddof=1) / sigma**2
    assert stats.chi2.sf(variance_stat, n - 1) > P_REJECT / 2
    assert stats.chi2.cdf(variance_stat, n - 1) > P_REJECT / 2
    assert stats.kstest(noise / sigma, "norm").pvalue > P_REJECT


def test_gaussian_noise_keeps_shape_and_adds_fresh_noise():
    values = np.arange(12.0).reshape(3, 4)
    a = gaussian_noise(values, 1.0, sensitivity=math.sqrt(10))
    b = gaussian_noise(values, 1.0, sensitivity=math.sqrt(10))
    assert a.shape == (3, 4) and a.dtype == np.float64
    assert not np.array_equal(a, b)
    assert not np.array_equal(a, values)
    assert "OpenDP" in SAMPLER_DESCRIPTIONS[GAUSSIAN_OPENDP] and "exact" in SAMPLER_DESCRIPTIONS[GAUSSIAN_OPENDP]


def test_gaussian_noise_test_mode_is_reproducible():
    values = np.zeros(5)
    a = gaussian_noise(values, 2.0, rng=randomness.test_mode_rng(7))
    b = gaussian_noise(values, 2.0, rng=randomness.test_mode_rng(7))
    assert np.array_equal(a, b)


def test_gaussian_noise_refuses_bad_input():
    with pytest.raises(PrivetError):
        gaussian_noise(np.zeros(3), 0.0)
    with pytest.raises(PrivetError):
        gaussian_noise(np.array([0.0, np.nan]), 1.0)


# --- threshold exponential mechanism ----------------------------------------------------------------


def exact_interval_probabilities(scores: np.ndarray, k: int, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Brute force: for each interval between sorted clipped scores, width · exp(ε·u(θ)/2) at its midpoint."""
    clipped = np.clip(scores, 0.0, 1.0)
    bounds = np.concatenate(([0.0], np.sort(clipped), [1.0]))
    weights = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        theta = (lo + hi) / 2
        count = sum(1 for s in clipped if s >= theta)
        weights.append((hi - lo) * math.exp(eps * -abs(count - k) / 2))
    weights = np.array(weights)
    return bounds, weights / weights.sum()


@statistical
def test_threshold_em_interval_frequencies_match_exact_probabilities():
    scores = np.array([-0.3, 0.05, 0.2, 0.2, 0.31, 0.4, 0.55, 0.6, 0.6, 0.72, 0.8, 0.93, 1.2])
    k, eps, draws = 5, 1.5, 4000
    bounds, p = exact_interval_probabilities(scores, k, eps)
    thetas = np.array([threshold_exponential_mechanism(scores, k, eps) for _ in range(draws)])
    assert np.all((thetas >= 0.0) & (thetas <= 1.0))
    # Interval of each draw (θ on a boundary has probability zero).
    index = np.searchsorted(bounds, thetas, side="right") - 1
    counts = np.bincount(index, minlength=len(p))[: len(p)]
    assert counts[p == 0].sum() == 0  # tied scores make zero-width intervals: never chosen
    assert chi_square_p(counts, p) > P_REJECT


@statistical
def test_threshold_em_is_uniform_inside_the_chosen_interval():
    scores = np.array([0.2, 0.8])  # k = 1: the interval [0.2, 0.8] has utility 0, the others −1
    thetas = np.array([threshold_exponential_mechanism(scores, 1, 20.0) for _ in range(2000)])
    inside = thetas[(thetas > 0.2) & (thetas < 0.8)]
    assert len(inside) > 1900
    assert stats.kstest((inside - 0.2) / 0.6, "uniform").pvalue > P_REJECT


def test_threshold_intervals_match_brute_force():
    scores = np.array([0.9, 0.1, 0.5, 0.5, 1.5])
    bounds, log_p = threshold_intervals(scores, 2, 0.8)
    ref_bounds, ref_p = exact_interval_probabilities(scores, 2, 0.8)
    assert np.allclose(bounds, ref_bounds)
    p = np.exp(log_p - np.logaddexp.reduce(log_p))
    assert np.allclose(p, ref_p, atol=1e-12)


def test_threshold_em_concentrates_near_k_with_large_epsilon():
    rng = randomness.test_mode_rng(0)
    scores = rng.random(200)
    theta = threshold_exponential_mechanism(scores, 80, 50.0)
    assert abs(int((scores >= theta).sum()) - 80) <= 3


def test_threshold_em_handles_empty_and_refuses_bad_input():
    assert 0.0 <= threshold_exponential_mechanism(np.array([]), 80, 0.4) <= 1.0
    with pytest.raises(PrivetError):
        threshold_exponential_mechanism(np.array([0.5]), 1, 0.0)
    with pytest.raises(PrivetError):
        threshold_exponential_mechanism(np.array([np.nan]), 1, 1.0)
    with pytest.raises(PrivetError):
        threshold_exponential_mechanism(np.array([0.5]), -1, 1.0)


# --- clipping and token sampling -----------------------------------------------------------------


@pytest.mark.parametrize("c", [0.01, 0.1162, 0.4, 5.0])
def test_clip_logits_bounds_and_keeps_the_top_token(c):
    g = randomness.test_mode_torch_generator(3)
    logits = torch.randn(16, 5000, generator=g) * 4
    logits[3, 17] = float("-inf")  # masked token
    out = clip_logits(logits, c)
    assert out.shape == logits.shape and out.device == logits.device
    assert torch.all(out <= c) and torch.all(out >= -c) and torch.isfinite(out).all()
    assert torch.equal(out.argmax(dim=-1), logits.argmax(dim=-1))
    # Per docs/method.md §2.4: exp(l − max), centred on (max+min)/2, scaled by min(1, c/‖·‖∞).
    s = torch.exp(logits - logits.amax(-1, keepdim=True))
    centred = s - (s.amax(-1, keepdim=True) + s.amin(-1, keepdim=True)) / 2
    expected = centred * torch.clamp(c / centred.abs().amax(-1, keepdim=True), max=1.0)
    assert torch.allclose(out, expected, atol=1e-7)


def test_clip_logits_degenerate_rows():
    logits = torch.zeros(2, 10)
    logits[1] = float("nan")
    out = clip_logits(logits, 0.1)
    assert torch.all(out == 0)
    half = clip_logits(torch.randn(2, 50).to(torch.bfloat16), 0.2)
    assert half.dtype == torch.float32 and torch.all(half.abs() <= 0.2)


@statistical
@pytest.mark.parametrize("tau", [1.0, 2.0])
def test_token_sampler_matches_softmax_over_the_whole_vocabulary(tau):
    vocab, rows = 1000, 5000
    z = torch.zeros(vocab, dtype=torch.float32)
    z[:10] = 5.0  # a strong head …
    z[10:100] = torch.linspace(2.0, 0.0, 90)  # … and a long, heavy tail
    sampler = TokenSampler(tau)
    tokens = sampler.sample(z.repeat(rows, 1))
    assert tokens.shape == (rows,) and tokens.dtype == torch.long
    p = torch.softmax(z.double() / tau, dim=-1).numpy()
    assert np.allclose(sampler.probabilities(z[None])[0].numpy(), p)
    # Categories: each of the first 100 tokens, then the flat tail in 9 groups of 100.
    t = tokens.numpy()
    observed = np.concatenate([np.bincount(t, minlength=vocab)[:100], np.bincount((t[t >= 100] - 100) // 100, minlength=9)])
    expected = np.concatenate([p[:100], [p[100 + 100 * i : 200 + 100 * i].sum() for i in range(9)]])
    assert chi_square_p(observed, expected) > P_REJECT
    # No truncation: tokens ranked far below the top 50 are drawn (expected several hundred times).
    assert (t >= 100).sum() > 0.5 * rows * p[100:].sum()


def test_token_sampler_never_draws_zero_probability_tokens_and_rows_are_independent():
    z = torch.full((3, 50), -1e6, dtype=torch.float64)
    z[0, 7] = 0.0
    z[1, 42] = 0.0
    z[2, :] = 0.0
    for _ in range(20):
        tokens = TokenSampler(1.0).sample(z)
        assert tokens[0] == 7 and tokens[1] == 42 and 0 <= tokens[2] < 50


def test_token_sampler_randomness():
    z = torch.zeros(200, 1000)
    assert not torch.equal(TokenSampler(1.0).sample(z), TokenSampler(1.0).sample(z))
    a = TokenSampler(1.0, generator=randomness.test_mode_torch_generator(5)).sample(z)
    b = TokenSampler(1.0, generator=randomness.test_mode_torch_generator(5)).sample(z)
    assert torch.equal(a, b)
    assert "no top-k" in SAMPLER_DESCRIPTIONS[TOKEN_SAMPLER]
    with pytest.raises(PrivetError):
        TokenSampler(0.0)
    with pytest.raises(PrivetError):
        TokenSampler(1.0).sample(torch.zeros(5))


# --- randomness ----------------------------------------------------------------------------------


def test_secure_generators_differ_between_calls():
    assert not np.array_equal(randomness.secure_rng().random(8), randomness.secure_rng().random(8))
    a, b = randomness.secure_torch_generator("cpu"), randomness.secure_torch_generator("cpu")
    assert a.initial_seed() != b.initial_seed()
    assert not torch.equal(torch.rand(8, generator=a), torch.rand(8, generator=b))


def test_test_mode_generators_are_reproducible():
    assert np.array_equal(randomness.test_mode_rng(1).random(4), randomness.test_mode_rng(1).random(4))
    g1, g2 = randomness.test_mode_torch_generator(1), randomness.test_mode_torch_generator(1)
    assert torch.equal(torch.rand(4, generator=g1), torch.rand(4, generator=g2))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_mechanisms_on_cuda():
    logits = torch.randn(4, 1000, device="cuda")
    out = clip_logits(logits, 0.1)
    assert out.device.type == "cuda" and torch.all(out.abs() <= 0.1)
    tokens = TokenSampler(1.0).sample(out * 80)
    assert tokens.device.type == "cuda" and tokens.shape == (4,)
