"""The junk rule (docs/method.md §2.5b): what a reader would throw away, by a fixed rule on public text.

A synthetic document is junk when it talks about the document instead of being one (meta-text: "I'm ready to
help", "Here is the note"), carries URLs or markup, echoes an instruction of ``resources/prompts/`` or the
custodian's task, loops, or holds next to no prose after its topic line (a bare "Key terms: …" line). Each check
returns a short reason a person can read; an empty list means the text is clean.

DP-SynRAG drops junk before its self-filter (:func:`without_junk`: post-processing of synthetic text, no cost),
and ``privet evaluate`` reports the junk rate of every corpus with the same rule (``core.evaluation.quality``).
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from typing import Mapping, Sequence

from core.common.links import has_link
from core.common.paths import resources_dir


def ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


_META = re.compile(
    r"\b(?:document|source)\s*:"
    r"|\bthe\s+(?:original\s+|following\s+|above\s+|given\s+)?document\b"
    r"|\bthe\s+(?:original|following|above|given)\s+text\b"
    r"|\brephras(?:e|ed|es|ing)\b|\bparaphras(?:e|ed|es|ing)\b|\brewritten\s+(?:text|version)\b"
    r"|\bwithout\s+(?:changing|altering)\b"
    r"|\bhere(?:\s+is|'s|\s+are)\s+(?:the|a|an|your|my|one)\s+(?:\w+\s+){0,3}"
    r"(?:document|text|version|note|review|article|summary|rewrite|example)s?\b"
    r"|\b(?:your|this|the)\s+(?:prompt|request)\b|\b(?:kind|type)\s+of\s+(?:document|text)\b"
    r"|\bi(?:'m|\s+am)\s+(?:ready|happy|glad)\s+to\s+(?:help|assist)\b|\bi(?:'d|\s+would)\s+be\s+(?:happy|glad)\s+to\b"
    r"|\bas\s+an\s+ai\b|\blanguage\s+model\b|\bi\s+hope\s+this\s+helps\b|\blet\s+me\s+know\s+if\b"
    r"|\b(?:must|should)\s+(?:contain|include|use)\s+(?:the\s+|these\s+|all\s+)?(?:following\s+)?words\b"
    r"|\b(?:contains?|includes?|uses?)\s+(?:only\s+)?(?:the|these)\s+(?:following\s+)?words\b"
    r"|\bi(?:'m|\s+am)\s+here\s+to\s+(?:help|assist)\b"
    r"|\bi\s+(?:will\s+not|won't|cannot|can't|am\s+unable\s+to)\s+(?:be\s+able\s+to\s+)?(?:fulfil+|assist|complete)\b"
    r"|\b(?:for|of|in|complete)\s+this\s+task\b|\bthe\s+answer\s+(?:must|should)\s+be\b"
    r"|\b(?:meets?|satisf(?:y|ies)|follows?)\s+(?:all\s+)?(?:of\s+)?(?:the|these)\s+(?:given|above|following|stated)\s+"
    r"(?:conditions|requirements|constraints|rules|instructions)\b|\b(?:requested|required|given)\s+(?:words|format)\b",
    re.IGNORECASE | re.MULTILINE,
)
_MARKUP = re.compile(r"\bhref\b|</?[a-z][a-z0-9]*(?:\s[^<>]*)?/?>|&(?:amp|lt|gt|quot|nbsp|#\d+);|\[[^\]\n]*\]\(|```",
                     re.IGNORECASE)
_PLACEHOLDER_SLOT = re.compile(r"\[[a-z][a-z _-]{1,30}\]", re.IGNORECASE)  # "[name]", "[Headline]": a form left unfilled
MAX_PLACEHOLDERS = 1  # a real text may hold one bracketed remark ("[ZHU LIXIN/CHINA DAILY]"); a form holds several
_TOPIC_LINE = re.compile(r"^\s*([^:.!?\n]{1,160}):(?=\s|$)")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
ECHO_WORDS = 6  # an instruction echo = this many consecutive words of a prompt template
MIN_BODY_WORDS = 4  # fewer words of prose (after the topic line) = near-empty
MIN_PROSE_SHARE = 0.5  # fewer whitespace tokens that are words = not prose
LOOP_NGRAM = 6  # a loop repeats whole phrases; shorter n-grams recur in real lists (MovieLens genres)
MAX_LOOP_REPEATS = 4  # one 6-gram this often = a loop
MIN_DISTINCT_NGRAMS = 0.7  # fewer distinct 6-grams than this share of all = a loop
_NOT_TEMPLATES = ("self_filter_offtopic",)  # public calibration sentences, not instructions


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


@cache
def prompt_ngrams(n: int = ECHO_WORDS) -> frozenset[tuple[str, ...]]:
    """Every run of ``n`` consecutive words of the shipped instruction templates (placeholders dropped)."""
    grams: set[tuple[str, ...]] = set()
    for path in sorted((resources_dir() / "prompts").glob("*.txt")):
        if path.stem in _NOT_TEMPLATES:
            continue
        for part in _PLACEHOLDER.split(path.read_text(encoding="utf-8")):
            grams.update(ngrams(_words(part), n))
    return frozenset(grams)


def split_topic_line(text: str) -> tuple[str, str]:
    """(topic line, body): the leading ``topic (co-keywords):`` prefix, if any, and the text after it."""
    match = _TOPIC_LINE.match(text)
    if not match or len(match.group(1).split()) > 16:
        return "", text.strip()
    return match.group(1).strip(), text[match.end() :].strip()


def talks_about_a_text(text: str) -> bool:
    """The meta-text pattern finds something in ``text`` (realisation cuts such a sentence: ``sentence_cuts.py``)."""
    return _META.search(text) is not None


def _meta_reasons(text: str) -> list[str]:
    found = sorted({" ".join(m.group(0).split()).lower() for m in _META.finditer(text)})
    return [f"meta-text {', '.join(repr(f) for f in found)}"] if found else []


def _markup_reasons(text: str) -> list[str]:
    reasons = []
    if has_link(text):
        reasons.append("URL")
    if _MARKUP.search(text):
        reasons.append("markup")
    if len(_PLACEHOLDER_SLOT.findall(text)) > MAX_PLACEHOLDERS:
        reasons.append("unfilled placeholders")
    return reasons


def _echo_reasons(text: str, instructions: Sequence[str]) -> list[str]:
    echoed = set(ngrams(_words(text), ECHO_WORDS))
    extra = {g for extra_text in instructions for g in ngrams(_words(extra_text), ECHO_WORDS)}
    hits = echoed & (prompt_ngrams() | extra)
    return [f"prompt echo '{' '.join(min(hits))}'"] if hits else []


def _loop_reasons(text: str) -> list[str]:
    reasons = []
    lines = [" ".join(line.lower().split()) for line in text.splitlines()]
    counts = Counter(line for line in lines if len(line.split()) >= 3)
    if counts and max(counts.values()) >= 2:
        reasons.append("repeated line")
    grams = ngrams(_words(text), LOOP_NGRAM)
    if grams:
        top = Counter(grams).most_common(1)[0][1]
        if top >= MAX_LOOP_REPEATS or (len(grams) >= 6 and len(set(grams)) / len(grams) < MIN_DISTINCT_NGRAMS):
            reasons.append("repeated words (loop)")
    return reasons


def _prose_reasons(text: str) -> list[str]:
    topic, body = split_topic_line(text)
    words = _words(body)
    topic_words = set(_words(topic))
    if len(words) < MIN_BODY_WORDS or (topic_words and set(words) <= topic_words):
        return ["near-empty after the topic line" if topic else "near-empty"]
    tokens = body.split()
    prose = sum(1 for token in tokens if _WORD.fullmatch(token.strip(".,;:!?\"'()[]-–—"))) / len(tokens)
    return ["not prose"] if prose < MIN_PROSE_SHARE else []


def junk_reasons(text: str, instructions: Sequence[str] = ()) -> list[str]:
    """Why a reader would discard ``text`` (empty = clean). ``instructions``: further public
    instruction texts (e.g. the task description) whose echo also counts as junk."""
    return (_meta_reasons(text) + _markup_reasons(text) + _echo_reasons(text, instructions)
            + _loop_reasons(text) + _prose_reasons(text))


def junk_rate(texts: Sequence[str], instructions: Sequence[str] = ()) -> float:
    """Share of texts with at least one junk reason (nan for no texts)."""
    if not texts:
        return float("nan")
    return sum(1 for t in texts if junk_reasons(t, instructions)) / len(texts)


def without_junk(texts: Mapping[int, str], instructions: Sequence[str] = ()) -> dict[int, str]:
    """``texts`` (in key order) without every text :func:`junk_reasons` finds a reason to discard."""
    return {i: text for i, text in texts.items() if not junk_reasons(text, instructions)}
