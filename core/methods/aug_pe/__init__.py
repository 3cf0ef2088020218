"""Aug-PE: private evolution for text (Xie et al., ICML 2024; docs/method.md §4), laid out like DPSDA's ``pe/``.

A public language model writes candidate texts from public prompts; each private unit votes for
its nearest candidate in embedding space; a Gaussian-noised, thresholded vote histogram keeps the
winners; the public model writes variations of the winners; repeat for T iterations.

* ``llm`` — batched public generation over the model's KV-cache session (temperature / top-p);
* ``population`` — RANDOM_API (initial candidates) and VARIATION_API (winners + rewrites);
* ``histogram`` — one-vote-per-unit nearest-neighbour histogram, its Gaussian release, threshold H;
* ``runner`` — the loop, charging each iteration before it draws and checkpointing what it released;
* ``adapter`` — the method as the pipeline and the registry see it;
* ``facts`` — its labels, words, work estimate and wizard options (``core.specs.method_catalogue.MethodFacts``).

Privacy (zCDP): each iteration is a Gaussian mechanism with Δ = 1, ρ_t = 1/(2σ²); T iterations
compose to ρ = T·ρ_t, planned by ``core.methods.aug_pe.plan.plan_aug_pe``. Only the unit's vote touches
private data; the model never sees private text.
"""

from typing import Any

__all__ = ["AugPEMethod"]


def __getattr__(name: str) -> Any:
    """``AugPEMethod`` on first use: its facts (``facts``) are read without loading the model code."""
    if name == "AugPEMethod":
        from core.methods.aug_pe.adapter import AugPEMethod

        return AugPEMethod
    raise AttributeError(name)
