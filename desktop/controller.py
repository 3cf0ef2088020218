"""The wizard's state and every call into ``core`` (Qt-free).

Pages read and edit ``WizardController.spec`` (a ``RunSpec``) and ask the controller for
anything computed: the corpus summary, the budget plan, the ledger, the internal leakage
check, export and verification. Widgets never import model code; the run itself happens
in a child process (``desktop.runner``), never here. The method and budget part (the plan, the ε table,
the booking, the ledger's spend and cap) is ``BudgetSection`` in ``desktop/controller_budget.py``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.certificate import verify_export
from core.certificate.privacy_record import PrivacyRecord
from core.corpus import dataset_fingerprint, list_columns, load_corpus
from core.corpus.columns import suggest_columns
from core.corpus.profile import TableColumns, table_columns
from core.common.errors import PrivetError
from core.run.export import ReleaseSize, export_release, release_size
from core.common.paths import data_dir
from core.common.wording import guarantee_words
from core.privacy.budget import RECOMMENDED_EPSILON
from core.specs import method_catalogue
from core.specs.method_catalogue import MethodEntry
from core.specs.runspec import RunSpec
from core.specs.label_modes import LabelModeChoice, label_mode_choices, label_mode_words
from core.evaluation.internal_check import InternalCheck, find_identifiers, private_identifiers
from desktop.controller_budget import BudgetSection

DEFAULT_EXPORT_FOLDER = "privet-releases"
PREVIEW_LIMIT = 5000  # synthetic documents read for the review page


@dataclass(frozen=True)
class CorpusSummary:
    """What was loaded (counts, lengths, loader warnings), never document text."""

    source: str
    unit_kind: str
    n_documents: int
    n_units: int
    n_empty_skipped: int
    n_truncated: int
    lengths: Any  # core.corpus.model.LengthSummary | None
    warnings: list[str]
    fingerprint: str
    n_label_values: int = 0  # with a label column: how many different labels it holds (on screen only)
    skipped_files: tuple[Any, ...] = ()  # core.corpus.model.SkippedFile: each file of a folder not loaded, and why


# The wizard's methods, their words and short names: those registered in core.specs.method_catalogue.
MethodInfo = MethodEntry
METHODS = method_catalogue.METHODS
METHOD_SHORT_NAMES = method_catalogue.short_names()
GENERIC_TASK = ("Write realistic documents of the kind found in the collection “{name}”, covering the topics "
                "they discuss, for people who will ask questions about those topics.")


def fresh_spec() -> RunSpec:
    """A new run's spec: the core defaults with the recommended (moderate) ε."""
    spec = RunSpec()
    spec.privacy.epsilon = RECOMMENDED_EPSILON  # every other setting is the library's one default
    return spec


@dataclass(frozen=True)
class VerifyOutcome:
    ok: bool
    problems: list[str] = field(default_factory=list)


@dataclass
class WizardController(BudgetSection):
    """Holds the run spec being edited and the loaded corpus (for its summary and the on-screen check)."""

    spec: RunSpec = field(default_factory=fresh_spec)
    summary: CorpusSummary | None = None
    _corpus: Any = None
    _default_task: str = ""
    _speed: tuple[str, float, float] | None = None  # the estimate's last speed test: device, reading, when
    # Whether the wizard may pre-select its suggestions (the ε table's smallest ε that finds topics, a public list
    # that fits the task): a new run's; False for a spec opened from a file or a run resumed, whose choices stand.
    suggest_defaults: bool = True

    # --- data -------------------------------------------------------------------------------

    @staticmethod
    def suggest_columns(columns: list[str]) -> dict[str, str]:
        """Likely text / id / person columns by their names (``core.corpus.columns``)."""
        return suggest_columns(columns)

    def columns(self, path: str) -> list[str]:
        """Column names of a table file ([] for a folder); raises ``CorpusError``."""
        return list(list_columns(path))

    @staticmethod
    def table_columns(path: str) -> TableColumns:
        """The columns of a table file with core's statistics of each (words per row, share of numbers: never a
        cell's text), named by position when the file has no header row; raises ``CorpusError``."""
        return table_columns(path)

    def load_data(self, path: str, text_column: str = "", id_column: str = "", person_column: str = "",
                  label_column: str = "") -> CorpusSummary:
        """Load the corpus, remember the choices in the spec and return its summary."""
        labels = self.spec.data.labels if label_column else []
        corpus = load_corpus(path, text_column=text_column, id_column=id_column,
                             person_column=person_column, max_unit_chars=self.spec.data.max_unit_chars,
                             label_column=label_column, labels=labels)
        report = corpus.report
        self._corpus = corpus
        self.summary = CorpusSummary(
            source=str(path),
            unit_kind=corpus.unit_kind,
            n_documents=report.n_documents,
            n_units=report.n_units,
            n_empty_skipped=report.n_empty_skipped,
            n_truncated=report.n_truncated,
            lengths=report.lengths,
            warnings=[w for w in report.warnings if w not in report.file_warnings],  # files skipped: listed apart
            fingerprint=dataset_fingerprint(corpus),
            n_label_values=report.n_label_values,
            skipped_files=tuple(report.skipped_files),
        )
        if self.spec.task in (RunSpec().task, self._default_task) or not self.spec.task.strip():
            self.spec.task = self._default_task = GENERIC_TASK.format(name=Path(str(path)).stem or "this collection")
        self.spec.data.path = str(path)
        self.spec.data.text_column = text_column
        self.spec.data.id_column = id_column
        self.spec.data.person_column = person_column
        self.spec.data.label_column = label_column
        self.spec.data.labels = list(labels)
        if not label_column:
            self.spec.data.label_mode = "auto"  # a label mode without a label column is refused by the spec
        return self.summary

    @staticmethod
    def label_mode_choices() -> list[LabelModeChoice]:
        """How a label column can be kept ([data] label_mode), in the core's words."""
        return label_mode_choices()

    def set_label_mode(self, mode: str) -> None:
        """Choose ``[data] label_mode`` (kept at "auto" while no label column is chosen)."""
        self.spec.data.label_mode = mode if self.spec.data.label_column else "auto"

    def label_mode_words(self) -> str:
        """What the chosen method will do with the label column under the chosen mode, in the core's words."""
        return label_mode_words(self.spec.data.label_mode, self.spec.method)

    @property
    def data_loaded(self) -> bool:
        return self.summary is not None

    def unit_word(self) -> str:
        """'person' or 'document': what one unit of privacy is, for sentences."""
        return "person" if self.summary is not None and self.summary.unit_kind == "person" else "document"

    def topic_units(self) -> float | None:
        """About how many units must mention a topic for it to be found (``min_topic_units`` of the plan, the
        same figure the certificate prints); ``None`` for methods without topics or when it cannot be planned."""
        try:
            value = self.plan().derived.get("min_topic_units")
        except PrivetError:
            return None
        return float(value) if value is not None else None

    def unit_description(self) -> str:
        if self.summary is None:
            return "not known until the data is loaded"
        if self.summary.unit_kind == "person":
            column = self.spec.data.person_column
            return f"one person (all documents with the same '{column}'), {self.summary.n_units} in total"
        return f"one document, {self.summary.n_units} in total"

    # --- models and hardware -----------------------------------------------------------------

    def local_models(self) -> list[Any]:
        from core.models.registry import list_local_models  # imports torch: on first use, not at window start

        try:
            return list(list_local_models())
        except PrivetError:
            return []

    # --- spec files ---------------------------------------------------------------------------

    def save_spec(self, path: str | Path) -> Path:
        path = Path(path)
        self.spec.save(path)
        return path

    @classmethod
    def for_run(cls, run_dir: str | Path) -> "WizardController":
        """A controller for resuming an interrupted run: its spec from run.json, its data reloaded."""
        meta = json.loads((Path(run_dir) / "run.json").read_text(encoding="utf-8"))
        controller = cls(spec=RunSpec.from_dict(meta["spec"]), suggest_defaults=False)
        data = controller.spec.data
        if data.path:
            controller.load_data(data.path, data.text_column, data.id_column, data.person_column, data.label_column)
        return controller

    def open_spec(self, path: str | Path) -> RunSpec:
        """Load a run spec; reload its data (if it names any) so the summary matches."""
        spec = RunSpec.load(path)
        self.spec = spec
        self.suggest_defaults = False  # the file's ε and lists stand
        self.summary = None
        self._corpus = None
        if spec.data.path:
            self.load_data(spec.data.path, spec.data.text_column, spec.data.id_column, spec.data.person_column,
                           spec.data.label_column)
        return spec

    # --- run, review, export -----------------------------------------------------------------

    def run_spec_dict(self) -> dict[str, Any]:
        """The spec the child runs: identical to the saved one, except that the wizard exports itself
        (on the review page), so the pipeline's own export step is switched off. The chosen export folder
        stays in the spec (and so in run.json), so a resumed run still exports there."""
        spec = self.spec.to_dict()
        spec["output"]["export_at_end"] = False
        return spec

    def export_folder(self, run_id: str = "") -> Path:
        """Where the review page proposes to export: the folder chosen in the wizard (kept through a resume),
        else ``privet-releases`` in the home folder; one sub-folder per run. Always an absolute path."""
        chosen = self.spec.output.folder.strip()
        base = Path(chosen).expanduser() if chosen else Path.home() / DEFAULT_EXPORT_FOLDER
        base = base.absolute()
        return base / run_id if run_id else base

    @staticmethod
    def new_run_dir() -> Path:
        """A fresh folder under the data folder's ``runs/``, named by the run id the pipeline, ledger and
        certificate use (``core.run.pipeline.new_run_id``)."""
        from core.run.pipeline import new_run_id  # imports torch: on first use, not at window start

        runs = data_dir() / "runs"
        runs.mkdir(parents=True, exist_ok=True)
        return runs / new_run_id()

    @staticmethod
    def class_counts(run_dir: str | Path) -> list[tuple[str, float, int]]:
        """A labelled run's classes: (label, its released noisy count of units, documents kept), [] without a label
        column. Released values and synthetic text only (``core.methods.class_conditional``)."""
        from core.methods.class_conditional import released_class_counts

        try:
            record = PrivacyRecord.load(Path(run_dir))
        except (OSError, ValueError, KeyError, PrivetError):
            return []
        counts = released_class_counts(Path(run_dir), record.method)
        kept: dict[str, int] = {}
        synthetic = Path(run_dir) / "synthetic.jsonl"
        if counts and synthetic.is_file():
            with open(synthetic, encoding="utf-8") as handle:
                for line in handle:
                    if line.strip():
                        label = str(json.loads(line).get("label", ""))
                        kept[label] = kept.get(label, 0) + 1
        return [(label, noisy, kept.get(label, 0)) for label, noisy in counts.items()]

    @staticmethod
    def read_synthetic(path: str | Path, limit: int = PREVIEW_LIMIT) -> list[str]:
        """Texts of the synthetic JSONL (one {"id", "text"} per line); synthetic text is safe to show."""
        texts = []
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    texts.append(str(json.loads(line).get("text", "")))
                if len(texts) >= limit:
                    break
        return texts

    @staticmethod
    def guarantee_heading(run_dir: str | Path) -> str:
        """One line stating the run's guarantee and ε, from its privacy record (empty when unreadable)."""
        try:
            record = PrivacyRecord.load(Path(run_dir))
        except (OSError, ValueError, PrivetError):
            return ""
        unit = "person" if record.unit_kind == "person" else "document"
        if not record.end_to_end_dp:
            return (f"Made with {METHOD_SHORT_NAMES.get(record.method, record.method)}: NO end-to-end differential "
                    f"privacy guarantee (only the choice of summary is private, ε = {record.epsilon_tight:.3g}). "
                    "Treat it as de-identified text and review it before sharing.")
        words = guarantee_words(record.epsilon_tight, record.delta, unit)
        return (f"Differentially private at ε = {record.epsilon_tight:.3g}, δ = {record.delta:.2g}, with each {unit} "
                f"as the unit — {words.headline.lower()}. {words.meaning} It is not a guarantee that no sensitive "
                "wording appears; read the documents, and the certificate's limits, before sharing.")

    def internal_check(self, synthetic_texts: list[str]) -> InternalCheck | None:
        """Private names found in the synthetic text; for the screen only, never exported."""
        if self._corpus is None:
            return None
        persons = [u.uid for u in self._corpus.units] if self._corpus.unit_kind == "person" else []
        identifiers = private_identifiers([u.text for u in self._corpus.units], persons)
        return find_identifiers(identifiers, synthetic_texts)

    def identity(self) -> dict[str, str]:
        out = self.spec.output
        return {"custodian": out.custodian, "organisation": out.organisation, "irb_protocol": out.irb_protocol,
                "permitted_use": out.permitted_use}

    def export(self, run_dir: str | Path, out_dir: str | Path, overwrite: bool = False,
               allow_empty: bool = False) -> Path:
        return Path(export_release(Path(run_dir), Path(out_dir), self.identity(), overwrite=overwrite,
                                   allow_empty=allow_empty))

    @staticmethod
    def release_size(run_dir: str | Path) -> ReleaseSize:
        """``core.run.export.release_size``: the run's document count and, when none or very few, why and what to do."""
        try:
            return release_size(Path(run_dir))
        except (OSError, PrivetError):
            return ReleaseSize(0, "This run has no readable synthetic corpus, so there is nothing to export. "
                                  "Run it again.")


def verify_folder(folder: str | Path, public_key: str | Path | None = None) -> VerifyOutcome:
    """``core.certificate.verify_export`` as a plain outcome (ok, problems); origin needs ``public_key``."""
    result = verify_export(Path(folder), public_key=Path(public_key) if public_key else None)
    return VerifyOutcome(result.ok, [str(p) for p in result.problems])
