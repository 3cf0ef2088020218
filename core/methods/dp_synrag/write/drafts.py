"""A writer's draft made a document (docs/method.md §2.6): cleaned of meta-text, cut to whole sentences and to the
form's length, and every released word guaranteed (public text only: post-processing).

:func:`clean_draft` strips what a small writer adds (labels, "Here is…" lines, URLs, echoes of the prompt, made-up
labels); :func:`trim_to_form` and :func:`fit_length` keep the form's length, or the corpus's released one, by whole
sentences, losing no released word; :func:`guarantee_words` adds a final structured line for the words a draft
lacks."""

from __future__ import annotations

import math
import re
from typing import Sequence

from core.common.links import LINK
from core.methods.dp_synrag.shape.examples import drop_placeholders
from core.methods.dp_synrag.vocab.vocabulary import load_stop_words, split_words
from core.methods.dp_synrag.write.public_decoding import (
    missing_words,
)
from core.methods.dp_synrag.write.slots import Placement

LONGEST_SENTENCE = 40  # words: a longer sentence of the writer is a run-on, cut at a comma (if no released word is lost)

HEADLINE_STUB_WORDS = 2  # a first line this short above the text is a headline left at the lead's word

_OPEN_END = re.compile(r"(?:[\s,;:-]+(?:the|a|an|of|and|or|to|in|on|for|with|by|from|that|which|about|as|at))+\s*$",
                       re.IGNORECASE)  # words that cannot end a sentence, left where meta-text was cut off

_META_LINE = re.compile(
    r"^\s*(here is|here's|sure|certainly|of course|document\s*:|note\s*:|rewritten|rephrased|the document|"
    r"this document|i have|i've|i hope|let me know|please note|example\s*:|invented example|output\s*:)",
    re.IGNORECASE,
)

_META_SENTENCE = re.compile(
    r"\b(document|source)\s*:|\bthe (original |following |above |given |new )?(document|text)\b|\brephras|\bparaphras|"
    r"\bhere (is|are)\b|\bas an ai\b|\b(an? )?(helpful |friendly )?ai assistant\b|\bhugging ?face\b|\bsmollm|"
    r"\blanguage model\b|\binvented example\b|\bsquare brackets\b|\bexactly as written\b|"
    r"\bthis collection\b|\bplaceholder|\bthe (above|previous|original) (examples?|sentences?|versions?|requests?)\b|"
    r"\bthis is (an?|another) (sample|continuation|example|story about)\b|\bthis is an?( \w+){0,2} (report|note|story) about\b|"
    r"\bthis example\b|\bshowing how\b|\byou can find\b|"
    r"\bweb ?(page|site)\b|\bwebsite\b|\bthis is an? (medical )?reference\b|\bquestion\s*:|"
    r"\bmore (detailed )?(explanation|information)\b|\bcan be found (on|at)\b|"
    r"\b(title|keywords|tags|references?)\s*:|\b(medlineplus|pubmed|wikipedia)\b|"
    r"\brelated words?\b|\blist of (related )?(words|terms|keywords)\b|\bthe (sentence|word|phrase) is about\b|"
    r"\ba short summary of\b|\bthe (story|post) (discusses|is about|talks about)\b|\bthe first sentence of\b|"
    r"^\s*translate\s*:|\btranslate (this|it|the)\b|\btranslated (from|into|as)\b|\btranslates (into|to|as)\b|"
    r"\b(above|aforementioned|above-mentioned) (documents?|examples?|texts?)\b|"
    # the writer talking about the piece it writes ("This news article talks about …", "In this context, …"); not
    # "the triggering of Article 50" or "the post office"
    r"\b(this|the|an?)(?: (?!of\b|to\b|in\b|on\b)[\w-]+){0,2} (article|tweet|blog|essay)s?\b(?!\s*(\d|of\b))|"
    r"\bthis (post|piece)\b|\bin this (context|text|tweet|post)\b|\bthe (mentioned|given) (subject|topic|words?)\b|"
    r"\bthe (author|writer|user) (is|has|thinks|wants|provided|asked|requested|highlights|discusses|explains|argues|notes|"
    r"writes|suggests|describes)\b|\bthe example (given|above|provided|shown)\b|\byour form\b|"
    r"\b(this|the) review (is about|contains|describes|discusses|talks about|mentions)\b|\bthe customer (mentioned|described)\b|"
    r"\blist of (topics|subjects|categories)\b|\b(summary|headline|subtitle|topic|subject)\s*:|"
    # round 4, session 16 (news, films): "The context is a report about …", "The section describes …", "The word
    # "Russia" was added …", "A summary of the oil spill …", "This is a professional rating …"; none in 3,824 real
    # articles or 4,000 food reviews
    r"\bthe (content|context|passage|section|paragraph|sentence|excerpt|extract) (is|are|was|includes?|describes?|"
    r"talks?|discusses|mentions|refers?|relates?|contains?|focuses|provides?|highlights?)\b|"
    r"\bthe (word|term) [\"“'‘]?[\w-]+[\"”'’]? (is|refers|means|comes|was|derives)\b|"
    r"^\s*an? (brief |short )?summary of\b|^\s*an? (subject|topic) of\b|"
    r"\bthis is an?( [\w-]+){0,2} (ratings?|profile|news item|paragraph|passage|excerpt)\b",
    re.IGNORECASE,
)

# a sentence ends at . ! ? but not after a title or an initial ("Dr. Lee", "K. M., 47")
_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\bMr\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bMrs\.)(?<!\bSt\.)(?<!\bNo\.)(?<!\b[A-Z]\.)\s+"
)

_LABEL = re.compile(r"^\s*(document|text|note|output|answer|new document)\s*:\s*", re.IGNORECASE)

_STRAY_STOP = re.compile(r"\s*[,;:]+\s*\.(?!\.)|(?<!\.)\.\.(?!\.)")  # "tips:." and "Trump..", not an ellipsis

# a label the writer puts before a sentence: one to three words, the first capitalised, then a colon ("Fact:",
# "Important note:", "Russia:"); kept only when a content word of it is in the prompt (round 4, session 13)
_SENTENCE_LABEL = re.compile(r"^([A-Z][\w’'-]*(?:[ \t]+[\w’'-]+){0,2})[ \t]*:[ \t]+(?=\S)")

# a label of the prompt's form ("Impression:"): a sentence that is that label alone ("Impression.") says nothing and goes
_PROMPT_LABEL = re.compile(r"\b([A-Z][\w-]*):")

MIN_OWN_WORDS = 4  # words a realised document needs beyond the form's opening to be a document at all


def has_own_sentence(draft: str, lead: str, min_words: int = MIN_OWN_WORDS) -> bool:
    """Whether ``draft`` says something beyond the form's public title ``lead`` (:func:`example_lead`, e.g.
    "Consultation note."): "Consultation note." alone, later given a "Key terms: …" line, is not a document
    (4 of 38 in a minimal run, round 4), while "Consultation note. K. M., 47, reports cramps." is. Public
    text only: post-processing, no privacy cost."""
    opening = " ".join(lead.split())
    body = " ".join(draft.split())
    if opening and body.startswith(opening):
        body = body[len(opening):]
    return len(re.findall(r"[^\W\d_]+", body)) >= min_words


def clean_draft(text: str, prompt: str = "", headline: str = "") -> str:
    """Strip meta-text a small writer adds: labels ("Document:"), "Here is…" lines, URLs, lines that echo
    the prompt, repeated lines; keep whole sentences. ``headline``: the released word a form that opens with its
    headline started the draft with (:func:`realisation_lead`), left alone as the first sentence or not."""
    prompt_lines = {line.strip().lower() for line in prompt.splitlines() if len(line.strip()) > 20}
    kept: list[str] = []
    seen: set[str] = set()
    for raw in text.replace("\r", "").split("\n"):
        line = _LABEL.sub("", raw).strip()
        key = line.lower()
        if not line or _META_LINE.match(line) or key in seen or key in prompt_lines:
            continue
        if any(p and p[:40] in key for p in prompt_lines):
            continue
        seen.add(key)
        kept.append(line)
    sentences = _SENTENCE_END.split(drop_placeholders(" ".join(_headline_ended(kept, headline))))
    sentences = [_before_meta(x) for x in sentences]
    if prompt:
        known, stop = set(split_words(prompt)), load_stop_words()
        sentences = [_without_made_up_labels(x, known, stop) for x in sentences]
        labels = {m.lower() for m in _PROMPT_LABEL.findall(prompt)}
        sentences = [x for x in sentences if x.strip().rstrip(".:").strip().lower() not in labels]
    body = " ".join(filter(None, sentences))
    body = _STRAY_STOP.sub(".", body)  # "tips:." and "Trump.." read "tips." and "Trump."; an ellipsis stays
    return _whole_sentences(body.strip())


def _without_made_up_labels(sentence: str, known: set[str], stop: frozenset[str]) -> str:
    """``sentence`` without the labels at its start that the writer made up: a label ("Fact:", "Important note:",
    "Press releases:") whose content words are none of the prompt's words (``known``: its released words, the
    form, the task) goes, the sentence after it stays; a label of the prompt's ("Russia:" for the topic
    "russia", the form's "Impression:") is kept. Public text only."""
    kept, rest, dropped = "", sentence, False
    while match := _SENTENCE_LABEL.match(rest):
        words = [w for w in split_words(match.group(1)) if w not in stop]
        if not words or any(w in known for w in words):
            kept += match.group(0)
        else:
            dropped = True
        rest = rest[match.end():]
    if dropped and not kept:
        rest = rest[:1].upper() + rest[1:]
    return kept + rest


def _headline_ended(lines: list[str], headline: str = "") -> list[str]:
    """Lines joined into running text keep their ends: a line with no closing punctuation (a headline, "Bridge to
    close for repairs") is ended with a full stop, so it does not run into the next one. A first line of at most
    ``HEADLINE_STUB_WORDS`` words, or the lead's bare ``headline`` word as the first line's own sentence ("China. The
    city of …"), is a headline the writer left at that word: dropped when the text after it names its words again
    (:func:`missing_words`), else it heads the text ("China: The city of …")."""
    bare = re.match(re.escape(headline) + r"\s*[.:]\s+(\S.*)$", lines[0], re.IGNORECASE) if headline and lines else None
    if bare:
        lines = [headline, bare.group(1), *lines[1:]]
    if len(lines) < 2:
        return lines
    first, rest = lines[0], " ".join(lines[1:])
    words = split_words(first)
    if len(words) <= HEADLINE_STUB_WORDS:
        return lines[1:] if not missing_words(rest, words) else [first.rstrip(" .:;,-") + ": " + rest]
    return [line if line[-1:] in ".!?:;,\"')" else line + "." for line in lines[:-1]] + [lines[-1]]


def _before_meta(sentence: str, min_words: int = 4) -> str:
    """A sentence without meta-text or URLs: whole when it has none; its words before the first one when
    they are at least ``min_words`` ("K. M. rated these films highly: Fargo, Heat This is a sample of …"
    keeps the list); else nothing."""
    hits = [m.start() for m in (_META_SENTENCE.search(sentence), LINK.search(sentence)) if m]
    if not hits:
        return sentence.strip()
    before = _OPEN_END.sub("", sentence[: min(hits)].rstrip(" ,;:-("))  # "The health section of the" ends "section"
    return before + "." if len(before.split()) >= min_words else ""


def _whole_sentences(text: str) -> str:
    """Cut a trailing unfinished sentence when the complete ones before it hold at least half the text;
    else (the only full stop is the form's opening, "Consultation note. K. M., 47, reports …") close it."""
    if not text or text.endswith((".", "!", "?")):
        return text
    ends = [m.start() for m in _SENTENCE_END.finditer(text)]
    if ends and ends[-1] >= len(text) / 2:
        return text[: ends[-1]].rstrip()
    return text.rstrip(" ,;:-") + "."


def sentences_of(text: str) -> list[str]:
    """``text`` split into sentences (titles and initials do not end one)."""
    return [x for x in _SENTENCE_END.split(text.strip()) if x.strip()]


def trim_to_form(text: str, words: Sequence[str], limit: int) -> str:
    """At most ``limit`` sentences (the demonstration's length and one more), or up to the sentence that
    holds the last released word if that comes later: a small writer that has written the form goes on
    talking about it ("This is a continuation of the previous example …"). Run-on sentences are cut at a
    comma first when that loses no released word."""
    present = [w for w in words if not missing_words(text, [w])]
    shortened = " ".join(_shorter(part) for part in sentences_of(text))
    if not missing_words(shortened, present):
        text = shortened
    parts = sentences_of(text)
    if limit <= 0 or len(parts) <= limit:
        return text
    last_needed = max((next((i for i, part in enumerate(parts) if not missing_words(part, [w])), len(parts) - 1)
                       for w in present),
                      default=0)
    return " ".join(parts[: max(limit, last_needed + 1)])


def sentence_limit(demonstration: str, target_words: int = 0) -> int:
    """The sentences a draft keeps (:func:`trim_to_form`): the demonstration's and one more; for documents meant to
    be longer than the demonstration (``target_words``, the corpus's released length), as many as that length
    takes at the demonstration's words per sentence, and one more (:func:`fit_length` then cuts to the target).
    A form written as one sentence is a list ("K. M. rated these films highly: …"): a longer document is a longer
    list, so it keeps that sentence alone. What the writer wrote after a film profile's list was its talk in all
    of 16 sampled second sentences ("This is a part of the story where …"; MovieLens, ε = 10, round 4, session 16)."""
    sentences = max(len(sentences_of(demonstration)), 1)
    if sentences == 1:
        return 1
    words = max(len(demonstration.split()), 1)
    return max(sentences, math.ceil(target_words * sentences / words)) + 1


def _shorter(sentence: str, max_words: int = LONGEST_SENTENCE) -> str:
    """A run-on sentence of more than ``max_words`` words cut at its last comma or semicolon within them."""
    words = sentence.split()
    if len(words) <= max_words:
        return sentence
    head = " ".join(words[:max_words])
    cut = max(head.rfind(","), head.rfind(";"))
    return head[:cut].rstrip() + "." if cut > len(head) // 3 else sentence


def guarantee_words(text: str, words: Sequence[str], placement: Placement | None = None) -> tuple[str, bool]:
    """``text`` with a final structured line naming the released words it lacks (True when one was added);
    with a ``placement`` (``slots.py``), a missing typed word goes to its slot's line ("Impression: x.") first."""
    missing = missing_words(text, words)
    if not missing:
        return text, False
    lines = placement.slot_lines(missing) if placement is not None else []
    rest = [w for w in missing if placement is None or w not in placement.placed]
    if rest:
        lines.append("Key terms: " + ", ".join(rest) + ".")
    line = " ".join(lines)
    return (f"{text}\n{line}" if text else line), True

LENGTH_SLACK = 1.25  # a document is "about" the target up to a quarter longer (whole sentences)

KEY_TERMS = "Key terms:"


def fit_length(text: str, words: Sequence[str], target: int, slack: float = LENGTH_SLACK) -> str:
    """``text`` shortened toward ``target`` words by whole sentences, losing no released word (above); a
    final "Key terms:" line is kept for the words the body lacks. ``target`` 0: unchanged."""
    if target <= 0:
        return text
    lines = text.split("\n")
    body = "\n".join(lines[:-1]) if len(lines) > 1 and lines[-1].startswith(KEY_TERMS) else text
    if body.startswith(KEY_TERMS):
        return text
    kept: list[str] = []
    size, full = 0, False
    for i, sentence in enumerate(sentences_of(body)):
        n = len(sentence.split())
        new = [w for w in words if not missing_words(sentence, [w]) and missing_words(" ".join(kept), [w])]
        full = full or (i > 0 and size + n > slack * target)
        if i == 0 or new or not full:
            kept.append(sentence)
            size += n
    return guarantee_words(" ".join(kept), words)[0]
