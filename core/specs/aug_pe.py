"""Aug-PE's run-spec section ``[aug_pe]`` and its rules (docs/method.md §4.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from core.specs.rules import MAX_BATCH, MAX_ITERATIONS, MAX_POPULATION, MAX_TOKENS, MAX_VARIATIONS, Rule, number, whole

@dataclass
class AugPESpec:
    """Aug-PE (private evolution, Xie et al. 2024): public model writes, private units vote."""

    iterations: int = 4  # DP vote histograms (the budget is split equally over them)
    population: int = 128  # candidate texts each histogram votes on
    variations: int = 2  # variations the public model writes of each selected winner
    threshold: float = 0.0  # H in votes: noisy counts below it are set to 0; 0 = 2 sigma of the plan
    max_new_tokens: int = 96  # length of each candidate text in tokens
    temperature: float = 1.0  # public generation only (no private text in the prompt)
    top_p: float = 0.95
    batch_size: int = 32  # texts written together over one KV cache

    # Read by RunSpec.problems on loading and by the plan (core.methods.aug_pe.plan.plan_aug_pe, check_section).
    # Sizes are bounded by core.specs.rules' size limits (a population of 1e9 would be charged, then never end).
    RULES: ClassVar[dict[str, Rule]] = {
        "iterations": whole("DP vote rounds", high=MAX_ITERATIONS),
        "population": whole("candidate texts per vote", high=MAX_POPULATION),
        "variations": whole("variations of each winner", high=MAX_VARIATIONS),
        "threshold": number("the vote threshold H (0 = 2 sigma of the plan)", low=0),
        "max_new_tokens": whole("tokens of each candidate text", high=MAX_TOKENS),
        "temperature": number("the public generation temperature; 0 = greedy", low=0),
        "top_p": number("the nucleus of public sampling; 1 = none", low=0, high=1, open_low=True),
        "batch_size": whole("texts written together", high=MAX_BATCH),
    }
