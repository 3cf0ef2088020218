"""The sections every run has: the data, the privacy budget, the models, the output and where compute runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from core.specs import method_catalogue
from core.specs.rules import (
    MAX_LABELS, MAX_THREADS, MAX_UNIT_CHARS, MAX_UNITS, MAX_WORKERS, Rule, flag, name, name_problem, number, path_text, text, texts,
    whole,
)
from core.common.wording import PERMITTED_USES, WEAK_MAX

# Above this epsilon the run goes ahead with a loud warning; above the hard limit it is refused.
WEAK_EPSILON = WEAK_MAX  # core.common.wording: above it, no meaningful protection
MAX_EPSILON = 100.0
# The smallest ε and δ a run may ask for. Far smaller values cannot be carried through the planner's
# arithmetic (ε = 1e-300 gives ρ ≈ 1e-601, below the smallest float; δ = 5e-324 is the smallest subnormal
# float, whose logarithm the conversion cannot use), and they would give noise of no use anyway.
MIN_EPSILON = 1e-3
MIN_DELTA = 1e-30

LABEL_MODES = ("auto", "topic_labels", "per_class")  # [data] label_mode (docs/method.md §6.3)


MODEL_RULES: dict[str, Rule] = {
    "source": text("the model source", choices=("default", "hf", "gguf", "tiny-random")),
    "path": path_text("the model path"),
    "backend": text("the model backend", choices=("auto", "transformers", "llamacpp")),
    "device": text("the device"),
}


@dataclass(frozen=True)
class ModelChoice:
    """Which model to load, as a run spec names it.

    source: "default" (the packaged model), "hf" (a local Hugging Face folder),
            "gguf" (a local GGUF file) or "tiny-random" (a tiny random model for tests only).
    backend: "auto", "transformers" or "llamacpp".
    device: "auto", "cpu" or "cuda" (or "cuda:N").
    """

    source: str = "default"
    path: str = ""
    backend: str = "auto"
    device: str = "auto"

    RULES: ClassVar[dict[str, Rule]] = MODEL_RULES




@dataclass
class DataSpec:
    path: str = ""
    text_column: str = ""  # for .csv/.tsv/.jsonl
    id_column: str = ""
    person_column: str = ""  # when set, the privacy unit is the person
    max_unit_chars: int = 4000
    # The name this data is budgeted under in the ledger (every view of it shares one budget).
    # Empty = the file or folder name, which stays on this machine; a name given here is exported.
    dataset_name: str = ""
    # A categorical column kept by class-conditional synthesis (docs/method.md §6.3): each unit gets one label
    # and every synthetic document carries one. Empty = no labels.
    label_column: str = ""
    # The labels, typed by the custodian: PUBLIC, printed on the certificate. Empty with a label column: the
    # labels are released with DP (a set union), and labels too rare to clear its noise are left out.
    labels: list[str] = field(default_factory=list)
    # How a label column is kept (docs/method.md §6.3): "topic_labels" (DP-SynRAG only) runs the method once on
    # all units and labels each document from its topic's released label counts; "per_class" runs the method
    # once per class; "auto" = "topic_labels" for DP-SynRAG, "per_class" for the other methods.
    label_mode: str = "auto"

    RULES: ClassVar[dict[str, Rule]] = {
        "path": path_text("the corpus folder or table file"),  # echoed, and the default dataset name
        "text_column": name("the text column"),
        "id_column": name("the id column"),
        "person_column": name("the person column"),
        "max_unit_chars": whole("the longest privacy unit, in characters", low=1, high=MAX_UNIT_CHARS),
        "dataset_name": name("the dataset name"),  # shown by privet ledger and printed on the certificate
        "label_column": name("the label column"),
        "labels": texts("the labels (public, printed on the certificate)"),
        "label_mode": text("how the label column is kept", choices=LABEL_MODES),
    }

    def column_names(self) -> tuple[str, ...]:
        """The names of the columns chosen (text, id, person, label): the file's schema, public words that public
        rules may read (the document form, the word lists offered), never its text."""
        return tuple(c for c in (self.text_column, self.id_column, self.person_column, self.label_column) if c)


# Which methods synthesise per class (core/methods/class_conditional.py) and which can label by topic
# (label_mode "topic_labels", core/methods/class_conditional.TopicLabelled): each method's catalogue entry says
# (core.specs.method_catalogue.MethodEntry.labels); the others refuse a label column.


def label_mode_of(data: DataSpec, method: str) -> str:
    """The label mode a run uses: "per_class" or "topic_labels" ("auto" resolved by the method); "" without labels."""
    if not data.label_column:
        return ""
    if data.label_mode == "auto":
        return "topic_labels" if method in method_catalogue.topic_label_methods() else "per_class"
    return data.label_mode


def label_problems(data: DataSpec, method: str) -> list[str]:
    """What is wrong with ``[data] label_column`` and ``labels`` beyond their types ([] when nothing)."""
    class_methods, topic_methods = method_catalogue.class_conditional_methods(), method_catalogue.topic_label_methods()
    found = []
    if data.labels and not data.label_column:
        found.append("[data] labels are typed but no label_column is chosen: choose the column that holds them, "
                     "or leave labels empty")
    if not data.label_column:
        if data.label_mode != "auto":
            found.append(f"[data] label_mode = {data.label_mode!r} is set but no label_column is chosen: choose the "
                         "column that holds the labels, or leave label_mode at \"auto\"")
        return found
    if method not in class_methods:
        found.append(f"[data] label_column: method {method!r} cannot keep labels yet; class-conditional synthesis "
                     f"works with {', '.join(class_methods)} (choose one of them, or leave label_column empty)")
    if data.label_mode == "topic_labels" and method not in topic_methods:
        found.append(f"[data] label_mode = \"topic_labels\" works with {', '.join(topic_methods)} only; method "
                     f"{method!r} keeps labels per class (set label_mode = \"per_class\" or \"auto\")")
    if data.label_column in (data.text_column, data.id_column, data.person_column):
        found.append(f"[data] label_column {data.label_column!r} is also the text, id or person column: choose the "
                     "column that holds each document's category")
    if len(data.labels) > MAX_LABELS:
        found.append(f"[data] labels holds {len(data.labels)} labels; at most {MAX_LABELS} are allowed (a label "
                     "column is a category with few values)")
    if len(set(data.labels)) != len(data.labels):
        found.append("[data] labels names a label more than once: list each label once")
    for i, label in enumerate(data.labels):
        problem = "is empty" if not label.strip() else name_problem(label)
        if not problem and label != label.strip():
            problem = "starts or ends with spaces (the loaded labels are compared without them)"
        if problem:
            found.append(f"[data] labels: label {i + 1} {problem}")
    return found


@dataclass
class PrivacySpec:
    epsilon: float = 10.0
    delta: float = 0.0  # 0 = the public default: 1e-6, or 1/(10 N) when max_units states N
    max_units: int = 0  # a PUBLIC upper bound N on the number of units (0 = not stated); never the loaded count
    conversion: str = "tight"  # "tight" (Canonne-Kamath-Steinke) or "loose" (seed)
    spend_anyway: bool = False  # run even when the planner expects about 0 topics (core.privacy.forecast)
    rationale: str = ""  # why this budget was chosen, in the custodian's words; printed on the certificate

    RULES: ClassVar[dict[str, Rule]] = {
        "epsilon": number("the privacy budget ε", low=MIN_EPSILON, high=MAX_EPSILON),
        "rationale": text("why this budget was chosen (printed on the certificate)"),
        "delta": number("δ", low=MIN_DELTA, high=1, open_high=True, zero_default=True),
        "max_units": whole("the public bound N on the number of units (0 = not stated)", low=0, high=MAX_UNITS),
        "conversion": text("the zCDP conversion", choices=("tight", "loose")),
        "spend_anyway": flag("run even when about 0 topics are expected"),
    }


@dataclass
class OutputSpec:
    folder: str = ""  # where the release goes; empty = keep the run folder only (export later)
    formats: list[str] = field(default_factory=lambda: ["jsonl", "csv"])
    overwrite: bool = False
    custodian: str = ""
    organisation: str = ""
    irb_protocol: str = ""
    export_at_end: bool = True  # False: the run only keeps the release in its run folder and the desktop
    # exports it to ``folder`` from its review page (the folder is kept through a resume)
    permitted_use: str = "internal"  # what the release may be used for (core.common.wording.PERMITTED_USES): printed on
    # the certificate's first page, an export identity field like the custodian (not in the privacy record)

    RULES: ClassVar[dict[str, Rule]] = {
        "folder": path_text("the output folder"),
        "formats": texts("the export formats", choices=("jsonl", "csv")),
        "permitted_use": text("what the release may be used for", choices=PERMITTED_USES),
        "custodian": name("the custodian"),  # printed on the certificate
        "organisation": name("the organisation"),
        "irb_protocol": name("the IRB protocol"),
    }


@dataclass
class ComputeSpec:
    """Where private prediction, LLM keyword extraction and embedding run (see core/compute): this process, or Ray
    workers; and on how many threads this process runs the models (core/models/threads.py)."""

    backend: str = "local"  # "local" (one process, no Ray) or "ray"
    address: str = ""  # Ray: "" = start Ray on this machine, "auto" = the running cluster, "ray://host:10001"
    workers: int = 0  # Ray: 0 = one worker per GPU; N = N workers (CPU workers when there is no GPU)
    # Threads for torch and llama.cpp in this process: 0 = the cores free now (the cores less other programs' load,
    # chosen again when the writing starts); N = N threads (at most the cores). PRIVET_THREADS does the same for
    # every run when this is 0.
    threads: int = 0

    RULES: ClassVar[dict[str, Rule]] = {
        "backend": text("the compute backend", choices=("local", "ray")),
        "address": text("the Ray address", pattern=r"\s*(auto|ray://.*)?\s*", form='empty, "auto" or "ray://host:port"'),
        "workers": whole("Ray workers (0 = one per GPU)", low=0, high=MAX_WORKERS),
        "threads": whole("threads for the models (0 = the free cores)", low=0, high=MAX_THREADS),
    }
