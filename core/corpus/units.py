"""Documents to privacy units: one unit per document, or per person (all of that person's documents, sorted by
document id when an id column is chosen, otherwise in file order, joined with blank lines), each bounded to
``max_unit_chars`` so that every later sensitivity is that of one unit; each unit's label; and the refusal of a
corpus with fewer than two units.
"""

from __future__ import annotations

import re
from pathlib import Path

from core.corpus.collector import WarningCollector
from core.corpus.labels import UNLABELLED, unit_label
from core.corpus.model import LoadReport, Unit
from core.corpus.reading import Document
from core.common.errors import CorpusError

UNIT_SEPARATOR = "\n\n"


def make_units(
    documents: list[Document],
    by_person: bool,
    order_by_id: bool,
    max_chars: int,
    report: LoadReport,
    notes: WarningCollector,
    typed_labels: tuple[str, ...] = (),
) -> list[Unit]:
    """One unit per document, or per person (in order of first appearance), bounded to ``max_chars``; each
    unit's label is chosen from its own documents only (``unit_label``)."""
    if not by_person:
        groups = [(d.doc_id, [d]) for d in documents]
    else:
        grouped: dict[str, list[Document]] = {}
        for doc in documents:
            grouped.setdefault(doc.person, []).append(doc)
        groups = list(grouped.items())
    units = []
    for uid, docs in groups:
        ordered = sorted(docs, key=lambda d: _natural_key(d.doc_id)) if order_by_id else docs
        text = UNIT_SEPARATOR.join(d.text for d in ordered)
        if len(text) > max_chars:
            text = text[:max_chars].rstrip()
            report.n_truncated += 1
            kind = "person unit(s) (named by each person's first row)" if by_person else "document(s)"
            notes.add(f"{kind} cut to {max_chars:,} characters", docs[0].where)
        label = unit_label([d.label for d in docs], typed_labels) if any(d.label for d in docs) else UNLABELLED
        units.append(Unit(uid=uid, text=text, n_documents=len(docs), label=label))
    return units


def report_labels(documents: list[Document], units: list[Unit], typed: tuple[str, ...], by_person: bool,
                   report: LoadReport, notes: WarningCollector) -> None:
    """The label counts the load report shows on screen (counts only; never exported)."""
    labels_of: dict[str, set[str]] = {}
    for d in documents:
        labels_of.setdefault(d.person if by_person else d.doc_id, set()).add(d.label)
    report.n_label_values = len({d.label for d in documents})
    report.n_multi_label_units = sum(1 for found in labels_of.values() if len(found) > 1)
    report.n_unlabelled_units = sum(1 for u in units if u.label == UNLABELLED)
    if report.n_multi_label_units:
        notes.note(f"{report.n_multi_label_units} unit(s) carry several labels; each keeps its most frequent label "
                   "(ties: the first in label order), so it counts in one class only.")
    if typed and report.n_unlabelled_units:
        notes.note(f"{report.n_unlabelled_units} unit(s) carry no label of the typed list; they are left out of the "
                   "synthesis.")


def _natural_key(doc_id: str) -> tuple[tuple[int, int, str], ...]:
    """Sort ids so that 'note-2' comes before 'note-10'; ties cannot occur (ids are unique)."""
    parts = re.split(r"([0-9]+)", doc_id)
    return tuple((1, int(p), p) if i % 2 else (0, 0, p) for i, p in enumerate(parts))


def refuse_too_few(units: list[Unit], source: Path, report: LoadReport) -> None:
    if not units:
        raise CorpusError(
            f"No document with text was found in {source} ({report.n_empty_skipped} empty, "
            f"{report.n_rows_skipped} rows skipped).",
            "Check that the right text column is chosen and that the documents are not empty.",
        )
    if len(units) == 1:
        raise CorpusError(
            f"Only one privacy unit was found in {source}. Differential privacy over a single unit is "
            "meaningless: the output would either reveal it or say nothing.",
            "Load a corpus with many documents (or many people when a person column is chosen).",
        )
