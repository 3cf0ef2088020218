"""The methods a run spec can name, registered once: every other list of methods is derived from here.

Each entry says what the rest of Privet needs to know about a method without loading it: its run-spec
key, its short name, where its adapter lives (``core.methods.registry.get`` imports it on first use:
the adapters load the model code), how the certificate names it and its neighbouring relation, whether
it can claim an end-to-end guarantee, and the wizard's words for it. The run spec's
``METHOD_NAMES``, the privacy record's and the certificate's method lists, the desktop's method page and
short names all read this tuple. Nothing here imports torch, the methods or the run spec.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_NEIGHBOURING = "add or remove one unit (unbounded differential privacy)"
END_TO_END = "End-to-end differential privacy for every unit of the corpus."


@dataclass(frozen=True)
class MethodEntry:
    key: str  # the run spec's ``method``
    short_name: str  # "DP-SynRAG": screens and the certificate
    adapter: str  # "module:Class" of its ``core.methods.base.Method`` adapter, imported on first use
    certificate_name: str  # the certificate's one-line description
    title: str  # the wizard's method page: title, when to use it, its privacy scope
    explanation: str
    scope: str = END_TO_END
    neighbouring: str = DEFAULT_NEIGHBOURING
    end_to_end_dp: bool = True  # False: the run may not claim an end-to-end DP guarantee (RPSG)


METHODS: tuple[MethodEntry, ...] = (  # in the wizard's order
    MethodEntry(
        key="dp_synrag",
        short_name="DP-SynRAG",
        adapter="core.methods.dp_synrag.method:DPSynRAGMethod",
        certificate_name="DP-SynRAG: a differentially private synthetic corpus generated from topic clusters",
        title="DP-SynRAG — a private knowledge base for question answering",
        explanation=(
            "Builds a synthetic knowledge base for retrieval-augmented generation: it groups the documents "
            "by topic and writes one synthetic document per well-supported topic, keeping topic-specific facts. "
            "Use it when people will ask questions of the data; the budget is spent once and any number of "
            "questions can then be answered for free."
        ),
    ),
    MethodEntry(
        key="dp_synth",
        short_name="DP-Synth",
        adapter="core.methods.dp_synth:DPSynthMethod",
        certificate_name="DP-Synth: differentially private generation over random batches of units",
        title="DP-Synth — synthetic documents from random batches",
        explanation=(
            "Writes each synthetic document from a random batch of private documents, one token at a time with "
            "differentially private next-token prediction. Simpler than DP-SynRAG and without topics: use it for a "
            "general-purpose synthetic corpus when no questions will be asked of it."
        ),
    ),
    MethodEntry(
        key="rpsg",
        short_name="RPSG",
        adapter="core.methods.rpsg.method:RPSGMethod",
        certificate_name="RPSG: realistic one-to-one rewrites with a differentially private choice of abstraction",
        title="RPSG — realistic one-to-one rewrites",
        explanation=(
            "Rewrites each private document into a realistic new one from an abstract summary, keeping intent "
            "and tone. Use it when you need realistic look-alike documents, for example to test software."
        ),
        scope=(
            "Weaker formal scope: the privacy guarantee covers only which summary is chosen, not the whole "
            "process. It relies on filters and an empirical audit, so treat its output as de-identified, not "
            "as differentially private."
        ),
        neighbouring=(
            "replace one unit by another, with every unit's set of candidate abstractions held fixed (the formal "
            "step is only the choice among the candidates; bounded differential privacy)"
        ),
        end_to_end_dp=False,
    ),
    MethodEntry(
        key="aug_pe",
        short_name="Aug-PE",
        adapter="core.methods.aug_pe:AugPEMethod",
        certificate_name=(
            "Aug-PE: a public model's texts selected and evolved by differentially private nearest-neighbour votes"
        ),
        title="Aug-PE — private evolution of a public model's texts",
        explanation=(
            "A public model writes candidate texts from your task description alone; the private documents only "
            "vote, privately, for the candidates closest to them, and the winners are rewritten and voted on again. "
            "Choose it when you do not want the model to read private text at all, or when only an API-style model "
            "(text in, text out) is available; expect less specific content than DP-SynRAG."
        ),
    ),
)


def names() -> tuple[str, ...]:
    """The method names a run spec can use, sorted."""
    return tuple(sorted(m.key for m in METHODS))


def entry(key: str) -> MethodEntry | None:
    """The registered method of that key, or None."""
    return next((m for m in METHODS if m.key == key), None)


def short_names() -> dict[str, str]:
    return {m.key: m.short_name for m in METHODS}
