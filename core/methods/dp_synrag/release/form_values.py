"""What each unit proposes to structure discovery's third release (docs/method.md §2.0b): the short values a released
skeleton's ``[text]`` slots hold in its own documents ("yes", "Ledgerly", "an expired token"), so that a value many
units write, such as a category, is written as it stands. Read from one unit, public lists and released outputs only;
released only by the DP set union of ``structure.py``."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

from core.corpus import Unit
from core.methods.dp_synrag.release.form_proposals import SLOT, FormLists, documents_of, skeleton_of

VALUE_SEPARATOR = "\x1f"  # between a value's skeleton, its slot's index and its words in one released item
MAX_VALUE_WORDS = 3
MAX_VALUE_CHARS = 40
MAX_DOCUMENT_CHARS = 20_000  # longer documents are cut before matching (bounds the expression's backtracking)
_NOT_IN_VALUE = re.compile(r"[\d.;:!?()\[\]\n|•·_\x1f]")
_SLOT_PATTERNS = {"text": r"(.+?)", "name": r".+?", "number": r"\d+(?:[.,]\d+)*", "month": r"[^\W\d_]+"}


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


def value_item(skeleton: str, slot: int, value: str) -> str:
    return VALUE_SEPARATOR.join((skeleton, str(slot), value))


def split_value_item(item: str) -> tuple[str, int, str]:
    skeleton, slot, value = item.split(VALUE_SEPARATOR)
    return skeleton, int(slot), value


def propose_values(unit: Unit, openers: Mapping[str, float], skeletons: Collection[str], lists: FormLists,
                   max_items: int) -> list[str]:
    """At most ``max_items`` distinct (skeleton, slot, value) items of one unit's documents written in a released
    skeleton: each ``[text]`` slot's filler when it is a short value, shortest first. A function of this unit, public
    lists and released outputs only."""
    found: list[tuple[int, int, str]] = []
    for doc in documents_of(unit):
        skeleton = skeleton_of(doc, openers, lists)
        if skeleton not in skeletons:
            continue
        match = skeleton_pattern(skeleton).match(doc.strip()[:MAX_DOCUMENT_CHARS])
        for slot, filler in enumerate(match.groups() if match else ()):
            if value := short_value(filler, lists):
                found.append((len(value.split(" ")), len(found), value_item(skeleton, slot, value)))
    return list(dict.fromkeys(item for _, _, item in sorted(found)))[:max_items]
