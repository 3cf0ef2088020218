"""RPSG's run-spec section ``[rpsg]`` and its rules (docs/method.md §3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from core.specs.rules import MAX_BATCH, MAX_TOKENS, MAX_VARIATIONS, Rule, number, whole

@dataclass
class RPSGSpec:
    m: int = 5  # candidate abstractions per seed
    similarity_threshold: float = 0.9
    nll_percentile: float = 10.0
    temperature: float = 0.8
    max_new_tokens: int = 120
    n_variants: int = 2
    batch_size: int = 8
    pii_patterns: dict[str, list[str]] = field(default_factory=dict)  # extra regexes per kind, e.g. {"ID": ["MRN-\\d+"]}
    pii_names: list[str] = field(default_factory=list)  # the custodian's own names to mask
    pii_places: list[str] = field(default_factory=list)

    # The one statement of RPSG's ranges (RunSpec.problems and core.methods.rpsg.algorithm.check_params read these rules).
    RULES: ClassVar[dict[str, Rule]] = {
        "m": whole("candidate abstractions per seed", high=MAX_VARIATIONS),
        "similarity_threshold": number("the similarity threshold", low=0, high=1, open_low=True),
        "nll_percentile": number("the NLL percentile", low=0, high=100, open_high=True),
        "temperature": number("the generation temperature; 0 = greedy", low=0),
        "max_new_tokens": whole("tokens per generation", high=MAX_TOKENS),
        "n_variants": whole("variants per seed before the final text", low=0, high=MAX_VARIATIONS),
        "batch_size": whole("the batch size", high=MAX_BATCH),
        "pii_patterns": Rule("mapping", "extra PII patterns"),
    }
