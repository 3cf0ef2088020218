"""One pass over a load's text: its content sketches (core/corpus/content_sketch.py) and the lookups of its
shingles, n-grams and documents in the known views' sketches (each new shingle is looked up during the pass, so
filler rows added around real ones cannot dilute what is found).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Set
from dataclasses import dataclass

from core.corpus.content_sketch import (
    COMMON, DOC_MATCH_SHARE, DOC_MIN_WORDS, DOC_RARE_SHARE, DOC_SAMPLE, DOC_WORDS, GRAM_TAG, HOLDS_A_RARE_WORD,
    RARE_DF, RARE_SHINGLE, SHINGLE_SKETCH_SIZE, SHINGLE_TAG, SKETCH_SIZE, WORD_TAG, BottomK, ContentSketch,
    DocumentSignatures, ShingleSketch, document_hash, gram_hashes, keyed_hash, shingle_hashes, sketch_key,
)
from core.corpus.identity_form import identity_text
from core.corpus.model import Corpus
from core.install.installation import installation_secret

# --- one pass over the text: the sketches and the lookups in the known ones ------------------------


@dataclass(frozen=True)
class DocumentMatches:
    """What the per-document lookups found of one known view: which of its signed documents occur in the new
    load (``known_found``) and how many of the new load's documents are one of them (``new_matched``)."""

    known_found: int = 0
    new_matched: int = 0


@dataclass(frozen=True)
class ContentScan:
    """What one pass over a load's documents gives: its sketches, and which of the looked-up hashes
    (``probe``) occur anywhere in it, over all of its text (not only its sketch)."""

    documents: list[int]  # v1 sketch
    sketch: ContentSketch
    found_shingles: frozenset[int] = frozenset()  # shingle and n-gram hashes of the probe found
    found_documents: frozenset[int] = frozenset()
    document_matches: tuple[DocumentMatches, ...] = ()  # one per known sketch passed in, in order
    n_documents: int = 0

    @property
    def shingles(self) -> ShingleSketch:
        return self.sketch.shingles


def corpus_texts(corpus: Corpus) -> list[str]:
    """The loaded documents' full texts (before grouping into units or truncation)."""
    return corpus.document_texts or [u.text for u in corpus.units]


class _SignatureIndex:
    """The known views' document signatures, by word hash: finds, for a new document, the signed documents
    it holds (at least ``DOC_MATCH_SHARE`` of the signature and ``DOC_MIN_WORDS`` words)."""

    def __init__(self, known: list[DocumentSignatures]) -> None:
        self.index: dict[int, list[tuple[int, int]]] = {}
        self.need: dict[tuple[int, int], int] = {}
        for i, signatures in enumerate(known):
            for j, signature in enumerate(signatures.signatures):
                self.need[i, j] = max(DOC_MIN_WORDS, math.ceil(DOC_MATCH_SHARE * len(signature)))
                for h in signature:
                    self.index.setdefault(h, []).append((i, j))
        self.found: list[set[int]] = [set() for _ in known]
        self.new_matched = [0] * len(known)

    def add_document(self, word_hashes: Iterable[int]) -> None:
        hits: dict[tuple[int, int], int] = {}
        for h in word_hashes:
            for ref in self.index.get(h, ()):
                hits[ref] = hits.get(ref, 0) + 1
        matched = {ref for ref, n in hits.items() if n >= self.need[ref]}
        for i in {i for i, _ in matched}:
            self.new_matched[i] += 1
        for i, j in matched:
            self.found[i].add(j)

    def results(self) -> tuple[DocumentMatches, ...]:
        return tuple(DocumentMatches(len(f), n) for f, n in zip(self.found, self.new_matched))


def scan_content(
    corpus: Corpus, probe_shingles: Set[int] = frozenset(), probe_documents: Set[int] = frozenset(), *,
    known: Iterable[DocumentSignatures] = (), key: bytes | None = None, size: int = SHINGLE_SKETCH_SIZE,
    v1_size: int = SKETCH_SIZE, doc_sample: int = DOC_SAMPLE,
) -> ContentScan:
    """Sketch ``corpus`` (v1 and v3), look every one of its shingles, n-grams and documents up in the probes,
    and every document up in the ``known`` views' document signatures.

    Two passes over the text: the first hashes every shingle and n-gram (bottom-k, lookups, v1 hashes, the
    document sample and the per-document lookups); the second counts, for the words of the sketched shingles
    and of the sampled documents only, in how many documents each occurs, which grades each sketched shingle
    (``ShingleSketch.strength``) and picks each sampled document's rarest words. Memory stays bounded by the
    sketch sizes (the identity forms of up to ``_CACHE_DOCUMENTS`` documents are kept between the passes).
    """
    secret = installation_secret() if key is None else key
    shingle_key, gram_key, word_key = (sketch_key(secret, tag) for tag in (SHINGLE_TAG, GRAM_TAG, WORD_TAG))
    texts = corpus_texts(corpus)
    probe = frozenset(probe_shingles)
    known = list(known)
    signatures = _SignatureIndex(known) if any(k.signatures for k in known) else None
    word_hash = functools.lru_cache(maxsize=1 << 16)(lambda w: keyed_hash(w, word_key))
    sample, grams, documents = BottomK(size), BottomK(size), BottomK(v1_size)
    chosen = BottomK(doc_sample)  # the documents to sign, by a keyed hash of their identity form
    found_shingles: set[int] = set()
    found_documents: set[int] = set()
    cache: list[str] | None = [] if len(texts) <= _CACHE_DOCUMENTS else None
    for text in texts:
        identity = identity_text(text)
        if cache is not None:
            cache.append(identity)
        words = identity.split()
        hashes = shingle_hashes(words, shingle_key)
        sample.add_document(hashes)
        gram = gram_hashes(identity, gram_key)
        grams.add_document(gram)
        chosen.add_document({keyed_hash(identity, word_key): identity})
        if probe:
            found_shingles.update(probe.intersection(hashes))  # iterates the document's few hashes
            found_shingles.update(probe.intersection(gram))
        if signatures is not None:
            signatures.add_document({word_hash(w) for w in set(words)})
        document = document_hash(text, secret)
        documents.add_document({document: ""})
        if document in probe_documents:
            found_documents.add(document)
    identities: Iterable[str] = cache if cache is not None else map(identity_text, texts)
    kept, kept_grams, signed = sample.smallest(), grams.smallest(), chosen.smallest()
    wanted = {w for h in kept for w in sample.labels[h].split()}
    wanted.update(w for h in signed for w in chosen.labels[h].split())
    words_df = _document_counts(identities, wanted)
    strength = tuple(_strength(sample.labels[h], sample.counts[h], words_df) for h in kept)
    gram_strength = tuple(RARE_SHINGLE if grams.counts[h] <= RARE_DF else COMMON for h in kept_grams)
    n = len(texts)
    rare_limit = max(RARE_DF, int(DOC_RARE_SHARE * n))
    signed_documents = []
    for h in signed:
        rare = sorted((words_df[w], word_hash(w)) for w in set(chosen.labels[h].split()) if words_df[w] <= rare_limit)
        if len(rare) >= DOC_MIN_WORDS:
            signed_documents.append(tuple(sorted(wh for _, wh in rare[:DOC_WORDS])))
    sketch = ContentSketch(ShingleSketch(tuple(kept), strength, size),
                           ShingleSketch(tuple(kept_grams), gram_strength, size, words=0),
                           DocumentSignatures(tuple(signed_documents), len(signed), n))
    matches = signatures.results() if signatures is not None else tuple(DocumentMatches() for _ in known)
    return ContentScan(documents.smallest(), sketch, frozenset(found_shingles), frozenset(found_documents),
                       matches, n)


_CACHE_DOCUMENTS = 200_000  # up to this many documents, identity forms are computed once for both passes


def _document_counts(texts: Iterable[str], words: set[str]) -> dict[str, int]:
    """In how many of ``texts`` (in identity form) each of ``words`` occurs."""
    counts = dict.fromkeys(words, 0)
    for text in texts:
        for word in words.intersection(text.split()):
            counts[word] += 1
    return counts


def _strength(shingle: str, documents: int, words_df: dict[str, int]) -> int:
    if min(words_df[w] for w in shingle.split()) <= RARE_DF:
        return HOLDS_A_RARE_WORD
    return RARE_SHINGLE if documents <= RARE_DF else COMMON
