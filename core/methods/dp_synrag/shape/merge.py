"""Topics that describe the same thing become one (docs/method.md §6.2): post-processing of released words.

Two released topics a and b describe the same thing (:func:`same_thing`) when their released co-keyword sets
A and B overlap strongly:

* Jaccard |A ∩ B| / |A ∪ B| ≥ ``MERGE_JACCARD`` (0.6) with at least ``MERGE_SHARED`` (2) words shared, or
* one topic's word is among the other's co-keywords and, without those two words, the sets share at least
  ``MERGE_OVERLAP`` (half) of the smaller one (which must hold at least one word).

Topics are visited most frequent first; each joins the first earlier kept topic it describes the same thing
as (compared with that topic's own released words, so merges do not chain), else it is kept. A merged topic
keeps the first topic's word, sums the released counts (and the estimated units), takes the union of the
co-keywords (a word released in both has its noisy counts summed), and names the other topics' words in every
one of its documents (they are the same thing's names, not co-keywords to sample). Only released words and
counts are read, so it costs nothing.
"""

from __future__ import annotations

from typing import Sequence

from core.methods.dp_synrag.shape.released_topics import ReleasedTopic

MERGE_JACCARD = 0.6
MERGE_OVERLAP = 0.5
MERGE_SHARED = 2  # one shared co-keyword is no evidence: in news most topics released only "trump" (round 4, s8)


def same_thing(a: ReleasedTopic, b: ReleasedTopic, jaccard: float = MERGE_JACCARD,
               overlap: float = MERGE_OVERLAP) -> bool:
    """Whether two topics' released descriptions say they are one (the rule above; public words only)."""
    A, B = set(a.co_keywords), set(b.co_keywords)
    if len(A & B) >= MERGE_SHARED and len(A & B) / len(A | B) >= jaccard:
        return True
    if a.word in B or b.word in A:
        A2, B2 = A - {b.word}, B - {a.word}
        smaller = min(len(A2), len(B2))
        return smaller >= 1 and len(A2 & B2) >= overlap * smaller
    return False


def merged(head: ReleasedTopic, others: Sequence[ReleasedTopic]) -> ReleasedTopic:
    """``head`` with ``others`` merged in: its word, the summed count, the union of the co-keywords (most
    frequent first, without the merged topics' words, which every document names), every cluster it stands
    for."""
    names = tuple(dict.fromkeys(w for t in (head, *others) for w in (t.word, *t.merged_words)))
    counts: dict[str, float] = dict(zip(head.co_keywords, head.co_counts))
    for other in others:
        for word, count in zip(other.co_keywords, other.co_counts):
            counts[word] = counts.get(word, 0.0) + count
    order = sorted((w for w in counts if w not in names), key=lambda w: -counts[w])
    return ReleasedTopic(
        head.word, head.count + sum(o.count for o in others), tuple(order), tuple(counts[w] for w in order),
        tuple(c for t in (head, *others) for c in t.clusters), names[1:],
        sum(t.size for t in (head, *others)),
    )


def merge_topics(topics: Sequence[ReleasedTopic]) -> list[ReleasedTopic]:
    """The topics with those that describe the same thing merged, in order of their (first) released count."""
    heads: list[ReleasedTopic] = []
    joined: list[list[ReleasedTopic]] = []
    for topic in sorted(topics, key=lambda t: -t.count):
        home = next((i for i, head in enumerate(heads) if same_thing(head, topic)), None)
        if home is None:
            heads.append(topic)
            joined.append([])
        else:
            joined[home].append(topic)
    return [merged(head, others) if others else head for head, others in zip(heads, joined)]
