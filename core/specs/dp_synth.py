"""DP-Synth's run-spec section ``[dp_synth]`` and its rules (docs/method.md §4.1).

DP-Synth is private prediction over random disjoint batches: it reads the batches, the token stage's
settings and the self-filter's, nothing of DP-SynRAG's keywords, topics or writer.

Upgrade path: a spec with ``method = "dp_synth"`` written before this section existed kept DP-Synth's
settings in ``[dp_synrag]``. ``RunSpec.dp_synth`` is then ``None`` and ``settings_of`` reads them from there,
as DP-Synth always did (``from_dp_synrag``); a spec with a ``[dp_synth]`` section reads that section only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from core.specs.document import DocumentSpec
from core.specs.dp_synrag import DPSynRAGSpec
from core.specs.rules import MAX_CLUSTERS, MAX_TOKENS, MAX_UNITS_PER_CLUSTER, MAX_VOCABULARY, Rule, number, text, whole

SEED_BATCHES = 500  # the seed's number of random disjoint batches (R when [dp_synrag] leaves R to its default)


@dataclass
class DPSynthSpec:
    """DP-Synth (Amin et al. 2024): R random disjoint batches, each writes one document by private prediction."""

    R: int = SEED_BATCHES  # random disjoint batches; one synthetic document each
    T: int = 70  # tokens per synthetic document
    tau: float = 1.0  # sampling temperature
    clip: str = "dclip"  # "dclip" (clamped differences to the public row) | "spec" (SPEC §2.4 clip)
    public_row: str = "empty"  # each batch's public row: "empty" (the instruction around an empty document) | "none"
    public_weight: float = 2.0  # lambda, weight of the public base (a public constant)
    top_k_plus: int = 0  # 0 = sample over the whole vocabulary; k = over V_k+ from public logits
    k: int = 0  # the rows per batch the Top-k+ candidate margin assumes (public; read only with top_k_plus)
    force_length: bool = False  # every batch writes exactly T tokens (EOS never sampled); throughput checks only
    self_filter: bool = True
    self_filter_mode: str = "similarity"  # "similarity" (embedder, task) | "score" (teacher-forced YES vs NO) | "answer"
    # The self-filter's public reference (document_form, public_example) is every method's: [document].

    RULES: ClassVar[dict[str, Rule]] = {
        "R": whole("the number of random batches", high=MAX_CLUSTERS),
        "T": whole("tokens per synthetic document", high=MAX_TOKENS),
        "tau": number("the sampling temperature τ", low=0, open_low=True),
        "clip": text("the clip", choices=("dclip", "spec")),
        "public_row": text("the public row", choices=("empty", "none")),
        "public_weight": number("the public base's weight λ", low=0, open_low=True),
        "top_k_plus": whole("candidate tokens (0 = all)", low=0, high=MAX_VOCABULARY),
        "k": whole("rows per batch the candidate margin assumes", low=0, high=MAX_UNITS_PER_CLUSTER, zero_default=True),
        "self_filter_mode": text("the self-filter", choices=("similarity", "score", "answer")),
    }

    @property
    def public_anchor(self) -> bool:
        """Whether each batch carries a public row."""
        return self.public_row != "none"

    @property
    def prediction_anchor(self) -> bool:
        """Whether the private-prediction engine reads a public row (``engine_config``)."""
        return self.public_anchor

    def problems(self, upgraded: bool = False) -> list[str]:
        """Settings that contradict each other (before anything is charged); ``upgraded``: read from a spec's
        ``[dp_synrag]`` (``from_dp_synrag``), so named as that section names them."""
        if self.public_row == "none" and (self.clip == "dclip" or self.top_k_plus):
            where, row, some = ("dp_synrag", "public_prompt", "keyword") if upgraded else ("dp_synth", "public_row", "empty")
            return [f"[{where}] clip = \"dclip\" and top_k_plus need a public row, but {row} = \"none\" (use "
                    f"{row} = \"{some}\", or clip = \"spec\" with top_k_plus = 0)"]
        return []

    @classmethod
    def from_dp_synrag(cls, p: DPSynRAGSpec) -> DPSynthSpec:
        """DP-Synth's settings as a spec without ``[dp_synth]`` states them in ``[dp_synrag]``: R (0: the seed's
        500), T, τ, the clip, the public row (any public prompt: the empty document), λ, Top-k+ and its k and the
        self-filter (its form is ``form_of``)."""
        return cls(
            R=int(p.R) if p.R else SEED_BATCHES, T=p.T, tau=p.tau, clip=p.clip,
            public_row="empty" if p.public_anchor else "none", public_weight=p.public_weight,
            top_k_plus=p.top_k_plus, k=p.k, force_length=p.force_length, self_filter=p.self_filter,
            self_filter_mode=p.self_filter_mode,
        )


def settings_of(spec: Any) -> DPSynthSpec:
    """The DP-Synth settings a run spec states: its ``[dp_synth]`` section, else (a spec written before that
    section existed) those it keeps in ``[dp_synrag]``."""
    own: DPSynthSpec | None = spec.dp_synth
    return own if own is not None else DPSynthSpec.from_dp_synrag(spec.dp_synrag)



def form_of(spec: Any) -> DocumentSpec:
    """The document form DP-Synth's self-filter reads: ``[document]``. A spec without ``[dp_synth]`` (the upgrade
    path) chose a form from the task only where DP-SynRAG's writer runs, as before: else an automatic form is none."""
    document: DocumentSpec = spec.document
    if spec.dp_synth is None and not document.document_form and not spec.dp_synrag.realisation:
        return replace(document, document_form="none")
    return document
