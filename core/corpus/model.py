"""What a loaded private corpus looks like: units, the load report, the corpus itself.

A *unit* is what differential privacy protects: one document, or every document of one
person when a person column is chosen. The load report holds counts, length statistics
and warnings only; it never holds document text, so it is safe to show on screen.
Its length statistics are computed on private data without noise: show them to the
custodian, never put them into an exported artefact.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

UnitKind = Literal["document", "person"]


@dataclass(frozen=True)
class Unit:
    """One privacy unit. ``uid`` is a document id, a relative file path, ``row-N``, or a person value."""

    uid: str
    text: str
    n_documents: int = 1
    label: str = ""  # with a label column: the unit's one label (core.corpus.labels); never exported as such


@dataclass(frozen=True)
class LengthSummary:
    """Unit lengths in characters: five quantiles and a 10-bin histogram (``len(edges) == 11``)."""

    min: int
    p25: float
    median: float
    p75: float
    max: int
    bin_edges: list[float]
    bin_counts: list[int]


@dataclass(frozen=True)
class SkippedFile:
    """A file of a folder that was not loaded: its path in the folder, why, and what to do (never its text)."""

    name: str
    why: str
    fix: str = ""


@dataclass
class LoadReport:
    """What happened while loading: counts and short warnings naming files or rows, never text."""

    n_files_read: int = 0
    n_documents: int = 0
    n_units: int = 0
    n_empty_skipped: int = 0
    n_truncated: int = 0
    n_undecodable: int = 0
    n_binary: int = 0
    n_too_large: int = 0
    n_rows_skipped: int = 0
    n_ignored_files: int = 0
    n_label_values: int = 0  # with a label column: its distinct values, units with several, units with none typed
    n_multi_label_units: int = 0
    n_unlabelled_units: int = 0
    lengths: LengthSummary | None = None
    warnings: list[str] = field(default_factory=list)
    skipped_files: list[SkippedFile] = field(default_factory=list)  # every file of a folder not loaded, by name
    file_warnings: list[str] = field(default_factory=list)  # the lines of ``warnings`` that ``skipped_files`` lists

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Corpus:
    """The loaded units (in file order) and how they were obtained."""

    units: list[Unit]
    report: LoadReport
    unit_kind: UnitKind
    source: str
    columns: dict[str, str] = field(default_factory=dict)
    # Each loaded document's text before it is grouped into units or truncated (for the content sketch
    # that tells whether two views hold the same documents; core.corpus.content_scan.scan_content).
    # Empty for a corpus built in code: the sketch then uses the units' texts.
    document_texts: list[str] = field(default_factory=list, repr=False)

    def __len__(self) -> int:
        return len(self.units)

    @property
    def texts(self) -> list[str]:
        return [u.text for u in self.units]
