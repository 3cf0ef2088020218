"""A label column (docs/method.md §6.3): the check that it is a category, and each unit's one label.

A label column must hold a category with few values (a department, a diagnosis group, a rating). A column
with more than ``MAX_LABELS`` values, or whose values read as free text or ids, is refused before anything
is charged, in plain words and without repeating any value (the values are private).

With a person column a person's documents may carry several labels. Each unit gets exactly one label,
chosen from that unit's own documents only (``unit_label``): its most frequent label, ties broken by label
order (the typed list's order when the custodian typed the labels, otherwise alphabetical). With typed
labels, only labels of the list count; a unit none of whose documents carries one gets no label ("") and is
left out of class-conditional synthesis. So one unit lies in exactly one class (or none), which is what the
parallel composition across classes needs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from core.common.errors import CorpusError
from core.specs.rules import MAX_LABELS

# A value longer than this, or of more words, reads as free text, not as a category.
MAX_LABEL_CHARS = 60
MAX_LABEL_WORDS = 6
# Share of the documents with their own value above which a column reads as an id or free text.
MOSTLY_UNIQUE = 0.5
UNLABELLED = ""  # the label of a unit none of whose labels is in the typed list


def check_label_values(values: Sequence[str], column: str, file_name: str) -> None:
    """Refuse (``CorpusError``) a label column that is not a category with few values.

    ``values``: each loaded document's label (non-empty, stripped). The message gives counts only."""
    distinct = Counter(values)
    long_values = sum(n for value, n in distinct.items()
                      if len(value) > MAX_LABEL_CHARS or len(value.split()) > MAX_LABEL_WORDS or "\n" in value)
    fix = ("Choose a column that holds each document's category (for example a department, a diagnosis group or "
           f"a rating) with at most {MAX_LABELS} different values, or leave the label column empty.")
    if long_values > len(values) / 2:
        raise CorpusError(
            f"The label column '{column}' of {file_name} looks like free text, not a category: {long_values} of its "
            f"{len(values)} values are longer than {MAX_LABEL_CHARS} characters or {MAX_LABEL_WORDS} words.", fix)
    if len(distinct) > MAX_LABELS:
        raise CorpusError(
            f"The label column '{column}' of {file_name} has {len(distinct)} different values; a label column must "
            f"be a category with at most {MAX_LABELS} values. Each label is synthesised on its own, so a label "
            "needs many documents to say anything.", fix)
    if len(distinct) > 2 and len(distinct) > MOSTLY_UNIQUE * len(values):
        raise CorpusError(
            f"The label column '{column}' of {file_name} has {len(distinct)} different values over {len(values)} "
            "documents: most documents have a value of their own, so it reads as an id or free text, not as a "
            "category.", fix)


def label_order(present: Sequence[str], typed: Sequence[str] = ()) -> list[str]:
    """The order labels are ranked in for ties and listed in: the typed list's, else alphabetical."""
    return list(typed) if typed else sorted(set(present))


def unit_label(document_labels: Sequence[str], typed: Sequence[str] = ()) -> str:
    """One unit's label, from its own documents only: its most frequent label (of the typed list, when typed),
    ties broken by label order; ``UNLABELLED`` when none of its labels counts."""
    counted = Counter(label for label in document_labels if not typed or label in typed)
    if not counted:
        return UNLABELLED
    rank = {label: i for i, label in enumerate(label_order(list(counted), typed))}
    return min(counted, key=lambda label: (-counted[label], rank[label]))
