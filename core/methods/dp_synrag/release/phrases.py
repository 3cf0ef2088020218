"""Step 0 of DP-SynRAG: DP phrase discovery (SPEC §2.0; docs/method.md §2.0).

Topics can only be entries of the keyword vocabulary V. A public list rarely holds a corpus's local
names ("Cinder Asthma", a product or a ward), so this stage releases the corpus's own frequent
phrases with DP set union (the Gaussian sparse histogram, ``core.privacy.mechanisms``):

1. **Proposals, one unit at a time.** Each unit proposes at most K_p distinct 1–3-word n-grams of its
   own text (:func:`propose_phrases`), chosen from that unit alone and public lists: no n-gram that
   crosses punctuation, holds a number or a one-letter piece (the "t" of "doesn't"), starts or ends
   with a stop word, holds a contraction fragment or markup piece (``vocabulary.not_words``) or a
   word of a public list of given names and surnames written as a name. Among the rest: first the
   names the text writes as names (several capitalised words, not only because a sentence starts and
   not in a headline's title case: "Cinder Asthma", "Kindle Paperwhite"; or written whole with an
   article or small inner words, up to 5 words: "The Shawshank Redemption", "Bank of England"), then
   the rarest in general English (public wordfreq frequencies; an n-gram is as common as its most
   common word, plus a small penalty per extra word, ties broken by the n-gram's own frequency); the
   first K_p.
2. **Release.** Count each phrase over units, add N(0, σ_p²) to every non-zero count, release the
   phrases whose noisy count exceeds τ_p; charged (ρ_p = K_p/(2σ_p²) and δ_p) before anything is
   drawn, checkpointed so a resume never draws again.
3. The released phrases (DP outputs, so public) extend V for the keyword histogram of step 1
   (sequential composition).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from core.corpus import Unit
from core.common.links import without_links
from core.methods.base import MethodContext
from core.methods.dp_synrag.release.plan import DPSynRAGPlan
from core.methods.dp_synrag.vocab.vocabulary import (
    Vocabulary,
    english_zipf,
    load_person_names,
    load_stop_words,
    not_words,
)
from core.privacy.mechanisms import gaussian_sparse_histogram
from core.privacy.planner import STAGE_PHRASES
from core.privacy.release import run_release
from core.privacy.set_union import expected_releases, item_counts
from core.common.progress import ProgressEvent, StageProgress

MAX_PHRASE_WORDS = 3
MAX_NAME_WORDS = 5  # a name written whole may be longer: "the silence of the lambs", "bank of england"
NAME_ARTICLE = "the"
NAME_INNER = frozenset({"of", "the", "on", "in", "with", "for", "de", "du", "la", "le", "von", "van", "der", "del"})
TITLE_CASE_WORDS = 4  # content words, all capitalised: a headline, not a name
MIN_WORD_LETTERS = 2

PHRASE_WORD_PENALTY = 0.25  # Zipf units per extra word: "cinder asthma" before "cinder asthma worsened"

# A segment is text between punctuation marks (an n-gram never spans a comma or a full stop).
_SEGMENT_BREAK = re.compile(r"([^\w\s'’-]+|\n|\s-\s)")
_SENTENCE_END = re.compile(r"[.!?:;\n]")
_TOKEN = re.compile(r"[^\W\d_]+|\d+")


@dataclass(frozen=True)
class PublicLists:
    """The public lists a proposal reads besides its own unit (never anything of another unit)."""

    stop_words: frozenset[str]
    names: frozenset[str]
    excluded: frozenset[str]
    english: frozenset[str]

    @classmethod
    def shipped(cls, english: Vocabulary) -> PublicLists:
        return cls(load_stop_words(), load_person_names(), not_words(), frozenset(english.words))


@dataclass(frozen=True)
class _Token:
    word: str  # lower case
    is_number: bool
    capitalised: bool
    sentence_start: bool = False  # the first word of a sentence: its capital says nothing


def _segments(text: str) -> list[list[_Token]]:
    out = []
    parts = _SEGMENT_BREAK.split(text)
    starts_sentence = True
    for i, segment in enumerate(parts):
        if i % 2:  # a delimiter
            starts_sentence = bool(_SENTENCE_END.search(segment))
            continue
        found = _TOKEN.findall(segment.replace("’", "'"))
        tokens = [_Token(t.lower(), t.isdigit(), t[:1].isupper(), starts_sentence and j == 0) for j, t in enumerate(found)]
        if tokens:
            out.append(tokens)
            starts_sentence = False
    return out


def _written_as_name(tokens: Sequence[_Token]) -> bool:
    """Several words, all capitalised, at least one not merely because it starts a sentence."""
    return len(tokens) > 1 and all(t.capitalised for t in tokens) and any(not t.sentence_start for t in tokens)


def _is_name(token: _Token, lists: PublicLists) -> bool:
    """A word of the public name list written as a name (capitalised), or one that is no English word."""
    return token.word in lists.names and (token.capitalised or token.word not in lists.english)


def _admissible(tokens: Sequence[_Token], lists: PublicLists) -> bool:
    if tokens[0].word in lists.stop_words or tokens[-1].word in lists.stop_words:
        return False
    return not any(_excluded(t, lists) for t in tokens)


def _excluded(token: _Token, lists: PublicLists) -> bool:
    """A number, a one-letter piece, a not-word (``not_words.txt``) or a name."""
    return (
        token.is_number or len(token.word) < MIN_WORD_LETTERS or token.word in lists.excluded or _is_name(token, lists)
    )


@lru_cache(maxsize=262144)
def _rarity(phrase: str, stop_words: frozenset[str]) -> tuple[float, float]:
    """(frequency of the phrase's most common non-stop word + a penalty per extra word, the phrase's
    own frequency), Zipf scale: lower is rarer."""
    words = phrase.split(" ")
    common = max(english_zipf(w) for w in words if w not in stop_words)
    return common + PHRASE_WORD_PENALTY * (len(words) - 1), english_zipf(phrase)


def _title_case(tokens: Sequence[_Token], lists: PublicLists) -> bool:
    """A stretch written in title case (a headline: "Tornadoes Reported in Southeast Louisiana"): at least
    ``TITLE_CASE_WORDS`` words that are no stop words, all capitalised. Its capitals say nothing of names."""
    content = [t for t in tokens if t.word not in lists.stop_words and not t.is_number and len(t.word) >= MIN_WORD_LETTERS]
    return len(content) >= TITLE_CASE_WORDS and all(t.capitalised for t in content)


def whole_names(tokens: Sequence[_Token], lists: PublicLists) -> list[list[_Token]]:
    """The names a segment writes whole with their article or small inner words ("The Shawshank Redemption",
    "Gone with the Wind", "Bank of England"): each longest run of capitalised words joined by ``NAME_INNER``
    words, less small words at its end, starting with a capitalised "The" when that is not a sentence's first
    word (there its capital says nothing), of 2 to ``MAX_NAME_WORDS`` words with a small word among them
    (the other names are :func:`_written_as_name`'s), none excluded, and at least one capital that is not a
    sentence's first word. A stop word capitalised inside a sentence is the name's own word (:func:`_own_name_word`):
    it joins the run and may end it ("The Truman Show", "Top Gun"); a run of stop words alone is no name. (A
    stretch written in title case is not read for them: :func:`candidate_phrases`.)"""
    runs: list[list[_Token]] = [[]]
    for token in tokens:
        if token.word in lists.stop_words:
            joins = token.word in NAME_INNER or _own_name_word(token)
        else:
            joins = token.capitalised
        if joins and not _excluded(token, lists):
            runs[-1].append(token)
        elif runs[-1]:
            runs.append([])
    names = []
    for run in runs:
        while run and run[-1].word in lists.stop_words and not _own_name_word(run[-1]):
            run = run[:-1]
        while run and run[0].word in lists.stop_words and not _own_name_word(run[0]) and not (
                run[0].word == NAME_ARTICLE and run[0].capitalised and not run[0].sentence_start):
            run = run[1:]
        small = [t for t in run if t.word in lists.stop_words]
        if (2 <= len(run) <= MAX_NAME_WORDS and small and len(small) < len(run)
                and any(t.capitalised and not t.sentence_start for t in run)):
            names.append(run)
    return names


def _own_name_word(token: _Token) -> bool:
    """A stop word that is a name's own word: capitalised inside a sentence and no small inner word ("Show" of
    "The Truman Show", "Bill" of "Bill Gates", "Top" of "Top Gun"; the stop list holds such words)."""
    return token.capitalised and not token.sentence_start and token.word not in NAME_INNER | {NAME_ARTICLE}


def candidate_phrases(text: str, lists: PublicLists, max_words: int = MAX_PHRASE_WORDS) -> dict[str, bool]:
    """The admissible 1–``max_words``-word n-grams of one text, distinct, in order of appearance, each
    with whether the text writes it as a name somewhere (:func:`_written_as_name`; never in a stretch written
    in title case, :func:`_title_case`, whose capitals say nothing), and the names it writes whole with their
    article or small inner words (:func:`whole_names`). A name the text writes after a capitalised "The" is
    proposed with it only ("the shawshank redemption", not also "shawshank redemption")."""
    seen: dict[str, bool] = {}
    for tokens in _segments(without_links(text)):
        titled = _title_case(tokens, lists)
        for i in range(len(tokens)):
            for n in range(1, max_words + 1):
                window = tokens[i : i + n]
                if len(window) < n:
                    break
                if _admissible(window, lists):
                    phrase = " ".join(t.word for t in window)
                    seen[phrase] = seen.get(phrase, False) or (not titled and _written_as_name(window))
        for name in [] if titled else whole_names(tokens, lists):
            seen[" ".join(t.word for t in name)] = True
    article = NAME_ARTICLE + " "
    return {p: name for p, name in seen.items() if not (name and seen.get(article + p))}


def propose_phrases(text: str, lists: PublicLists, K_p: int) -> list[str]:
    """At most ``K_p`` distinct phrases of one unit's text: the names it writes as names first, then
    its rarest admissible n-grams in general English (public frequencies), ties in order of
    appearance. A function of this text and public lists only, which is what the sensitivity
    argument of docs/method.md §2.0 needs."""
    if K_p < 1:
        raise ValueError(f"K_p must be at least 1, got {K_p}")
    found = candidate_phrases(text, lists)
    phrases = list(found)
    order = sorted(
        range(len(phrases)), key=lambda i: (not found[phrases[i]], *_rarity(phrases[i], lists.stop_words), i)
    )
    return [phrases[i] for i in order[:K_p]]


def release_phrases(units: Sequence[Unit], lists: PublicLists, plan: DPSynRAGPlan, ctx: MethodContext) -> list[str]:
    """Step 0: the phrases whose noisy unit count exceeds τ_p (alphabetical): the checkpoint, or each unit's
    proposals counted, the stage charged, the counts noised and released (``run_release``)."""
    started: list[StageProgress] = []

    def propose_and_count() -> Counter[str]:
        started.append(StageProgress(ctx.reporter, STAGE_PHRASES, len(units)).start("Finding the corpus's own phrases"))
        proposals = []
        for unit in units:
            proposals.append(propose_phrases(unit.text, lists, plan.K_p))
            started[0].advance()
        return item_counts(proposals, plan.K_p)

    def release(counts: Counter[str]) -> list[str]:
        return list(gaussian_sparse_histogram(counts, plan.sigma_p, plan.tau_p, plan.K_p, rng=ctx.test_rng()).items)

    phrases = [str(p) for p in run_release(plan.release(STAGE_PHRASES), ctx, propose_and_count, release)]
    for progress in started:  # drawn now (not reloaded): the stage ends after its checkpoint is saved
        ctx.reporter.emit(ProgressEvent(STAGE_PHRASES, "log", message=f"{len(phrases)} phrases released"))
        progress.finish()
    return phrases


def discover_phrases(units: Sequence[Unit], vocab: Vocabulary, plan: DPSynRAGPlan, ctx: MethodContext) -> Vocabulary:
    """Step 0: V extended by the phrases released by DP set union (V itself when discovery is off)."""
    if not plan.discovers_phrases:
        return vocab
    lists = PublicLists.shipped(vocab)
    return extend_vocabulary(vocab, release_phrases(units, lists, plan, ctx), lists)


def extend_vocabulary(vocab: Vocabulary, phrases: Sequence[str], lists: PublicLists) -> Vocabulary:
    """V ∪ the released phrases (they are DP outputs, so public), minus stop words."""
    extra = [p for p in phrases if p and p not in lists.stop_words]
    return Vocabulary.from_words([*vocab.words, *extra], sources=[*vocab.sources, "released phrases (step 0)"])


@dataclass(frozen=True)
class PhraseOutlook:
    """What ``privet plan`` says about step 0. ``expected_released`` is computed from the private
    proposals: for the custodian's screen only, never exported or recorded."""

    rho: float
    delta: float
    sigma: float
    threshold: float
    units_for_even_odds: float  # a phrase held by this many units is released half the time
    units_for_95: float  # ... and 95% of the time
    expected_released: float


def phrase_outlook(units: Sequence[Unit], vocab: Vocabulary, plan: DPSynRAGPlan) -> PhraseOutlook:
    """Step 0's cost and, on these data (on screen only), the expected number of released phrases:
    the sum over proposed phrases of P(count + N(0, σ_p²) > τ_p)."""
    lists = PublicLists.shipped(vocab)
    counts = item_counts([propose_phrases(u.text, lists, plan.K_p) for u in units], plan.K_p)
    expected = sum(expected_releases(c, plan.sigma_p, plan.tau_p) for c in counts.values())
    return PhraseOutlook(
        rho=plan.rho_phrases,
        delta=plan.delta_phrases,
        sigma=plan.sigma_p,
        threshold=plan.tau_p,
        units_for_even_odds=plan.tau_p,
        units_for_95=plan.tau_p + 1.645 * plan.sigma_p,
        expected_released=float(expected),
    )
