"""How much of a known dataset's text is in a new load, and of the new load's in the known dataset.

``containment`` measures both ways: the share of the *known* dataset's evidence (its rare shingles, n-grams and
signed documents, core/corpus/content_sketch.py) that occurs anywhere in the new load (found during the one pass
over its text, core/corpus/content_scan.py, so filler rows added around real ones cannot dilute it), and the share
of the new load's evidence found in the known dataset (bottom-k: only hashes below the known sketch's largest can be
looked up). ``document_containment`` compares v1 sketches of whole documents.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass

from core.corpus.content_scan import ContentScan, DocumentMatches
from core.corpus.content_sketch import EVIDENCE_BAR, MIN_SAMPLE, SKETCH_SIZE, ContentSketch, ShingleSketch

# --- how much of one is in the other ----------------------------------------------------------------


@dataclass(frozen=True)
class Containment:
    """The share of a known dataset's text found in a new load, and of the new load's in the known one
    (the largest over the kinds of evidence), with the kind that gave it (``evidence``: "shingles",
    "n-grams" or "documents") and, for documents, how many of the new load's are documents of the known one."""

    known_in_new: float = 0.0
    new_in_known: float = 0.0
    evidence: str = ""
    documents_matched: int = 0
    documents_in_load: int = 0

    @property
    def share(self) -> float:
        return max(self.known_in_new, self.new_in_known)


def _sketch_containment(known: ShingleSketch, new: ShingleSketch, found: Set[int]) -> Containment:
    evidence = known.evidence()
    known_in_new = len(evidence & found) / len(evidence) if evidence else 0.0
    templates = set(known.hashes) - evidence
    sample = [h for h in new.evidence() if h <= known.top and h not in templates]
    new_in_known = sum(1 for h in sample if h in evidence) / len(sample) if len(sample) >= MIN_SAMPLE else 0.0
    return Containment(known_in_new, new_in_known)


def containment(known: ContentSketch, scan: ContentScan, matches: DocumentMatches = DocumentMatches()) -> Containment:
    """How much of ``known`` is in the new load (``scan``), and of the new load in ``known``; the largest of
    three kinds of evidence:

    - **shingles** and **n-grams** (ordered): the share of ``known``'s evidence found anywhere in the new load
      (``scan.found_shingles``), so filler rows cannot dilute it, and of the new load's evidence in ``known``
      (bottom-k: only hashes up to its ``top`` can be answered); a hash the known view holds as a template is
      left out both ways, because a corpus of the same kind shares templates without sharing anyone's text;
    - **documents** (order-free, per document; ``matches``, from ``scan_content(known=…)``): the share of
      ``known``'s signed documents found in the new load, and the estimated share of the new load's documents
      that are documents of ``known`` (matched documents over the load's documents times the share of
      ``known``'s documents that are signed).
    """
    found = scan.found_shingles
    kinds = [("shingles", _sketch_containment(known.shingles, scan.sketch.shingles, found)),
             ("n-grams", _sketch_containment(known.grams, scan.sketch.grams, found))]
    signed = known.documents
    if signed.signatures:
        known_docs = matches.known_found / len(signed.signatures)
        expected = scan.n_documents * signed.signed_share
        new_docs = min(1.0, matches.new_matched / expected) if expected > 0 else 0.0
        kinds.append(("documents", Containment(known_docs, new_docs)))
    name, best = max(kinds, key=lambda k: k[1].share / EVIDENCE_BAR[k[0]])
    return Containment(best.known_in_new, best.new_in_known, name, matches.new_matched, scan.n_documents)


def document_containment(known: list[int], new: list[int], found: Set[int], size: int = SKETCH_SIZE) -> Containment:
    """The v1 comparison of whole documents: ``known``'s sketched documents found anywhere in the new load
    (``found``), and the new load's sketched documents in ``known`` (bottom-k)."""
    known_in_new = len(set(known) & found) / len(known) if known else 0.0
    return Containment(known_in_new, _contained(new, known, size))


def _contained(a: list[int], b: list[int], size: int) -> float:
    """Estimated share of A's documents that are also in B, from their bottom-k sketches.

    Only hashes of A below B's largest sketched hash can be looked up in B's sketch (B's sketch holds
    every hash of B in that range); when B's sketch is not full it holds all of B.
    """
    if not a or not b:
        return 0.0
    top = b[-1] if len(b) >= size else float("inf")
    seen = [h for h in a if h <= top]
    if not seen:
        return 0.0
    in_b = set(b)
    return sum(1 for h in seen if h in in_b) / len(seen)
