"""The public writer's prompt and the start of its draft (docs/method.md §2.6): released words, the public task, the
public example and a shipped demonstration, nothing else; the lead is the form's opening with invented initials and
age, never a name."""

from __future__ import annotations

import hashlib
import re
from typing import Callable, Sequence

from core.methods.dp_synrag.shape.examples import PLACEHOLDER, Demonstration
from core.methods.dp_synrag.shape.released_topics import Topic
from core.common.prompts import render

CATEGORY_SENTENCE = "The document belongs to this category: {label}."

# a topic's co-keywords in the demonstration prompt; a topic with none gets no such line (round 4, session 12: "Related
# words: none." made the writer talk about "none": "The word "none" refers to a particular person …")
RELATED_WORDS = " Related words: {words}."


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
    lead = PLACEHOLDER.split(example, maxsplit=1)[0].strip() if example else ""
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
    opening = PLACEHOLDER.match(example.strip())
    opening_slot = opening.group(0)[1:-1].strip().lower() if opening else ""
    seed = "\x1f".join(topic.words) + (f"\x1e{document}" if document else "")
    digest = int.from_bytes(hashlib.sha256(seed.encode("utf-8")).digest()[:8], "big")
    if not lead and opening_slot in _TITLE_SLOTS:
        word = topic.words[digest % len(topic.words)]
        return word[:1].upper() + word[1:]
    if not lead and opening_slot not in _PERSON_SLOTS:
        return ""
    parts = PLACEHOLDER.split(example[example.index(lead) + len(lead):] if lead else example.strip())
    slots = [m.group(0)[1:-1].strip().lower() for m in PLACEHOLDER.finditer(example)]
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
