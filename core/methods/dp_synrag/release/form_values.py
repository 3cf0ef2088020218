"""What each unit proposes to structure discovery's third release (docs/method.md §2.0b): the short values its own
documents' labelled ``[text]`` slots hold ("yes", "Ledgerly", "an expired token"), so that a value many
units write, such as a category, is written as it stands. Read from one unit, public lists and released outputs only;
released only by the DP set union of ``structure.py``."""

from __future__ import annotations

import re
from collections.abc import Mapping

from core.corpus import Unit
from core.methods.dp_synrag.release.form_proposals import (
    MIN_FIXED_WORDS,
    SLOT,
    FormLists,
    documents_of,
    fixed_words,
    skeleton_of,
)

VALUE_SEPARATOR = "\x1f"  # between a value's slot label and its words in one released item
MAX_VALUE_WORDS = 3
MAX_VALUE_CHARS = 40
MAX_DOCUMENT_CHARS = 20_000  # longer documents are cut before matching (bounds the expression's backtracking)
_NOT_IN_VALUE = re.compile(r"[\d.;:!?()\[\]\n|•·_\x1f]")
_SLOT_PATTERNS = {"text": r"(.+?)", "name": r".+?", "number": r"\w+(?:[.,]\d+)*", "month": r"[^\W\d_]+"}


def skeleton_pattern(skeleton: str) -> re.Pattern[str]:
    """A released skeleton as a regular expression whose groups are its ``[text]`` slots, in order."""
    pieces, at = [], 0
    for m in SLOT.finditer(skeleton):
        pieces += [r"\s+".join(re.escape(part) for part in re.split(r"\s+", skeleton[at:m.start()])), _SLOT_PATTERNS[m.group(1)]]
        at = m.end()
    pieces.append(r"\s+".join(re.escape(part) for part in re.split(r"\s+", skeleton[at:])))
    return re.compile(r"\A\s*" + "".join(pieces) + r"\s*\Z", re.DOTALL)


def short_value(text: str, lists: FormLists) -> str:
    """A slot's filler as a value a form may hold ("yes", "Ledgerly", "an expired token"), or "" when it is longer
    than ``MAX_VALUE_WORDS`` words, holds a digit or a clause's punctuation, or a capitalised name of the public list."""
    value = " ".join(text.split())
    words = value.split(" ")
    if not value or len(words) > MAX_VALUE_WORDS or len(value) > MAX_VALUE_CHARS or _NOT_IN_VALUE.search(value):
        return ""
    if any(w[:1].isupper() and w.strip(",'’").lower() in lists.names for w in words):
        return ""
    return value


LABEL_WORDS = 4  # a slot's label: at most this many words of the wording before it, in its own clause
_CLAUSE = re.compile(r"[.;!?\n|•·]")


def slot_labels(skeleton: str) -> list[str]:
    """Each ``[text]`` slot's *label*, in order: the last words of the fixed wording just before it, in that wording's
    last clause, lower case ("product:", "customer satisfied:", "reports"), and the first mark after the slot; for a
    slot written onto the slot before it ("[name], [number][text]": "49M"), the last words of its clause, slots too;
    "" when no wording with a letter stands before it (a bracket alone). Values are pooled by label: the same label
    in two skeletons is one slot."""
    labels: list[str] = []
    end = 0
    matches = list(SLOT.finditer(skeleton))
    for k, m in enumerate(matches):
        before = skeleton[end:m.start()]
        end = m.end()
        if m.group(1) != "text":
            continue
        words = _CLAUSE.split(before.rstrip())[-1].lower().split()[-LABEL_WORDS:]
        following = skeleton[m.end():matches[k + 1].start() if k + 1 < len(matches) else len(skeleton)].lstrip(" ")
        label = " ".join(words)
        if not re.search(r"[^\W\d_]", label) and k and matches[k - 1].end() == m.start():
            label = " ".join(_CLAUSE.split(skeleton[: m.start()])[-1].lower().split()[-LABEL_WORDS:])  # onto a slot
        labels.append(f"{label} _{following[:1]}" if re.search(r"[^\W\d_]", label) else "")
    return labels


def value_item(label: str, value: str) -> str:
    return VALUE_SEPARATOR.join((label, value))


def split_value_item(item: str) -> tuple[str, str]:
    label, value = item.split(VALUE_SEPARATOR)
    return label, value


def propose_values(unit: Unit, openers: Mapping[str, float], lists: FormLists, max_items: int) -> list[str]:
    """At most ``max_items`` distinct (label, value) items of one unit's documents: each labelled ``[text]`` slot's
    filler in the document's own skeleton (of released openers) when it is a short value, shortest first. A function of
    this unit, public lists and released outputs only."""
    found: list[tuple[int, int, str]] = []
    for doc in documents_of(unit):
        skeleton = skeleton_of(doc, openers, lists)
        if fixed_words(skeleton) < MIN_FIXED_WORDS:
            continue  # free text: no form, no slot
        match = skeleton_pattern(skeleton).match(doc.strip()[:MAX_DOCUMENT_CHARS])
        for label, filler in zip(slot_labels(skeleton), match.groups() if match else ()):
            if label and (value := short_value(filler, lists)):
                found.append((len(value.split(" ")), len(found), value_item(label, value)))
    return list(dict.fromkeys(item for _, _, item in sorted(found)))[:max_items]
