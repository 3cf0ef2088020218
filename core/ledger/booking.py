"""Which dataset a run is budgeted under: the one answer `privet plan` prints, the wizard shows and the run books.

"The same dataset" (docs/reliability.md, "One dataset, one budget"). A load is compared with every dataset
this ledger knows, by three kinds of evidence:

1. **the same view**: its keyed fingerprint is registered under a dataset;
2. **the same text**: at least ``SAME_CONTENT_SHARE`` of a known dataset's text is in the load, or of the
   load's text is in the known dataset (``core.corpus.containment.containment``: keyed word shingles of the
   text in identity form, so case, punctuation, zero-width characters, a prefix or suffix on each note,
   notes split or merged, another file name, order, id or person column or ``max_unit_chars`` change
   nothing; the share of the *known* dataset found cannot be diluted by filler rows; shingles that are
   templates in their dataset are no evidence, so two different corpora of one kind do not match). A view
   sketched by an older version (whole documents only) is compared by whole documents;
3. **the name**: ``[data] dataset_name`` (*chosen*), else the file or folder name (the *default*).

The rules, in order:

- **Text or view wins over a name.** A load that matches a known dataset by 1 or 2 is booked under it
  (with a warning when its name differs). A load holding the text of two or more known datasets is refused:
  a run is charged to one budget, and the others would not count it. It is refused when another name was *chosen* (the same data
  cannot get a fresh budget under a new name), and when its default name is that of a dataset with a cap
  but no data yet (the cap was meant for these data, which are already budgeted elsewhere: the custodian
  says which by choosing the dataset name).
- **A cap binds its name.** A dataset named before its first run (``privet ledger NAME --set-cap …
  --new-dataset``) has a cap and no data. The first load under that name (chosen or default) is booked
  there, which binds its text to it. A load whose *default* name is new but has the same stem as exactly
  one such dataset ("notes.jsonl" for a cap on "notes.csv") is booked there too, so that the first run in
  another format is not an uncapped twin; two such datasets with that stem: refused, choose the name. A
  later load of the same text under either name then matches it by text (rule 1): every run counts
  against the one capped budget.
- **A chosen name groups data.** Under a chosen name that a dataset already has, data with other
  documents (a new month of the same register) are booked there, with a warning.
- **A default name does not.** A different file under the default name of a known dataset whose text it
  does not share is a different dataset: it gets its own identity (``core.corpus.identity.
  separate_identity``), listed as "notes.csv (2)", with a warning. Except when that dataset has a cap:
  the load is booked under the capped dataset (a cap binds its name; choose a dataset name for other data).
  A known dataset with no comparable sketch (a ledger from before sketches) keeps its name's data.
- Otherwise the load is a new dataset under its name.

Nothing here writes to the ledger; ``record_booking`` registers the view (and its sketches) once a run is
past its cap check, which is what binds text to a dataset.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from core.corpus import Corpus, DatasetIdentity, dataset_fingerprint, dataset_identity, load_corpus
from core.corpus.containment import Containment, containment, document_containment
from core.corpus.content_scan import ContentScan, scan_content
from core.corpus.content_sketch import EVIDENCE_BAR, ContentSketch
from core.corpus.identity import name_stem, normalise_name, separate_identity
from core.common.errors import BudgetError, PrivetError
from core.ledger.store import Ledger
from core.specs.runspec import DataSpec, RunSpec

# The share of a known dataset's text found in a load (or of the load's text in the known dataset) that makes
# them one dataset. Chosen by tests/ledger/test_dataset_identity.py: two different clinic corpora from the same
# generator share at most about 0.1 of their evidence; a copy with 45 % of the real rows among filler rows
# still shows about 0.45, and every other re-keying of the audit 0.75 or more.
SAME_CONTENT_SHARE = 0.2
# Documents are stronger evidence than shingles: a document of a known dataset found whole in a load (its
# rarest words, in any order) is that person's text. A load in which at least DOCUMENTS_ENOUGH documents are
# documents of a known dataset, and they are at least DOCUMENT_SHARE of the load or of the known dataset, is
# that dataset: a sample of a capped dataset mixed into a larger file counts against its cap. Chosen by
# tests/ledger/test_surface_copies.py: different corpora of one kind match no more than a handful of documents.
DOCUMENTS_ENOUGH = 30
DOCUMENT_SHARE = 0.1


def same_dataset(found: Containment) -> bool:
    """Whether ``found`` (one known dataset against a load) makes them one dataset."""
    if found.share >= SAME_CONTENT_SHARE * EVIDENCE_BAR.get(found.evidence, 1.0):
        return True
    return (found.evidence == "documents" and found.documents_matched >= DOCUMENTS_ENOUGH
            and found.share >= DOCUMENT_SHARE)


def share_words(found: Containment) -> str:
    """How much text a load shares with a known dataset, in plain words."""
    if found.evidence == "documents":
        if found.known_in_new >= found.new_in_known:
            return f"about {found.known_in_new:.0%} of its documents are in these data"
        return (f"about {found.new_in_known:.0%} of these documents ({found.documents_matched} of "
                f"{found.documents_in_load}) are its documents")
    if found.known_in_new >= found.new_in_known:
        return f"about {found.known_in_new:.0%} of its documents' text is in these data"
    return f"about {found.new_in_known:.0%} of these documents' text is in it"


@dataclass(frozen=True)
class ContentMatch:
    """The known dataset whose text this load shares most, and how much (``found``)."""

    key: str = ""
    found: Containment = field(default_factory=Containment)

    @property
    def share(self) -> float:
        return self.found.share

    @property
    def same(self) -> bool:
        return same_dataset(self.found)


@dataclass(frozen=True)
class Booking:
    """The dataset identity a load is budgeted under, and why (``how``: new, name, cap, stem, separate, view
    or content)."""

    identity: DatasetIdentity
    fingerprint: str  # the exact view loaded
    sketch: list[int] = field(repr=False)  # v1: whole documents
    source: str
    how: str
    overlap: float = 0.0  # share of text shared with the matched dataset (content matches)
    warnings: list[str] = field(default_factory=list)
    shingles: ContentSketch | None = field(default=None, repr=False)  # v3
    reason: str = ""  # why the load is this dataset, in plain words (content and view matches)

    def explained(self, refusal: BudgetError) -> BudgetError:
        """``refusal`` (the dataset's cap, before any charge) naming the dataset and why these data are it."""
        if not self.reason:
            return refusal
        return type(refusal)(f"These data are budgeted as the dataset '{self.name}': {self.reason}. "
                             f"{refusal.what}", refusal.fix)

    @property
    def key(self) -> str:
        return self.identity.key

    @property
    def name(self) -> str:
        return self.identity.name


def scan_against(ledger: Ledger, corpus: Corpus) -> tuple[ContentScan, list[ContentMatch]]:
    """Sketch ``corpus`` and measure how much text it shares with each known dataset (one pass over the
    text). Returns the best match per dataset, best first."""
    v3 = ledger.shingle_sketches()
    v1 = ledger.document_sketches()
    probe_shingles = frozenset().union(*(s.probe() for _, s in v3))
    probe_documents = frozenset().union(*(s for _, s in v1))
    scan = scan_content(corpus, probe_shingles, probe_documents, known=[s.documents for _, s in v3])
    best: dict[str, ContentMatch] = {}
    shares = [(dataset_id, containment(known, scan, matches))
              for (dataset_id, known), matches in zip(v3, scan.document_matches)]
    shares += [(dataset_id, document_containment(documents, scan.documents, scan.found_documents))
               for dataset_id, documents in v1]
    for dataset_id, found in shares:
        key = ledger.dataset_key(dataset_id)
        match = ContentMatch(key, found)
        current = best.get(key)
        if current is None or (match.same, match.share) > (current.same, current.share):
            best[key] = match
    return scan, sorted(best.values(), key=lambda m: (-m.same, -m.share))


def book_dataset(ledger: Ledger | None, data: DataSpec, corpus: Corpus) -> Booking:
    """The identity this load of ``data`` is budgeted under (``ledger`` ``None``: a fresh installation)."""
    requested = dataset_identity(data.dataset_name, data.path)
    fingerprint = dataset_fingerprint(corpus)
    source = str(Path(data.path).resolve())
    if ledger is None:
        scan = scan_content(corpus)
        return Booking(requested, fingerprint, scan.documents, source, "new", shingles=scan.sketch)
    scan, matches = scan_against(ledger, corpus)

    def booked(identity: DatasetIdentity, how: str, warnings: list[str], overlap: float = 0.0,
               reason: str = "") -> Booking:
        warnings = warnings + ledger.register_view(identity.key, identity.name, fingerprint, source, dry_run=True)
        return Booking(identity, fingerprint, scan.documents, source, how, overlap, warnings, scan.sketch, reason)

    bound = ledger.dataset_key(fingerprint)
    if bound != fingerprint:
        return booked(*_matched(ledger, requested, bound, "view", 1.0, "exactly these data"), 1.0,
                      "exactly these data were loaded for it before")
    matched = [m for m in matches if m.same]
    if len(matched) > 1:
        names = " and ".join(f"'{ledger.dataset_name(m.key) or m.key[:16]}'" for m in matched[:3])
        raise PrivetError(
            f"These data hold the text of more than one budgeted dataset ({names}). A run is charged to one "
            "budget, so it cannot be run on data of several: the others would not count it.",
            "Run each dataset on its own file or folder, or, if they are really one dataset, ask the Privet "
            "administrator to budget them together.",
        )
    if matched:
        best = matched[0]
        share = share_words(best.found)
        why = share + (" (another file name, order, id or person column, upper or lower case, look-alike letters, "
                "markup, digits for letters, spacing, word order, a prefix on each note, notes split or merged, "
                "or rows dropped or added do not make new data)")
        return booked(*_matched(ledger, requested, best.key, "content", best.share, why), best.share, share)
    return booked(*_by_name(ledger, requested, fingerprint))


def _matched(ledger: Ledger, requested: DatasetIdentity, matched: str, how: str, share: float,
             why: str) -> tuple[DatasetIdentity, str, list[str]]:
    """Rule 1: the load holds the data of the known dataset ``matched``."""
    if matched == requested.key:
        return requested, how, []
    known = ledger.dataset_name(matched) or matched[:16]
    if requested.chosen:
        raise PrivetError(
            f"These data are already budgeted under the dataset name '{known}', not '{requested.name}': {why}.",
            f"Set the dataset name to \"{known}\" ([data] dataset_name in the run spec, or the wizard's "
            "dataset name) so that it is charged to the budget it already has; the same data cannot get a "
            "fresh budget under a new name.",
        )
    waiting = [name for key, name in _waiting_caps(ledger, requested) if key != matched]
    if waiting:
        raise PrivetError(
            f"These data are already budgeted under the dataset name '{known}' ({why}), but a cap was set on "
            f"'{waiting[0]}' before its first run, so it is not clear which budget they belong to.",
            f"Choose the dataset name: \"{known}\" (where these data have been charged so far; set its cap with "
            f"privet ledger \"{known}\" --set-cap EPS --delta D) or another name ([data] dataset_name in the "
            "run spec, or the wizard's dataset name).",
        )
    return (DatasetIdentity(key=matched, name=known, chosen=False), how,
            [f"These data are budgeted as the known dataset '{known}': {why}."])


def _by_name(ledger: Ledger, requested: DatasetIdentity, fingerprint: str) -> tuple[DatasetIdentity, str, list[str]]:
    """Rules 2 to 4: the load shares no text with a known dataset."""
    named = ledger.identity_of_name(requested.name)
    if named is not None:
        identity = DatasetIdentity(key=named, name=ledger.dataset_name(named) or requested.name,
                                   chosen=requested.chosen)
        if not ledger.has_views(named):
            return identity, "cap" if ledger.cap(named) else "name", []
        if not ledger.has_sketch(named):  # a ledger from before sketches: nothing to compare with
            return identity, "name", []
        spend = ledger.summary(named)
        if requested.chosen or ledger.cap(named):
            why = ("the name was chosen for them" if requested.chosen else
                   "a cap was set on this name, and a cap binds its name")
            return identity, "name", [
                f"The dataset '{identity.name}' holds other documents (ε = {spend.spent_epsilon:.3g} spent so "
                f"far); these data count against its budget because {why}. If they are different data, give "
                "them their own dataset name ([data] dataset_name in the run spec, or the wizard's dataset name)."
            ]
        separate = separate_identity(requested.name, fingerprint, _free_name(ledger, requested.name))
        return separate, "separate", [
            f"Another file named '{requested.name}' is already budgeted (ε = {spend.spent_epsilon:.3g} spent), "
            f"but these documents are not in it, so they are a different dataset, budgeted separately as "
            f"'{separate.name}'. If they are the same data, choose the dataset name \"{requested.name}\" "
            "([data] dataset_name in the run spec, or the wizard's dataset name)."
        ]
    waiting = _waiting_caps(ledger, requested)
    if len(waiting) > 1:
        listed = ", ".join(f"'{name}'" for _, name in waiting)
        raise PrivetError(
            f"Caps were set on {listed} before their first run, and these data ('{requested.name}') could "
            "be any of them.",
            "Choose the dataset name these data are budgeted under ([data] dataset_name in the run spec, "
            "or the wizard's dataset name).",
        )
    if waiting:
        key, name = waiting[0]
        return DatasetIdentity(key=key, name=name, chosen=False), "stem", [
            f"These data are budgeted as '{name}', whose cap was set before its first run (the same file "
            f"name, '{requested.name}', in another format). If they are different data, give them their own "
            "dataset name ([data] dataset_name in the run spec, or the wizard's dataset name)."
        ]
    return requested, "new", []


def _waiting_caps(ledger: Ledger, requested: DatasetIdentity) -> list[tuple[str, str]]:
    """``(key, name)`` of the datasets with a cap and no data yet that a load under the *default* name
    ``requested`` may be meant for: the same name, or the same stem ("notes.csv" for notes.jsonl)."""
    if requested.chosen:
        return []
    name, stem = normalise_name(requested.name), name_stem(requested.name)
    return [(key, known) for key, known in ledger.datasets_without_views()
            if (normalise_name(known) == name or name_stem(known) == stem) and ledger.cap(key)]


def _free_name(ledger: Ledger, name: str) -> str:
    """``name`` with the first number that no known dataset is listed under: "notes.csv (2)"."""
    taken = {normalise_name(known) for known, _key in ledger.known_datasets()}
    n = 2
    while normalise_name(f"{name} ({n})") in taken:
        n += 1
    return f"{name} ({n})"


def record_booking(ledger: Ledger, booking: Booking) -> None:
    """Register the loaded view (and its content sketches) under the booked identity."""
    ledger.register_view(booking.key, booking.name, booking.fingerprint, booking.source, sketch=booking.sketch,
                         shingles=booking.shingles)


def load_spec_corpus(spec: RunSpec) -> Corpus:
    """The corpus a run spec's ``[data]`` names, loaded into privacy units."""
    d = spec.data
    if not d.path:
        raise PrivetError("The run spec names no data.", "Set [data] path to a folder or a .csv/.tsv/.jsonl file.")
    return load_corpus(d.path, d.text_column, d.id_column, d.person_column, d.max_unit_chars,
                       label_column=d.label_column, labels=d.labels)


def new_run_id() -> str:
    """The date and a random part: the run id is exported, so it holds no time of day."""
    return datetime.now(timezone.utc).strftime("%Y%m%d") + "-" + secrets.token_hex(4)
