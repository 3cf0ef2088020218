"""The adaptive default (docs/method.md §2.7): the settings a custodian leaves alone, chosen by public rules.

One default for the library, the CLI, the wizard and the demo. A setting the spec states is kept as it is;
one left at 0 (or unset) is chosen here:

* **Public rules** (before anything is charged; :func:`with_public_defaults`): the document form from the
  task's words (``forms``); L = 1 without a token stage, the seed's 5 with one
  (``DPSynRAGSpec.clusters_per_unit``); DP phrase discovery on, a public domain list or not (a list rarely
  names a corpus's own terms); no token stage (``text = "realised"``); the similarity self-filter; the corpus's
  own length (``length = "auto"``: a DP median with the public writer, ``DPSynRAGSpec.length_setting``).
* **Size rules** (:func:`with_size`), from the corpus's size n̂: the DP size count the run releases first
  (``size.release_size``; 2 % of ρ, on the certificate), or the public upper bound the custodian states
  (``size_bound``). Nothing else about the corpus is read.

  - R, the most topics a run looks for: a topic needs about s units sharing its word to clear the noise
    (s = ``significance_threshold(σ_h, |V|)``, public) and a unit counts in at most L topics, so a corpus
    of n̂ units can hold at most L·n̂/s topics of that support: R = clamp(⌈L·n̂/s⌉, 10, 500). The realised
    path writes one document per topic found, so R also bounds the writer's calls (the time).
  - k, the private documents per topic of a token stage: clamp(round(n̂/10), 10, 80).

The screens forecast with the custodian's own count of units (on screen only, never exported); the run
uses n̂. Both are post-processing of public values or of a released one: no further cost.
"""

from __future__ import annotations

import copy
import math
from dataclasses import replace

from core.methods.dp_synrag.shape.forms import with_chosen_form
from core.privacy.forecast import FEWEST_TOPICS, significance_threshold
from core.specs.runspec import DPSynRAGSpec, RunSpec

MIN_TOPICS = FEWEST_TOPICS  # R never below the shape's floor of written topics (docs/method.md §6.2)
MAX_TOPICS = 500  # the seed's R
MIN_UNITS_PER_TOPIC = 10  # k's range: the seed's k = 80 at most
MAX_UNITS_PER_TOPIC = 80


def with_public_defaults(spec: RunSpec) -> RunSpec:
    """``spec`` with every setting a public rule decides filled in (a copy; ``spec`` is unchanged): the
    document form and L. R and k wait for the size (:func:`with_size`)."""
    chosen = copy.deepcopy(with_chosen_form(spec))
    chosen.dp_synrag.L = chosen.dp_synrag.clusters_per_unit
    return chosen


def topic_cap(n_units: float, sigma_h: float, vocab_size: int, L: int) -> int:
    """R = clamp(⌈L·n/s⌉, 10, 500), s the noisy count a topic word must reach (public)."""
    support = significance_threshold(sigma_h, vocab_size)
    wanted = math.ceil(max(float(n_units), 0.0) * L / support) if support > 0 else MAX_TOPICS
    return int(min(MAX_TOPICS, max(MIN_TOPICS, wanted)))


def units_per_topic(n_units: float) -> int:
    """k = clamp(round(n/10), 10, 80)."""
    return int(min(MAX_UNITS_PER_TOPIC, max(MIN_UNITS_PER_TOPIC, round(max(float(n_units), 0.0) / 10))))


def uses_k(spec: DPSynRAGSpec) -> bool:
    """Whether k plays a part: the token stage's row bound and candidate margin, or retrieval refinement."""
    return spec.token_stage or spec.refine


def with_size(spec: DPSynRAGSpec, size: float | None, sigma_h: float, vocab_size: int) -> DPSynRAGSpec:
    """``spec`` with R (and k where it plays a part) chosen where the spec leaves them at 0 (a copy), from the
    custodian's public bound when stated, else ``size``: the released DP count in a run, the custodian's own
    count on screen. None: the plan has no size count, so every setting that depends on it is stated."""
    n = float(spec.size_bound) if spec.size_bound else size
    L = spec.clusters_per_unit
    if n is None:
        if not spec.R or (uses_k(spec) and not spec.k):
            raise ValueError("a size-dependent setting is left to the adaptive default but no size was released")
        return replace(spec, L=L)
    return replace(
        spec,
        L=L,
        R=spec.R or topic_cap(n, sigma_h, vocab_size, L),
        k=spec.k or (units_per_topic(n) if uses_k(spec) else 0),
    )


def chosen_settings_words(before: DPSynRAGSpec, after: DPSynRAGSpec, size: float | None) -> str:
    """The certificate's sentence on what the size rules chose (public: the released size or the stated bound,
    and the rules); "" when the spec stated every size-dependent setting."""
    chosen = [] if before.R else [f"at most R = {after.R} topics"]
    if not before.k and uses_k(before):
        chosen.append(f"about k = {after.k} private documents per topic")
    if not chosen:
        return ""
    source = (f"the public upper bound of {before.size_bound} units stated by the custodian" if before.size_bound
              else f"the released DP size count ({size:.0f} units after noise)")
    return ("Settings chosen by the adaptive default (docs/method.md section 2.7) from " + source + ": "
            + " and ".join(chosen) + ". Post-processing of a released value: no further cost.")
