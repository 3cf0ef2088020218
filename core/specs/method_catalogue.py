"""The methods a run spec can name, registered once: every other list of methods is derived from here.

Each entry says what the rest of Privet needs to know about a method without loading it: its run-spec
key, its short name, where its adapter lives (``core.methods.registry.get`` imports it on first use:
the adapters load the model code), how the certificate names it and its neighbouring relation, whether
it can claim an end-to-end guarantee, the wizard's words for it, and where its facts live.

A method's facts (:class:`MethodFacts`: its stage labels, the certificate's words for its parameters, its
work estimate, what the wizard asks for it, what ``privet plan`` adds and why a run of it writes few
documents) are in its own package (``core/methods/<m>/facts.py``), imported on first use by :func:`facts`.
The pipeline, ``privet plan``, the estimate, the certificate, the export, the progress labels and the
desktop read them here and never branch on a method's name. The run spec's ``METHOD_NAMES``, the privacy
record's and the certificate's method lists, the desktop's method page and short names all read this
tuple. Nothing here imports torch, the methods or the run spec (a facts module imports nothing heavy at
its top; a test checks it).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:  # annotations only: the run spec imports this module
    from core.specs.dp_synrag import DPSynRAGSpec
    from core.specs.dp_synth import DPSynthSpec
    from core.specs.runspec import RunSpec

DEFAULT_NEIGHBOURING = "add or remove one unit (unbounded differential privacy)"
END_TO_END = "End-to-end differential privacy for every unit of the corpus."


def _shared_values(spec: RunSpec) -> WizardValues:
    """The task page's shape settings as the shared ``[dp_synrag]`` section holds them, and the form ``[document]``."""
    p = spec.dp_synrag
    return WizardValues(documents=p.documents, documents_setting=p.documents_setting, token_stage=p.token_stage,
                        k=p.k, document_form=spec.document.document_form, public_example=spec.document.public_example,
                        domain_lists=tuple(p.domain_lists), discover_phrases=p.discover_phrases)


def _store_shared_values(spec: RunSpec, values: WizardValues) -> None:
    """Store the task page's shape settings in the shared ``[dp_synrag]`` section, and the form in ``[document]``."""
    p = spec.dp_synrag
    p.documents, p.k = values.documents, values.k
    spec.document.document_form, spec.document.public_example = values.document_form, values.public_example
    p.domain_lists, p.discover_phrases = list(values.domain_lists), values.discover_phrases


class WorkSpeeds(Protocol):
    """The speeds a method's work estimate reads (``core.run.estimate`` passes its own, for the chosen model)."""

    @property
    def embed(self) -> float: ...  # units embedded per second

    @property
    def prompt(self) -> int: ...  # tokens of a typical prompt

    def llm(self, prompt_tokens: float, row_tokens: float) -> float: ...  # seconds of prefill and decoding

    def batches(self, rows: Sequence[float], tokens: int) -> float: ...  # seconds of the writer's batches

    def cpu(self, seconds: float) -> float: ...  # work with no model, in the built-in figures' seconds


@dataclass(frozen=True)
class WizardOptions:
    """What the wizard's task page asks for a method (``desktop/wizard/task_page.py`` reads it)."""

    # How many documents: "topics" (one per topic or as asked: WizardValues.documents), "number" (the spin box
    # sets R in the section MethodFacts.wizard_section gives), "one_per_unit" (not asked: one per private
    # document), "settings" (not asked: the method's own section decides; count_note says how).
    documents: str = "number"
    count_note: str = ""  # the note under the number of documents, unless it counts topics
    # the Advanced box: tokens per document and the self-filter's choice, stored as T and self_filter in the
    # section MethodFacts.wizard_section gives
    writes_tokens: bool = True
    cluster_size: bool = False  # private documents per topic (k)
    self_filter: bool = False  # the self-filter check box is enabled
    document_form: bool = False  # the document form and its invented example (checked against the corpus)
    topic_names: bool = False  # public word lists and DP phrase discovery
    # documents (with "topics"), k, the form and its example and the topic names are WizardValues, stored through
    # MethodFacts.store_wizard_values


@dataclass(frozen=True)
class WizardValues:
    """The settings of a corpus's shape the wizard shows and edits, as a method's facts read them from a spec
    (``MethodFacts.wizard_values``) and store them back (``MethodFacts.store_wizard_values``). The task page
    edits those its ``WizardOptions`` ask for and shows the others disabled; the confirm page reads
    ``documents_setting``."""

    documents: int = 0  # how many documents: -2 automatic, 0 one per topic, -1 about the data's size, or N
    documents_setting: int = 0  # ``documents`` as it applies to the spec's way of writing (read only)
    token_stage: bool = False  # whether a charged token stage writes (then one document per topic; read only)
    k: int = 0  # private documents per topic (0: the adaptive default chooses)
    document_form: str = ""  # the shipped form of the documents ("" chosen from the task's words)
    public_example: str = ""  # the custodian's invented example of the form
    domain_lists: tuple[str, ...] = ()  # public word lists for topic names (a shipped list's name, or a path)
    discover_phrases: bool = False  # the corpus's own phrases found with DP


@dataclass(frozen=True)
class ReleasedFormsView:
    """The desktop's Review page: the corpus's own forms a run released under DP (``MethodFacts.released_forms``).

    Released values (DP outputs, public) and their post-processing only; the fallback's name is a public setting."""

    forms: tuple[tuple[str, float], ...] = ()  # (skeleton, noisy count), largest count first
    followed: bool = False  # the documents were written in them (else in the shipped fallback form)
    fallback_form: str = ""  # the shipped form the documents follow otherwise ("Case file")


class MethodFacts:
    """What the rest of Privet needs to know about one method, kept in the method's own package: a method
    subclasses this (``class DPSynRAGFacts(MethodFacts)``), sets the data it has and overrides the hooks it
    needs; each hook here is the default for a method that has nothing to add.

    Hooks take the run spec (and the other arguments named) and return plain values; none reads private data
    but ``plan_lines``, which prints only what ``privet plan`` shows on screen. A corpus, a privacy record and a
    plan's expected settings belong to layers above the run spec: they are typed ``Any`` here."""

    stage_labels: ClassVar[Mapping[str, str]] = {}  # stage key -> plain name (core.specs.stage_labels)
    # "stage_<round>" stages: the key's head -> its plain name with "{round}" (Aug-PE's votes per round)
    round_labels: ClassVar[Mapping[str, str]] = {}
    parameter_meanings: ClassVar[Mapping[str, str]] = {}  # the certificate's "meaning" column
    documents_asked: ClassVar[str | None] = "R"  # core.run.export: the parameter that says how many were asked for
    wizard: ClassVar[WizardOptions] = WizardOptions()  # what the wizard's task page asks for the method

    def work(self, spec: RunSpec, n_units: int, speeds: WorkSpeeds,
             topics: float | None = None) -> list[tuple[str, float]]:
        """``core.run.estimate``: [(stage, seconds at the built-in speeds)] of a run on ``n_units`` units;
        ``topics``: the groups (documents) the run is expected to write, when known."""
        return []

    def work_groups(self, spec: RunSpec, topics: float | None) -> float | None:
        """``core.run.estimate``: the groups (documents) a run writes, counted by its per-document stages; None:
        per unit."""
        return None

    def few_documents_reason(self, record: Any) -> str | None:
        """``core.run.export``: why a run (its privacy record) wrote few documents, in the method's words."""
        return None

    def parameters_not_used(self, params: dict[str, Any]) -> list[str]:
        """The certificate: the recorded settings of stages that did not run."""
        return []

    def plan_header(self, spec: RunSpec) -> list[str]:
        """``privet plan``: lines after "Method:"."""
        return []

    def plan_lines(self, spec: RunSpec, corpus: Any, delta: float) -> list[str]:
        """``privet plan``: lines about the loaded corpus (on screen only)."""
        return []

    def plan_notes(self, spec: RunSpec) -> list[str]:
        """``privet plan``: "Note (advanced)" lines."""
        return []

    def expected_settings_lines(self, spec: RunSpec, expected: Any) -> list[str]:
        """``privet plan``, after the expected documents: the settings the adaptive default is expected to choose
        (``PlanSummary.expected_settings``); [] when the spec states them all."""
        return []

    def priced_documents(self, spec: RunSpec, documents: int) -> RunSpec:
        """``core.run.planning``'s estimate when N documents are asked for: the spec to price so that N are written
        (a copy, or the spec itself when nothing changes)."""
        return spec

    def spec_problems(self, spec: RunSpec) -> list[str]:
        """``core.specs.runspec``: the method's own checks of a spec."""
        return []

    def public_defaults(self, spec: RunSpec) -> RunSpec:
        """The pipeline, the plan and a resume: the spec with what the method's public rules decide filled in (a
        copy)."""
        return copy.deepcopy(spec)

    def check_corpus(self, spec: RunSpec, corpus: Any) -> None:
        """The pipeline and the plan, before any charge: raises ``PrivetError`` to refuse the run on this corpus."""
        return None

    def example_problem(self, document_form: str, example: str, corpus: Any) -> str:
        """The desktop: why the typed example of the document form looks like a real document of ``corpus`` ("" if
        not)."""
        return ""

    def released_allocation(self, run_dir: Path | str) -> list[tuple[str, float, int]]:
        """The desktop's Review page: a finished run's topics (word, released count, documents); [] if none."""
        return []

    def released_forms(self, run_dir: Path | str) -> list[ReleasedFormsView]:
        """The desktop's Review page: the corpus's own forms a finished run released under DP and whether the
        documents were written in them, or [] when the run looked for no forms."""
        return []

    def stated_unit_bound(self, spec: RunSpec) -> int:
        """``core.run.planning``'s gate: the public upper bound on the units the method's own section states (0:
        none)."""
        return 0

    def wizard_section(self, spec: RunSpec) -> DPSynRAGSpec | DPSynthSpec:
        """The wizard: the run-spec section its task page stores the number of documents (R), the tokens (T) and
        the self-filter in (created in the spec if the method's section is optional and missing)."""
        return spec.dp_synrag

    def wizard_values(self, spec: RunSpec) -> WizardValues:
        """The wizard: the shape settings the task page shows (documents, k, the form and its example, topic
        names), read from the spec; the shared ``[dp_synrag]`` section's unless the method keeps them elsewhere."""
        return _shared_values(spec)

    def store_wizard_values(self, spec: RunSpec, values: WizardValues) -> None:
        """The wizard: the task page's values stored back into the spec."""
        _store_shared_values(spec, values)


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
    facts: str = ""  # "module:NAME" of its MethodFacts instance, in its package; imported on first use (facts())
    # How it keeps a [data] label column (docs/method.md §6.3): "per_class" (run once per class), "topic_labels"
    # (per class, or by topic: what label_mode "auto" chooses for it), "" (it cannot keep labels)
    labels: str = ""
    # Whether its section held the document form (document_form, public_example) before the shared [document]
    # existed: an older spec's form is read from there (core.specs.document.move_document_settings)
    form_in_section: bool = False


METHODS: tuple[MethodEntry, ...] = (  # in the wizard's order
    MethodEntry(
        key="dp_synrag",
        short_name="DP-SynRAG",
        adapter="core.methods.dp_synrag.method:DPSynRAGMethod",
        facts="core.methods.dp_synrag.facts:FACTS",
        labels="topic_labels",
        form_in_section=True,
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
        adapter="core.methods.dp_synth.method:DPSynthMethod",
        facts="core.methods.dp_synth.facts:FACTS",
        labels="per_class",
        form_in_section=True,
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
        facts="core.methods.rpsg.facts:FACTS",
        labels="per_class",
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
        adapter="core.methods.aug_pe.adapter:AugPEMethod",
        facts="core.methods.aug_pe.facts:FACTS",
        labels="per_class",
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


def class_conditional_methods() -> tuple[str, ...]:
    """The methods that keep a label column (``labels`` set), in the catalogue's order."""
    return tuple(m.key for m in METHODS if m.labels)


def topic_label_methods() -> tuple[str, ...]:
    """The methods that can label documents by topic (``labels = "topic_labels"``)."""
    return tuple(m.key for m in METHODS if m.labels == "topic_labels")


def short_names() -> dict[str, str]:
    return {m.key: m.short_name for m in METHODS}


def facts(key: str) -> MethodFacts:
    """The facts of the registered method ``key``, from its own package (imported on first use)."""
    found = entry(key)
    if found is None:
        raise KeyError(f"no method {key!r} is registered in core.specs.method_catalogue")
    if not found.facts:
        return MethodFacts()
    module, name = found.facts.split(":")
    result: MethodFacts = getattr(import_module(module), name)
    return result


class RegisteredWords(Mapping[str, str]):
    """Shared words and every registered method's own (one ``MethodFacts`` attribute), read when asked, so a
    method registered later is included: ``core.specs.stage_labels.STAGE_LABELS``, the certificate's meanings."""

    def __init__(self, shared: Mapping[str, str], field_name: str) -> None:
        self._shared, self._field = shared, field_name

    def _merged(self) -> dict[str, str]:
        merged = dict(self._shared)
        for method in METHODS:
            merged.update(getattr(facts(method.key), self._field))
        return merged

    def __getitem__(self, key: str) -> str:
        return self._merged()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._merged())

    def __len__(self) -> int:
        return len(self._merged())
