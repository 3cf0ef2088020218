"""The document form's shipped, invented demonstrations (docs/method.md §2.4b, §2.6).

A form is public: the custodian's own invented example, or a shipped one (``resources/examples/<form>.txt``) with its
demonstrations (``<form>.demo.toml``). The forms' names, labels, rule and examples are ``core.specs.document_forms``
(``public_example`` and ``shipped_example`` are read here from there); which form a run follows is ``forms.py``; what
the writer does with it is ``write/``. Here: the demonstrations, the words every document of the form says, its public length,
and a public document of the form for the self-filter."""

from __future__ import annotations

import re
import statistics
import tomllib
from dataclasses import dataclass

from core.methods.dp_synrag.shape.released_topics import Topic
from core.methods.dp_synrag.vocab.vocabulary import split_words
from core.common.paths import resources_dir
from core.specs.document_forms import DOCUMENT_FORMS, shipped_example
from core.specs.document_forms import public_example as public_example  # read here by the writer and its checks

FORMS = DOCUMENT_FORMS  # resources/examples/<form>.txt and <form>.demo.toml

PLACEHOLDER = re.compile(r"\[[^\]]*\]")

# an unfilled slot after its article, before its verb, stands for a thing: "The [feature] is good" reads "It is good"
_SLOT_AFTER_ARTICLE = re.compile(
    r"\b(the|a|an|my|his|her|their|this|its)\s+\[[^\]]*\](?=\s+(?:is|was|are|were|has|had|looks|seems|tastes|feels|works)\b)",
    re.IGNORECASE,
)

_LEFT_BEFORE_SLOT = re.compile(r"(?:\s+of)?\s+(?:the|a|an|my|their)\s*(?=[,.;:!?])", re.IGNORECASE)


@dataclass(frozen=True)
class Demonstration:
    """A shipped, invented pair: a topic and the document a writer makes of it (``<form>.demo.toml``)."""

    topic: Topic
    document: str
    avoid: tuple[str, ...] = ()  # its other invented details (names, places) the writer must not copy
    form_words: tuple[str, ...] = ()  # words of the form any document may use (durations, units, sections)


def form_words(example: str) -> frozenset[str]:
    """The words every document of the form whose example is ``example`` (``public_example``: the example a run
    shows) says whatever its topic (public): the words of its example (the slots' names included) and its
    demonstrations' form words ("consultation", "examination", "weeks"). A topic names what a document is about,
    so none of them is a topic word (docs/method.md §2.7)."""
    words = set(split_words(example))
    for demo in demonstrations(example):
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


def form_reference(example: str) -> str:
    """A public document of the form whose example is ``example`` (the example a run shows), for the self-filter's
    check that it can judge this task: the first shipped demonstration, else the example without its placeholders
    ("" when there is no example)."""
    demo = demonstration(example)
    return demo.document if demo else drop_placeholders(example)


def drop_placeholders(text: str) -> str:
    """Remove placeholders the writer left unfilled ("[name]") and the punctuation they leave behind."""
    if not PLACEHOLDER.search(text):
        return re.sub(r"\s+", " ", text).strip()
    text = _SLOT_AFTER_ARTICLE.sub(lambda m: "It" if m.group(1)[0].isupper() else "it", text)  # "The [feature] is good"
    text = PLACEHOLDER.sub("", text)
    text = _LEFT_BEFORE_SLOT.sub("", text)  # "but the [complaint]." -> "but."
    text = re.sub(r"\(\s*\)", "", text)
    text = re.sub(r"\s+([,.;:!?])", r"\1", text)
    text = re.sub(r"([,;:])(?:\s*[,;:])+", r"\1", text)
    text = re.sub(r"(?<!\b[A-Z])([.!?])(?:\s*[,;:])+", r"\1", text)  # "note., 25" -> "note. 25"; "K. M., 47" kept
    text = re.sub(r"^[\s,;:.]+", "", text)
    return re.sub(r"\s+", " ", text).strip()


def form_length(example: str) -> int:
    """The median word count of the shipped demonstrations of the form whose example is ``example`` (public); 0
    when the form has none."""
    demos = demonstrations(example)
    return round(statistics.median(len(d.document.split()) for d in demos)) if demos else 0
