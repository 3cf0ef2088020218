"""Public realisation (SPEC §2.6, docs/method.md §2.6): a public writer turns each released topic into a document.

Post-processing of released outputs, so it costs nothing and may use any decoding. The writer's prompt
holds only

* the topic's released words: the cluster word w_r and its released co-keywords (steps 1 and 2b),
* the public task description, and
* a **public example of the document form**, invented by the custodian or picked from the shipped
  forms (``resources/examples/*.txt``), never a real document: :func:`check_public_example`
  (``example_check.py``) refuses, before anything is charged, an example that is a near-copy of a loaded
  document (its full text) or shares a name or a rare word with one;
* for a shipped form, one of its invented demonstrations (``<form>.demo.toml``), in rotation: document i
  is shown demonstration i mod n. The writer may not copy it: its 4-token runs and content words are
  banned while it writes, and what still shares a content word or a near-form of a name with the
  demonstration it saw, and not with the topic's released words, is cut: the clause that brings it in, or
  the sentence (:func:`drop_refused`, ``demonstration_guard.py``).

Every released word must appear verbatim in the document: the writer is asked for them and pulled toward
them by constrained decoding (``public_decoding.py``), its draft is
cleaned of meta-text (:func:`clean_draft`), checked (:func:`missing_words`), written again with the
missing words named, and a final structured line guarantees the rest (:func:`guarantee_words`).
"""

from __future__ import annotations

import hashlib
import math
import re
import tomllib
from dataclasses import dataclass
from functools import partial
from typing import Callable, Mapping, Sequence

import torch

from core.corpus import Corpus
from core.common.errors import PrivetError
from core.common.links import LINK
from core.methods.dp_synrag.example_check import check_public_example
from core.methods.dp_synrag.example_check import example_problem as example_problem  # re-exported
from core.methods.dp_synrag.demonstration_guard import DemonstrationGuard, PublicLists
from core.methods.dp_synrag.public_decoding import (
    ECHO_PENALTY,
    CopyGuard,
    WordPull,
    copy_guard,
    missing_words,
    public_greedy,
    stage_echo,
    with_scaffold,
)
from core.methods.dp_synrag.roles import RoleSources, assign_roles
from core.methods.dp_synrag.lead_phrases import JoinScorer, joined, phrases_of
from core.methods.dp_synrag.slots import PhraseJoiner, Placement, form_slots, lead_pool, place
from core.methods.dp_synrag.sentence_cuts import cut_sentences
from core.methods.dp_synrag.vocabulary import load_stop_words, split_words
from core.methods.dp_synrag.writing_progress import WRITER_BATCH, DraftWork, stepping
from core.models import threads
from core.models.base import LanguageModel
from core.common.paths import resources_dir
from core.common.progress import ProgressEvent, Reporter, StageProgress
from core.common.prompts import render
from core.specs.runspec import DOCUMENT_FORMS, RunSpec

FORMS = DOCUMENT_FORMS  # resources/examples/<form>.txt and <form>.demo.toml
REALISATION_STAGE = "realisation"
ATTEMPTS = 2  # drafts per topic before the structured line
LONGEST_SENTENCE = 40  # words: a longer sentence of the writer is a run-on, cut at a comma (if no released word is lost)
HEADLINE_STUB_WORDS = 2  # a first line this short above the text is a headline left at the lead's word
DEMO_PROMPT_TOKENS = 512  # the writer's prompt with a demonstration is public: it may be longer than a private one

_PLACEHOLDER = re.compile(r"\[[^\]]*\]")
# an unfilled slot after its article, before its verb, stands for a thing: "The [feature] is good" reads "It is good"
_SLOT_AFTER_ARTICLE = re.compile(
    r"\b(the|a|an|my|his|her|their|this|its)\s+\[[^\]]*\](?=\s+(?:is|was|are|were|has|had|looks|seems|tastes|feels|works)\b)",
    re.IGNORECASE,
)
_LEFT_BEFORE_SLOT = re.compile(r"(?:\s+of)?\s+(?:the|a|an|my|their)\s*(?=[,.;:!?])", re.IGNORECASE)
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


CATEGORY_SENTENCE = "The document belongs to this category: {label}."
# a topic's co-keywords in the demonstration prompt; a topic with none gets no such line (round 4, session 12: "Related
# words: none." made the writer talk about "none": "The word "none" refers to a particular person …")
RELATED_WORDS = " Related words: {words}."


@dataclass(frozen=True)
class Topic:
    """A released topic: the cluster word w_r and its released co-keywords (all public)."""

    keyword: str
    related: tuple[str, ...] = ()
    label: str = ""  # labels by topic: the label the document is written for (released or typed; docs/method.md §6.3)

    @property
    def words(self) -> tuple[str, ...]:
        return (self.keyword, *self.related)


@dataclass(frozen=True)
class Realisation:
    """One realised document; ``attempts`` drafts were written, ``fallback``: the structured line was needed."""

    text: str
    attempts: int
    fallback: bool
    shown: int = -1  # the index of the demonstration the writer saw (-1: none)
    refused: tuple[str, ...] = ()  # words of its drafts the demonstration guard refused (cut from the document)
    written: bool = True  # the writer wrote a sentence of its own beyond the form's opening (else: not kept)


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


@dataclass(frozen=True)
class Demonstration:
    """A shipped, invented pair: a topic and the document a writer makes of it (``<form>.demo.toml``)."""

    topic: Topic
    document: str
    avoid: tuple[str, ...] = ()  # its other invented details (names, places) the writer must not copy
    form_words: tuple[str, ...] = ()  # words of the form any document may use (durations, units, sections)

    def guard(self, form_text: str, lists: PublicLists | None = None) -> DemonstrationGuard:
        """Its demonstration guard, for a form whose public text (example and task) is ``form_text``."""
        return DemonstrationGuard.of(self.document, self.topic.words, self.avoid, form_text, self.form_words, lists)


# -- the public example ---------------------------------------------------------------------


def shipped_example(form: str) -> str:
    """The shipped invented example of ``form`` (one of FORMS)."""
    if form not in FORMS:
        raise PrivetError(f"Unknown document form {form!r}.", f"Choose one of: {', '.join(FORMS)}, or type an example.")
    return (resources_dir() / "examples" / f"{form}.txt").read_text(encoding="utf-8").strip()


def public_example(document_form: str, example: str) -> str:
    """The example the writer sees: the custodian's own text if given, else the shipped form ("" = none)."""
    if example.strip():
        return example.strip()
    return shipped_example(document_form) if document_form and document_form != "none" else ""


def form_words(document_form: str, example: str) -> frozenset[str]:
    """The words every document of the form says whatever its topic (public): the words of its example (the
    slots' names included) and its demonstrations' form words ("consultation", "examination", "weeks"). A topic
    names what a document is about, so none of them is a topic word (docs/method.md §2.7)."""
    text = public_example(document_form, example)
    words = set(split_words(text))
    for demo in demonstrations(text):
        words.update(w for entry in demo.form_words for w in split_words(entry))
    return frozenset(words)


def demonstrations(example: str) -> tuple[Demonstration, ...]:
    """The shipped demonstrations of the form whose example is ``example`` (none for a custodian's own
    example, or a form without them): the writer sees one as a worked case before its own topic."""
    folder = resources_dir() / "examples"
    for form in FORMS:
        demo = folder / f"{form}.demo.toml"
        if example.strip() and demo.exists() and shipped_example(form) == example.strip():
            return parse_demonstrations(demo.read_text(encoding="utf-8"))
    return ()


def parse_demonstrations(text: str) -> tuple[Demonstration, ...]:
    """The demonstrations of a ``<form>.demo.toml``: its ``[[demonstration]]`` tables, each with ``topic``,
    ``related``, ``document`` and optional ``avoid``; the file's ``form_words`` apply to all. A file of the
    first format (one demonstration's keys at the top level) is read as one demonstration."""
    data = tomllib.loads(text)
    tables = list(data.get("demonstration", ()))
    if "document" in data:
        tables.insert(0, data)
    form_words = tuple(data.get("form_words", ()))
    return tuple(
        Demonstration(Topic(t["topic"], tuple(t["related"])), t["document"].strip(), tuple(t.get("avoid", ())),
                      form_words)
        for t in tables
    )


def demonstration(example: str) -> Demonstration | None:
    """The first shipped demonstration of the form whose example is ``example`` (None when it has none)."""
    shown = demonstrations(example)
    return shown[0] if shown else None


def shown_index(count: int, i: int) -> int:
    """The demonstration document i is shown, of ``count``: i mod count, a public rule (-1 without any)."""
    return i % count if count else -1


def form_reference(document_form: str, example: str) -> str:
    """A public document of the form, for the self-filter's check that it can judge this task: the first
    shipped demonstration, else the example without its placeholders ("" when there is no example)."""
    shown = public_example(document_form, example)
    demo = demonstration(shown)
    return demo.document if demo else _drop_placeholders(shown)


def check_spec_example(spec: RunSpec, corpus: Corpus) -> None:
    """The run spec's example, checked against the loaded corpus: called by ``privet plan``, before a run
    loads its models, and before the first charge. A typed example is checked whatever ``text`` says (it is
    recorded in the certificate's parameters even when unused); a no-op for other methods."""
    p = spec.dp_synrag
    if spec.method == "dp_synrag" and (p.realisation or p.public_example.strip()):
        example = public_example(p.document_form, p.public_example)
        if example:
            check_public_example(example, corpus)  # every document's full text, not the truncated units


# -- the writer's prompt and its cleaning ------------------------------------------------------------


def labelled_task(task: str, label: str) -> str:
    """The public task, with the label a document is written for when it has one (the public-only writer's
    words for a label, ``core.evaluation.downstream``): a class-conditional prompt. The label is typed (public)
    or released by the class counts' set union, so the prompt stays post-processing."""
    return f"{task} {CATEGORY_SENTENCE.format(label=label)}".strip() if label else task


def realisation_prompt(
    topic: Topic, task: str, example: str, missing: Sequence[str] = (), demo: Demonstration | None = None
) -> str:
    """The writer's prompt: released words (and the document's label, when it has one), the public task, the
    public example and the shipped demonstration of its form, nothing else."""
    task = labelled_task(task, topic.label)
    words = ", ".join(topic.words)
    if demo is not None:
        prompt = render("realise_demo", task=task, example=example, demo_topic=demo.topic.keyword,
                        demo_words=", ".join(demo.topic.related), demo_document=demo.document,
                        topic=topic.keyword, related=RELATED_WORDS.format(words=", ".join(topic.related)) if topic.related else "")
    elif example:
        prompt = render("realise", task=task, example=example, words=words)
    else:
        prompt = render("realise_plain", task=task, words=words)
    if missing:
        prompt += " Be sure to use: " + ", ".join(missing) + "."
    return prompt


def example_lead(example: str, max_words: int = 6) -> str:
    """The public start of every draft: the example's words before its first placeholder, if short
    (e.g. "Consultation note."), so the writer starts in the form instead of with "Here is…"."""
    lead = _PLACEHOLDER.split(example, maxsplit=1)[0].strip() if example else ""
    if not lead or "[" in example[: len(lead)] or len(lead.split()) > max_words:
        return ""
    return lead


_PERSON_SLOTS = frozenset({"name", "client", "patient", "who", "reviewer", "customer"})
_TITLE_SLOTS = frozenset({"headline", "title", "subject"})
_AGE_SLOTS = frozenset({"age"})
_INITIALS = "ABCDEFGHJKLMNPRSTVW"


def realisation_lead(example: str, topic: Topic, document: int = 0) -> str:
    """The public start of one topic's draft: :func:`example_lead`, and when the form then asks for a person
    and an age, invented ones (initials, as de-identified notes write them, and an age from 19 to 88),
    with the form's words up to its next placeholder (e.g. "Consultation note. K. M., 47, reports").
    Chosen from the topic's released words and the document's place in the shape (``document``), so the
    documents of one topic differ too and a rerun or a resume writes the same; never a name.
    A form that opens with the person ("[name] rated these films highly: …") starts with the invented
    initials; one that opens with its title ("[Headline]") starts with one of the document's released words
    (the topic's or a co-keyword, chosen as the initials are), so the writer begins a headline about it instead
    of echoing the prompt ("The topic of …"), and a topic's headlines do not all open alike."""
    lead = example_lead(example)
    opening = _PLACEHOLDER.match(example.strip())
    opening_slot = opening.group(0)[1:-1].strip().lower() if opening else ""
    seed = "\x1f".join(topic.words) + (f"\x1e{document}" if document else "")
    digest = int.from_bytes(hashlib.sha256(seed.encode("utf-8")).digest()[:8], "big")
    if not lead and opening_slot in _TITLE_SLOTS:
        word = topic.words[digest % len(topic.words)]
        return word[:1].upper() + word[1:]
    if not lead and opening_slot not in _PERSON_SLOTS:
        return ""
    parts = _PLACEHOLDER.split(example[example.index(lead) + len(lead):] if lead else example.strip())
    slots = [m.group(0)[1:-1].strip().lower() for m in _PLACEHOLDER.finditer(example)]
    text = lead + parts[0]
    for i, slot in enumerate(slots):
        if slot in _PERSON_SLOTS:
            first, last = _INITIALS[digest % len(_INITIALS)], _INITIALS[(digest // 19) % len(_INITIALS)]
            text += f"{first}. {last}."
        elif slot in _AGE_SLOTS:
            text += str(19 + (digest // 361) % 70)
        else:
            break
        text += parts[i + 1] if i + 1 < len(parts) else ""
    return re.sub(r"\.\.", ".", text).rstrip() if text != lead + parts[0] else lead


def form_rewrite_message(example: str) -> Callable[[str], str]:
    """The message of a "realised+private" row: rewrite a document (a member's own, or the public draft
    for the public row) in the form of the public example; the seed's rephrase when there is none."""
    if not example:
        return lambda document: render("rephrase", document=document)
    return lambda document: render("form_rewrite", example=example, document=document)


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
    sentences = _SENTENCE_END.split(_drop_placeholders(" ".join(_headline_ended(kept, headline))))
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


def _drop_placeholders(text: str) -> str:
    """Remove placeholders the writer left unfilled ("[name]") and the punctuation they leave behind."""
    if not _PLACEHOLDER.search(text):
        return re.sub(r"\s+", " ", text).strip()
    text = _SLOT_AFTER_ARTICLE.sub(lambda m: "It" if m.group(1)[0].isupper() else "it", text)  # "The [feature] is good"
    text = _PLACEHOLDER.sub("", text)
    text = _LEFT_BEFORE_SLOT.sub("", text)  # "but the [complaint]." -> "but."
    text = re.sub(r"\(\s*\)", "", text)
    text = re.sub(r"\s+([,.;:!?])", r"\1", text)
    text = re.sub(r"([,;:])(?:\s*[,;:])+", r"\1", text)
    text = re.sub(r"(?<!\b[A-Z])([.!?])(?:\s*[,;:])+", r"\1", text)  # "note., 25" -> "note. 25"; "K. M., 47" kept
    text = re.sub(r"^[\s,;:.]+", "", text)
    return re.sub(r"\s+", " ", text).strip()


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
    takes at the demonstration's words per sentence, and one more (``length.fit_length`` then cuts to the target).
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


def topic_placements(topics: Sequence[Topic], example: str, roles: RoleSources | None,
                     llm: LanguageModel | None = None) -> list[Placement]:
    """Where each topic's typed words go in the form (``slots.py``); every word untyped without ``roles``
    or for a form without typed slots. With ``llm``, the public model is asked the role of each word no
    other public source types (``roles.asked_roles``), and the words of the lead are joined into phrases
    (``lead_phrases.py``) among all the lead's words of the documents of that topic, so that the two words of a
    phrase are written together even when a document drew only one of them ("metallic" brings "taste")."""
    slots = form_slots(example) if roles is not None else ()
    if not slots or roles is None:
        return [place(t.words, {}, (), realisation_lead(example, t), turn=i) for i, t in enumerate(topics)]
    if llm is not None:
        roles = roles.asking(llm, [w for t in topics for w in t.words])
    typed = [assign_roles(t.words, roles) for t in topics]
    leads = [realisation_lead(example, t) for t in topics]
    joiners: list[PhraseJoiner | None] = [None] * len(topics)
    if llm is not None:
        pools: dict[str, list[str]] = {}
        for t, r, lead in zip(topics, typed, leads):
            pool = pools.setdefault(t.keyword, [])
            pool.extend(w for w in lead_pool(t.words, r, slots, lead) if w not in pool)
        join = cached_joiner(llm)
        joiners = [partial(join, pool=pools[t.keyword]) for t in topics]
    return [place(t.words, typed[i], slots, leads[i], turn=i, joiner=joiners[i]) for i, t in enumerate(topics)]


def cached_joiner(llm: LanguageModel) -> Callable[..., list[str]]:
    """The lead's words joined into phrases (``lead_phrases.py``) among the words of their ``pool`` (the lead's
    words of the topic's documents), scored after the first lead asked: the leads of one form differ only in
    invented initials and ages."""
    scorers: list[JoinScorer] = []

    def join(lead: str, words: Sequence[str], pool: Sequence[str] = ()) -> list[str]:
        if not scorers:
            scorers.append(JoinScorer(llm, lead.rstrip()))
        return joined(words, phrases_of(scorers[0], sorted({*words, *pool})))

    return join


def placed_lead(lead: str, placement: Placement) -> str:
    """The topic's public lead with its slot's words ("… reports nausea and chest pain")."""
    return f"{lead} {placement.lead}" if placement.lead else lead


def drop_refused(text: str, guard: DemonstrationGuard, released: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """``text`` without what takes the demonstration's content (a word the guard refuses, not one of the
    topic's ``released`` words), and the refused words. A sentence that holds one keeps its words before the
    clause that brings it in when they are a sentence of their own (:func:`_head_before`), else it goes; a
    released word lost with it is written again by the next draft or the structured line."""
    words = guard.refused(text, released)
    if not words:
        return text, ()
    kept = []
    for part in sentences_of(text):
        refused = guard.refused(part, released)
        if not refused:
            kept.append(part)
            continue
        head = _head_before(part, refused)
        if head and not guard.refused(head, released):
            kept.append(head)
    return " ".join(kept), tuple(words)


def drop_shown_and_others(
    text: str, guards: Sequence[DemonstrationGuard], shown: int, released: Sequence[str]
) -> tuple[str, tuple[str, ...]]:
    """:func:`drop_refused` for the demonstration the document saw, then for the form's other demonstrations: a
    content word of any of them that is not one of the topic's released words is no content of this topic either."""
    text, words = drop_refused(text, guards[shown], released)
    for j, other in enumerate(guards):
        if j != shown:
            text, more = drop_refused(text, other, released)
            words += more
    return text, words


_CLAUSE = re.compile(r"[,;:(]|\s(?=(?:and|or|but|after|since|with|while|because|due|as|for|which|who|that|to|in|on|"
                     r"of|from|by|at|when|until)\s)", re.IGNORECASE)
MIN_HEAD_WORDS = 5  # a cut sentence keeps at least this many words ("K. M., 47, reports back stiffness.")


def _head_before(sentence: str, refused: Sequence[str]) -> str:
    """The words of ``sentence`` before the clause that holds its first refused word, closed with a full
    stop, when they are at least MIN_HEAD_WORDS and do not end on a function word; else ""."""
    starts = [m.start() for w in refused for m in re.finditer(rf"(?<!\w){re.escape(w)}(?!\w)", sentence, re.IGNORECASE)]
    if not starts:
        return ""
    cuts = [m.start() for m in _CLAUSE.finditer(sentence, 0, min(starts))]
    while cuts and sentence[cuts[-1]] == ":":  # "…; treatment: [refused]": the label goes with its clause
        cuts = [c for c in cuts[:-1] if sentence[c] in ",;(" or sentence[c].isspace()][-1:] if len(cuts) > 1 else []
    if not cuts:
        return ""
    head = sentence[: cuts[-1]].rstrip(" ,;:(-")
    words = head.split()
    while words and words[-1].lower().strip(",.;:") in _DANGLING:
        words.pop()
    head = " ".join(words).rstrip(" ,;:(-")
    return head + "." if len(words) >= MIN_HEAD_WORDS else ""


_DANGLING = frozenset({"a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "with", "for", "his", "her",
                       "their", "is", "was", "has", "had", "been", "be", "reports", "after", "since", "no"})


def _by_demonstration(todo: Sequence[int], shown: Sequence[int]) -> list[list[int]]:
    """The topics to write, grouped by the demonstration they are shown (one decoding guard per batch)."""
    groups: dict[int, list[int]] = {}
    for i in todo:
        groups.setdefault(shown[i], []).append(i)
    return list(groups.values())


def _with_words(tokenizer, guard: CopyGuard, words: Sequence[str]) -> CopyGuard:
    """``guard`` that also bans ``words`` (what a first draft wrote and the demonstration guard refused)."""
    out = {key: set(tokens) for key, tokens in guard.items()}
    for key, tokens in copy_guard(tokenizer, "", "", words).items():
        out.setdefault(key, set()).update(tokens)
    return out


# -- the stage --------------------------------------------------------------------------------


def realise(
    topics: Sequence[Topic],
    task: str,
    example: str,
    llm: LanguageModel,
    reporter: Reporter,
    max_new_tokens: int = 80,
    batch: int = WRITER_BATCH,
    max_prompt_tokens: int | None = None,
    finished: Mapping[int, Realisation] | None = None,
    on_final: Callable[[int, Realisation], None] | None = None,
    generator: torch.Generator | None = None,
    roles: RoleSources | None = None,
    echo_penalty: float = ECHO_PENALTY,
    target_words: int = 0,
) -> list[Realisation]:
    """One document per topic from public inputs only; every released word appears in it. Topic i is shown
    demonstration i mod n of the form (:func:`shown_index`); its drafts keep nothing of that
    demonstration's content (:func:`drop_refused`). With ``roles``, each typed word is written in its slot
    of the form (:func:`topic_placements`, docs/method.md §2.4c).

    A document is final when its draft holds every released word after a pass, or after the last attempt;
    it is then previewed, passed to ``on_final`` (the run checkpoints it) and counted on the stage's bar.
    ``finished``: documents already written by an interrupted run (topic index → document), reused as
    they are; only the others are written. The list is in topic order either way. ``echo_penalty``: how
    strongly a document is kept from repeating, word for word, what the stage's other documents wrote
    (the echo rule, ``logit_shaping.py``; 0: off). ``target_words``: the length the documents aim at
    (``length.py``; 0: none), which sets how many sentences a draft keeps (:func:`sentence_limit`)."""
    demos = demonstrations(example)
    shown = [shown_index(len(demos), i) for i in range(len(topics))]
    out: dict[int, Realisation] = {i: d for i, d in (finished or {}).items() if 0 <= i < len(topics) and d.shown == shown[i]}
    progress = StageProgress(reporter, REALISATION_STAGE, len(topics), done=len(out))
    progress.start("Writing documents from the released topics")
    tokenizer = llm.chat.tokenizer
    lists = PublicLists.shipped() if demos else None
    guards = [demo.guard(f"{example}\n{task}", lists) for demo in demos]
    decoding = [with_scaffold(tokenizer, copy_guard(tokenizer, demo.document, example,
                                                    (*demo.topic.words, *demo.avoid, *guard.banned_words)))
                for demo, guard in zip(demos, guards)] or [with_scaffold(tokenizer, {})]
    if demos and max_prompt_tokens is not None:  # public prompts: room for the demonstration
        max_prompt_tokens = max(max_prompt_tokens, DEMO_PROMPT_TOKENS)
    limits = [sentence_limit(demos[d].document, target_words) if d >= 0 else 0 for d in shown]
    drafts = [""] * len(topics)
    attempts = [0] * len(topics)
    refused: list[tuple[str, ...]] = [()] * len(topics)
    todo = [i for i in range(len(topics)) if i not in out]
    work = DraftWork(len(todo), ATTEMPTS)
    lead = example_lead(example)
    placements = topic_placements(topics, example, roles, llm)
    leads_of = [placed_lead(realisation_lead(example, t, i), p) for i, (t, p) in enumerate(zip(topics, placements))]
    echo = stage_echo(tokenizer, example, echo_penalty)  # what the documents already written said, not said again
    echo.add([tokenizer.encode(d.text, add_special_tokens=False) for d in out.values()])

    def final(i: int) -> None:
        text, fallback = guarantee_words(drafts[i], topics[i].words, placements[i])
        own = has_own_sentence(drafts[i], leads_of[i], 2) if placements[i].lead else has_own_sentence(drafts[i], lead)
        out[i] = Realisation(text=text, attempts=attempts[i], fallback=fallback, shown=shown[i], refused=refused[i],
                             written=own)
        reporter.emit(ProgressEvent(REALISATION_STAGE, "preview", message=text))  # public: the Run page shows it
        if on_final is not None:
            on_final(i, out[i])

    for attempt in range(ATTEMPTS):
        if not todo:
            break
        last = attempt == ATTEMPTS - 1
        for group in _by_demonstration(todo, shown):
            for start in range(0, len(group), batch):
                threads.match_free_cores()  # each batch on the cores free now (a neighbour may have come or gone)
                chunk = group[start : start + batch]
                d = shown[chunk[0]]
                demo = demos[d] if d >= 0 else None
                prompts = [
                    realisation_prompt(topics[i], task, example,
                                       missing_words(drafts[i], topics[i].words) if attempt else (), demo)
                    for i in chunk
                ]
                pulls = [WordPull.of(tokenizer, placements[i].pull_words) for i in chunk]
                leads = [leads_of[i] for i in chunk]
                # a retry may not write what was refused; a word of a slot is not written bare outside it
                again = [w for i in chunk for w in (*refused[i], *placements[i].placed)]
                guard = _with_words(tokenizer, decoding[max(d, 0)], again) if again else decoding[max(d, 0)]

                def on_step(step: int, rows: int = len(chunk)) -> None:
                    work.step(rows, step, max_new_tokens)
                    progress.share(work.fraction())  # the time left counts down within the batch

                answers = public_greedy(stepping(llm, on_step), prompts, leads, max_new_tokens,
                                        max_prompt_tokens=max_prompt_tokens, guard=guard, pulls=pulls,
                                        generator=generator, echo=echo)
                for i, prompt, answer in zip(chunk, prompts, answers):
                    draft = clean_draft(answer, prompt, headline=leads_of[i] if not lead else "")
                    if d >= 0:
                        draft, words = drop_shown_and_others(draft, guards, d, topics[i].words)
                        refused[i] = tuple(dict.fromkeys((*refused[i], *words)))
                    draft = trim_to_form(draft, topics[i].words, limits[i])
                    draft = " ".join(cut_sentences(sentences_of(draft), topics[i].words, sentences_of(leads_of[i]),
                                                   lead_ends_bare=placements[i].lead_ends_bare))
                    attempts[i] += 1
                    if attempt == 0 or len(missing_words(draft, topics[i].words)) < len(missing_words(drafts[i], topics[i].words)):
                        drafts[i] = draft
                done = [i for i in chunk if last or not missing_words(drafts[i], topics[i].words)]
                work.batch_done(len(chunk), len(chunk) - len(done), first=attempt == 0)
                for i in done:
                    final(i)
                progress.advance(len(done), fraction=work.fraction())
        todo = [i for i in todo if i not in out]
    progress.finish()
    return [out[i] for i in range(len(topics))]
