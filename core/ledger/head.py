"""The one check of a ledger against an outside record of its head: its witness file (``witness``) and its
high-water mark (``highwater``) each recorded how many rows the ledger had and the hash of its newest row.

A ledger with fewer rows than recorded was emptied, truncated or restored from an older copy; one whose recorded
row is gone or differs was rewritten or replaced. The two records word the findings in their own terms
(:class:`HeadWords`); the rule is this module's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from core.ledger.seal import Head

Record = TypeVar("Record", bound=Head)


@dataclass(frozen=True)
class HeadWords(Generic[Record]):
    """How one kind of outside record words each finding."""

    unrecorded: Callable[[int], str]  # rows: the ledger has rows but nothing records them
    fewer: Callable[[int, Record], str]  # rows, record: fewer rows than recorded
    changed: Callable[[Record, bool], str]  # record, gone: the recorded newest row is gone (True) or differs
    missing: Callable[[Record], str]  # record: the ledger file is missing or empty but the record says it had rows


def head_problems(recorded: Record | None, rows: int, row_hash_at: Callable[[int], str | None],
                  words: HeadWords[Record]) -> list[str]:
    """What a ledger of ``rows`` rows shows against ``recorded`` (empty list: consistent)."""
    if recorded is None:
        return [words.unrecorded(rows)] if rows > 0 else []
    if rows < recorded.rows:
        return [words.fewer(rows, recorded)]
    if recorded.head_seq > 0:
        actual = row_hash_at(recorded.head_seq)
        if actual != recorded.head_hash:
            return [words.changed(recorded, actual is None)]
    return []


def record_problems(read: tuple[Record | None, str], rows: int | None, row_hash_at: Callable[[int], str | None],
                    words: HeadWords[Record]) -> list[str]:
    """What a ledger shows against an outside record as read (the record, or why it cannot be read): ``rows`` is
    the ledger's number of rows, None when its file is missing or empty (empty list: consistent)."""
    recorded, problem = read
    if problem:
        return [problem]
    if rows is None:
        return [words.missing(recorded)] if recorded is not None and recorded.rows > 0 else []
    return head_problems(recorded, rows, row_hash_at, words)
