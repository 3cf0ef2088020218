"""The differentially private mechanisms of DP-SynRAG (docs/method.md §2), with the samplers they use.

* :func:`gaussian_noise` — vector Gaussian mechanism. By default the noise comes from OpenDP's exact
  sampler (discrete Gaussian on a 2^-40 grid drawn with integer arithmetic from OpenDP's OS-seeded
  cryptographic generator), which avoids the floating-point attacks of Mironov (2012).
* :func:`threshold_exponential_mechanism` — docs/method.md §2.3: the similarity threshold θ ∈ [0, 1] chosen by
  the exponential mechanism with utility −|#{scores ≥ θ} − k| (Δ = 1).
* :class:`TokenSampler` — docs/method.md §2.4: one token per cluster from softmax(z/τ) over the whole vocabulary.
* :func:`clip_logits` — docs/method.md §2.4: bounds each row's contribution to [−c, c] in every coordinate.
* :func:`gaussian_sparse_histogram` — docs/method.md §2.0: DP set union of the units' phrases (noise on the
  non-zero counts, release above a threshold; the threshold arithmetic is in ``core.privacy.set_union``).

:data:`SAMPLER_DESCRIPTIONS` says, for the certificate, which sampler each mechanism used and whether
it is exact or floating-point.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from core.common.errors import PrivetError
from core.privacy.gaussian import gaussian_noise as gaussian_noise
from core.privacy.randomness import secure_rng, secure_torch_generator, test_mode_keyed_uniform
from core.privacy.set_union import SCALE_SLACK, check_items

# --- sampler descriptions (for the certificate) -------------------------------------------------------

GAUSSIAN_OPENDP = "gaussian_opendp"
GAUSSIAN_NUMPY = "gaussian_numpy_test_mode"
THRESHOLD_EM = "threshold_exponential_mechanism"
TOKEN_SAMPLER = "token_sampler"


SAMPLER_DESCRIPTIONS: dict[str, str] = {
    GAUSSIAN_OPENDP: (
        "Gaussian noise: OpenDP 0.16 make_gaussian, exact sampling of the discrete Gaussian on the grid "
        "2^-40 with integer arithmetic, randomness from OpenDP's cryptographic generator seeded by the OS; "
        "σ raised by a relative 1e-6 and OpenDP's own privacy map checked to be within the charged ρ."
    ),
    GAUSSIAN_NUMPY: (
        "Gaussian noise: NumPy floating-point normal sampler (PCG64). Used only in the non-private test mode."
    ),
    THRESHOLD_EM: (
        "Similarity threshold: exponential mechanism over the intervals between sorted scores, sampled "
        "in floating point (Gumbel-max over log(width)+ε·u/2 in float64, then θ uniform in the interval) "
        "with a NumPy PCG64 generator keyed by 256 bits of OS entropy."
    ),
    TOKEN_SAMPLER: (
        "Tokens: softmax(z/τ) over the whole vocabulary, floating-point inverse-CDF sampling in float64 "
        "(running sum of exp(z/τ − max), one uniform per row) with a torch generator keyed by 64 bits of "
        "OS entropy; no top-k, top-p or other truncation."
    ),
}


# --- Gaussian mechanism ------------------------------------------------------------------------------


# --- Gaussian sparse histogram / DP set union (docs/method.md §2.0, core.privacy.set_union) ------------


@dataclass(frozen=True)
class SparseHistogram:
    """The released items and their noisy counts (both DP outputs), in alphabetical order."""

    items: tuple[str, ...]
    noisy_counts: tuple[float, ...]

    def as_dict(self) -> dict[str, float]:
        return dict(zip(self.items, self.noisy_counts))


def gaussian_sparse_histogram(
    counts: Mapping[str, int], sigma: float, tau: float, max_items: int, rng: np.random.Generator | None = None
) -> SparseHistogram:
    """Noise N(0, σ²) on every non-zero count (exact sampler unless ``rng``, test mode only); keep the
    items whose noisy count exceeds τ. The caller charges ρ = K/(2σ²) and δ_set before calling."""
    check_items(sigma, max_items)
    items = sorted(item for item, c in counts.items() if c > 0)
    values = np.asarray([float(counts[item]) for item in items], dtype=np.float64)
    noisy = gaussian_noise(values, sigma, rng=rng, sensitivity=math.sqrt(max_items), max_slack=SCALE_SLACK)
    kept = [(item, float(v)) for item, v in zip(items, noisy) if v > tau]
    return SparseHistogram(tuple(i for i, _ in kept), tuple(v for _, v in kept))


# --- threshold exponential mechanism (docs/method.md §2.3) ---------------------------------------------------


def threshold_intervals(similarities: np.ndarray, k: int, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """The interval boundaries [0, s_(1), …, s_(n), 1] and each interval's log-probability (unnormalised).

    Interval j (between the j-th and (j+1)-th boundary) holds the θ for which exactly n − j scores are
    ≥ θ, so its utility is −|n − j − k|; its weight is width · exp(ε·u/2). Zero-width intervals get −inf.
    """
    scores = np.clip(np.asarray(similarities, dtype=np.float64).ravel(), 0.0, 1.0)
    if np.any(np.isnan(scores)):
        raise PrivetError("A similarity score is NaN.", "This is a bug; please report it.")
    if not (epsilon > 0.0) or math.isinf(epsilon):
        raise PrivetError(f"The threshold ε must be a finite number > 0 (got {epsilon}).", "This is a bug in the caller.")
    if int(k) != k or k < 0:
        raise PrivetError(f"The target cluster size k must be a whole number ≥ 0 (got {k}).", "Use k = 80.")
    n = scores.size
    bounds = np.concatenate(([0.0], np.sort(scores), [1.0]))
    widths = np.diff(bounds)
    utility = -np.abs((n - np.arange(n + 1)) - int(k)).astype(np.float64)
    with np.errstate(divide="ignore"):
        log_weight = np.where(widths > 0.0, np.log(np.where(widths > 0.0, widths, 1.0)), -np.inf)
    return bounds, log_weight + 0.5 * float(epsilon) * utility


def threshold_exponential_mechanism(
    similarities: np.ndarray, k: int, epsilon: float, rng: np.random.Generator | None = None
) -> float:
    """Choose θ ∈ [0, 1] with density ∝ exp(ε·u(θ)/2), u(θ) = −|#{scores ≥ θ} − k| (docs/method.md §2.3).

    Scores are clipped to [0, 1]. Adding or removing a unit changes u(θ) by at most 1 for every θ and
    the base measure (uniform on [0, 1]) does not depend on the data, so this is ε-bounded-range:
    ρ = ε²/8. Sampled exactly as: pick an interval ∝ width·exp(ε·u/2) by Gumbel-max in log space,
    then θ uniform inside it.
    """
    rng = rng if rng is not None else secure_rng()
    bounds, log_p = threshold_intervals(similarities, k, epsilon)
    index = int(np.argmax(log_p + rng.gumbel(size=log_p.shape)))
    low, high = bounds[index], bounds[index + 1]
    return float(min(low + rng.random() * (high - low), high))


# --- private prediction (docs/method.md §2.4) -----------------------------------------------------------------


def clip_logits(logits: torch.Tensor, c: float) -> torch.Tensor:
    """Bound each row to [−c, c] (docs/method.md §2.4), on the input's device.

    s = exp(l − max l) (the top token becomes 1), subtract (max s + min s)/2, then scale by
    min(1, c/‖·‖∞). The final clamp (and NaN → 0) guarantees the bound whatever the input, which is
    what the privacy analysis needs: each unit moves every coordinate of the sum by at most c.
    """
    if not (c > 0.0) or math.isinf(c):
        raise PrivetError(f"The clip bound c must be a finite number > 0 (got {c}).", "This is a bug in the caller.")
    x = logits if logits.dtype in (torch.float32, torch.float64) else logits.float()
    s = torch.exp(x - x.amax(dim=-1, keepdim=True))
    centred = s - (s.amax(dim=-1, keepdim=True) + s.amin(dim=-1, keepdim=True)) / 2.0
    norm = centred.abs().amax(dim=-1, keepdim=True)
    scale = torch.clamp(c / norm, max=1.0)  # norm = 0 gives inf, clamped to 1
    out = torch.nan_to_num(centred * scale, nan=0.0, posinf=c, neginf=-c)
    return torch.clamp(out, -c, c)


class TokenSampler:
    """Draws one token per row from softmax(z/τ) over the whole vocabulary (docs/method.md §2.4).

    ``z`` is a [n_clusters, V] tensor of summed clipped logits. No top-k, top-p or any other truncation
    is applied. Probabilities are computed in float64 (on the CPU when the device has no float64, e.g.
    MPS). With clipping, z/τ spans at most 2·|S|·c/τ, far from float64 underflow, so every token keeps a
    positive probability. The generator is keyed from OS entropy unless one is passed (test mode only).
    """

    def __init__(self, tau: float, generator: torch.Generator | None = None) -> None:
        if not (tau > 0.0) or math.isinf(tau):
            raise PrivetError(f"The temperature τ must be > 0 (got {tau}).", "Use τ = 1.0.")
        self.tau = float(tau)
        self._fixed = generator
        self._generators: dict[str, torch.Generator] = {}
        self._draws: dict[int, int] = {}  # test mode with keys: draws made so far per key

    def _generator(self, device: torch.device) -> torch.Generator:
        if self._fixed is not None:
            return self._fixed
        key = str(device)
        if key not in self._generators:
            self._generators[key] = secure_torch_generator(device)
        return self._generators[key]

    def _log_weights(self, z: torch.Tensor) -> torch.Tensor:
        if z.dim() != 2:
            raise PrivetError(
                f"The token sampler expects [clusters, vocabulary] logits, got shape {tuple(z.shape)}.", "This is a bug."
            )
        if z.device.type == "mps":  # no float64 there
            z = z.cpu()
        x = z.to(torch.float64) / self.tau
        return x - x.amax(dim=-1, keepdim=True)

    def probabilities(self, z: torch.Tensor) -> torch.Tensor:
        """softmax(z/τ) in float64 — the distribution :meth:`sample` draws from."""
        return torch.softmax(self._log_weights(z), dim=-1)

    def sample(self, z: torch.Tensor, keys: Sequence[int] | None = None) -> torch.Tensor:
        """One token id per row (LongTensor [n_clusters]) on the sampling device.

        Inverse-CDF sampling in float64: w = exp(z/τ − max), u uniform on [0, Σw), token = the first
        index whose running sum exceeds u. A token with w = 0 can never be drawn; every other token is
        drawn with probability w/Σw up to float64 rounding of the running sum (≈ V·2^-53 relative).

        ``keys`` (one non-negative int per row, e.g. the group id) matters only in the non-private test
        mode (a fixed generator): row i's uniform then comes from a generator derived from (test seed,
        keys[i], number of earlier draws for keys[i]), so a group's tokens do not depend on which other
        groups share its batch, its wave or its worker (the sharded path reproduces the single-process
        texts). Outside the test mode ``keys`` is ignored and every uniform comes from the OS-keyed
        generator, as before.
        """
        log_w = self._log_weights(z)
        if self._fixed is not None and self._fixed.device != log_w.device:
            log_w = log_w.to(self._fixed.device)
        cumulative = torch.cumsum(torch.exp(log_w), dim=-1)
        total = cumulative[:, -1:]
        if self._fixed is not None and keys is not None:
            u = self._keyed_test_uniforms(keys, total.shape[0]).to(total.device)
        else:
            u = torch.rand(
                total.shape, dtype=torch.float64, device=total.device, generator=self._generator(total.device)
            )
        u = torch.minimum(u * total, torch.nextafter(total, torch.zeros_like(total)))  # keep u < Σw
        return torch.searchsorted(cumulative, u, right=True).squeeze(-1)

    def _keyed_test_uniforms(self, keys: Sequence[int], n_rows: int) -> torch.Tensor:
        """TEST MODE ONLY: one uniform per row from SeedSequence(test seed, key, draw number)."""
        if len(keys) != n_rows:
            raise PrivetError(f"The token sampler got {len(keys)} keys for {n_rows} rows.", "This is a bug.")
        if self._fixed is None:
            raise PrivetError("Keyed draws exist only in the explicit test mode.", "This is a bug.")
        seed = int(self._fixed.initial_seed())
        values = []
        for key in keys:
            key = int(key)
            if key < 0:
                raise PrivetError(f"A token-sampler key must be >= 0 (got {key}).", "This is a bug.")
            n = self._draws.get(key, 0)
            self._draws[key] = n + 1
            values.append(test_mode_keyed_uniform(seed, key, n))
        return torch.tensor(values, dtype=torch.float64).unsqueeze(1)
