"""Which dataset a run is budgeted under: the one answer `privet plan` prints, the wizard shows and the run books.

"The same dataset" (docs/reliability.md): two loads are one dataset, and share one budget, when

1. they are the same view (the same dataset fingerprint), or
2. their documents overlap: at least ``SAME_DATASET_OVERLAP`` of one load's documents are in the other,
   measured on keyed hashes of each document's text (``core.corpus.fingerprint.content_sketch``), so a
   new file name, reordered rows, dropped or added rows, another id or person column and another
   ``max_unit_chars`` do not make new data; or
3. they are loaded under the same dataset name (``[data] dataset_name``, else the file or folder name).

A load that matches a known dataset by 1 or 2 is booked under it when no name was chosen, and refused
when another name was chosen (the same data cannot get a fresh budget under a new name). Nothing here
writes to the ledger; ``record_booking`` registers the view once a run is past its cap check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from core.corpus import Corpus, DatasetIdentity, dataset_fingerprint, dataset_identity, load_corpus
from core.corpus.fingerprint import SAME_DATASET_OVERLAP, content_sketch, sketch_overlap
from core.errors import PrivetError
from core.ledger.store import Ledger
from core.runspec import DataSpec, RunSpec


@dataclass(frozen=True)
class Booking:
    """The dataset identity a load is budgeted under, and why (``how``: new, name, view or content)."""

    identity: DatasetIdentity
    fingerprint: str  # the exact view loaded
    sketch: list[int] = field(repr=False)
    source: str
    how: str
    overlap: float = 0.0  # share of documents shared with the matched dataset (content matches)
    warnings: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return self.identity.key

    @property
    def name(self) -> str:
        return self.identity.name


def best_content_match(ledger: Ledger, sketch: list[int]) -> tuple[str, float]:
    """The known dataset whose documents overlap this load's most, and the overlap (``("", 0.0)``: none)."""
    best: dict[str, float] = {}
    for dataset_id, known in ledger.sketches():
        best[dataset_id] = max(best.get(dataset_id, 0.0), sketch_overlap(sketch, known))
    if not best:
        return "", 0.0
    key = max(best, key=lambda k: best[k])
    return key, best[key]


def book_dataset(ledger: Ledger | None, data: DataSpec, corpus: Corpus) -> Booking:
    """The identity this load of ``data`` is budgeted under (``ledger`` ``None``: a fresh installation)."""
    requested = dataset_identity(data.dataset_name, data.path)
    fingerprint = dataset_fingerprint(corpus)
    sketch = content_sketch(corpus)
    source = str(Path(data.path).resolve())
    if ledger is None:
        return Booking(requested, fingerprint, sketch, source, "new")
    bound = ledger.dataset_key(fingerprint)
    how, matched, overlap = "", "", 0.0
    if bound != fingerprint:
        how, matched, overlap = "view", bound, 1.0
    else:
        key, share = best_content_match(ledger, sketch)
        if key and share >= SAME_DATASET_OVERLAP:
            how, matched, overlap = "content", key, share
    warnings: list[str] = []
    if matched and matched != requested.key:
        known = ledger.dataset_name(matched) or matched[:16]
        why = ("exactly these data" if how == "view" else
               f"{overlap:.0%} of these documents are in it (another file name, order, id or person column, "
               "or a few rows dropped or added do not make new data)")
        if requested.chosen:
            raise PrivetError(
                f"These data are already budgeted under the dataset name '{known}', not '{requested.name}': {why}.",
                f"Set the dataset name to \"{known}\" ([data] dataset_name in the run spec, or the wizard's "
                "dataset name) so that it is charged to the budget it already has; the same data cannot get a "
                "fresh budget under a new name.",
            )
        identity = DatasetIdentity(key=matched, name=known, chosen=False)
        warnings.append(f"These data are budgeted as the known dataset '{known}': {why}.")
    else:
        identity = requested
        if not how:
            how = "name" if ledger.identity_of_name(requested.name) == requested.key or ledger.summary(
                requested.key).n_charges else "new"
        if how == "name" and _has_other_documents(ledger, requested.key, sketch):
            spend = ledger.summary(requested.key)
            warnings.append(
                f"A dataset with other documents is already budgeted under the name '{requested.name}' "
                f"(ε = {spend.spent_epsilon:.3g} spent so far); this run counts against that budget. If these are "
                "different data, give them their own dataset name."
            )
    warnings += ledger.register_view(identity.key, identity.name, fingerprint, source, dry_run=True)
    return Booking(identity, fingerprint, sketch, source, how, overlap, warnings)


def _has_other_documents(ledger: Ledger, key: str, sketch: list[int]) -> bool:
    """True when the dataset ``key`` has sketched views and none of them shares documents with ``sketch``."""
    known = [s for dataset_id, s in ledger.sketches() if dataset_id == key]
    return bool(known) and max(sketch_overlap(sketch, s) for s in known) < SAME_DATASET_OVERLAP


def record_booking(ledger: Ledger, booking: Booking) -> None:
    """Register the loaded view (and its content sketch) under the booked identity."""
    ledger.register_view(booking.key, booking.name, booking.fingerprint, booking.source, sketch=booking.sketch)


def load_spec_corpus(spec: RunSpec) -> Corpus:
    """The corpus a run spec's ``[data]`` names, loaded into privacy units."""
    d = spec.data
    if not d.path:
        raise PrivetError("The run spec names no data.", "Set [data] path to a folder or a .csv/.tsv/.jsonl file.")
    return load_corpus(d.path, d.text_column, d.id_column, d.person_column, d.max_unit_chars)
