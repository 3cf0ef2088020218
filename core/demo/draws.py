"""The deterministic draws the public demo corpora are made from: the demo seed, independent random streams,
seeded fake names, and the small helpers every corpus kind uses to pick and join words.

Everything drawn here is *public* demo data, so fixed seeds are allowed (tests/codebase/test_architecture.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

DEMO_SEED = 20251007


def stream_rng(seed: int, stream: int) -> np.random.Generator:
    """Independent deterministic streams, so e.g. the catalogue does not depend on n_patients."""
    return np.random.default_rng([seed, stream])


def seeded_faker(seed: int, stream: int):
    from faker import Faker

    fake = Faker("en_US")
    fake.seed_instance(seed * 1000 + stream)
    return fake


def pick(rng: np.random.Generator, options: Sequence):
    return options[int(rng.integers(len(options)))]


def join_words(items: Sequence[str]) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def unique_name(fake, female: bool, taken: set[str]) -> str:
    while True:
        first = fake.first_name_female() if female else fake.first_name_male()
        name = f"{first} {fake.last_name()}"
        if name not in taken:
            taken.add(name)
            return name
