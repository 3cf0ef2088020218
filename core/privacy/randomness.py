"""Where the randomness of every private draw comes from.

A differential-privacy guarantee assumes the noise is unpredictable to the adversary. Privet therefore
seeds every generator that touches private data from the operating system's entropy pool
(``os.urandom``), afresh on each call, and never stores, logs or returns the seed:

* :func:`secure_rng` — a NumPy ``Generator`` (PCG64) keyed with 256 bits of OS entropy. Used for
  floating-point draws such as the threshold exponential mechanism.
* :func:`secure_torch_generator` — a ``torch.Generator`` on the model's device keyed with 64 bits of OS
  entropy (torch accepts at most 64 seed bits). Used by the token sampler, which must draw on the
  same device as the logits.
* The Gaussian noise of released statistics does not use these at all: it comes from OpenDP's exact
  sampler, which draws from OpenDP's own OS-seeded cryptographic generator (see mechanisms.py).

PCG64 and torch's generators are not cryptographic generators; they are seeded unpredictably and used
for one stage at a time. Only the noisy results are released, never raw generator output next to the
values it was added to.

:func:`test_mode_rng` and :func:`test_mode_torch_generator` exist only for the explicit, non-private
test mode (``RunSpec.test_mode_seed``), whose results the export refuses to release.
"""

from __future__ import annotations

import os

import numpy as np
import torch


def _entropy_int(n_bytes: int) -> int:
    return int.from_bytes(os.urandom(n_bytes), "little")


def secure_rng() -> np.random.Generator:
    """A fresh NumPy generator keyed with 256 bits from ``os.urandom`` (the key is never kept)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(_entropy_int(32))))


def secure_torch_generator(device: str | torch.device = "cpu") -> torch.Generator:
    """A fresh ``torch.Generator`` on ``device`` keyed with 64 bits from ``os.urandom``."""
    generator = torch.Generator(device=torch.device(device))
    generator.manual_seed(_entropy_int(8))
    return generator


def test_mode_rng(seed: int) -> np.random.Generator:
    """A reproducible NumPy generator. NON-PRIVATE: only for the explicit test mode."""
    return np.random.default_rng(seed)


def test_mode_torch_generator(seed: int, device: str | torch.device = "cpu") -> torch.Generator:
    """A reproducible ``torch.Generator``. NON-PRIVATE: only for the explicit test mode."""
    generator = torch.Generator(device=torch.device(device))
    generator.manual_seed(seed)
    return generator


def test_mode_keyed_uniform(seed: int, key: int, draw: int) -> float:
    """A reproducible uniform on [0, 1) for (seed, key, draw). NON-PRIVATE: only for the explicit test mode."""
    return float(np.random.default_rng([seed, key, draw]).random())


# Not pytest tests, even when imported by name into a test module.
test_mode_rng.__test__ = False  # type: ignore[attr-defined]
test_mode_torch_generator.__test__ = False  # type: ignore[attr-defined]
test_mode_keyed_uniform.__test__ = False  # type: ignore[attr-defined]
