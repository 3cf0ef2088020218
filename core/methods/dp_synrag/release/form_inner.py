"""Inner wordings (docs/method-reference.md §2.0b, "Inner wording"): a form's words that stand *inside* a clause,
after words of a slot ("We found [text] and [text]").

A unit proposes them with its openers, in the same cap m_o (ranked with the openers' shorter parts, shortest first):
each run of 1 to ``MAX_INNER_WORDS`` common words inside a clause that starts on a function word (a public stop word,
not an article) right after another word, is followed by a word, and lies beyond the reach of the document's own
openers and closers (those already propose it), keyed by the clause's first word: ``"we … and"``. A function of the
unit's text and public lists only.

``skeleton_of`` keeps a released inner wording inside a text slot of a clause that starts with that word and with a
released opener, once per clause, only when its noisy count is at least ``INNER_SHARE`` of that opener's: wording
that nearly every clause opened so holds is the form's, wording that only some of its fillers hold ("faded prints
and blank prints") stays in the slot, so a common word does not split a form's skeleton into variants. Released
counts only: post-processing."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.methods.dp_synrag.release.form_proposals import Token

WordKind = Callable[[int, bool], str]  # a token's slot kind (form_proposals.slot_kind on one document): "" when common

INSIDE_OPENER = re.compile(r"^[ \-]$")  # a separator an opener (or inner wording) may span: one space or a hyphen

MAX_INNER_WORDS = 3

INNER_SHARE = 0.75  # an inner wording is kept when its count is this share of its clause's opener's (noisy counts)

MARK = "\x01"  # before a kept inner wording in a skeleton being built, so no merge of fillers takes it; then removed

_NO_START = frozenset({"a", "an", "the"})  # an article opens a filler ("the driver"), not a form's wording


def inner_item(key: str, wording: str) -> str:
    """The item an inner wording is proposed and released as: its clause's key, an ellipsis, the wording."""
    return f"{key} … {wording}"


def clause_key(tokens: Sequence[Token], i: int, kind: WordKind) -> str:
    """The key of the clause starting at token ``i``: its first word lower-cased; "" when it starts with a number,
    a name or a month (no opener starts there)."""
    if tokens[i].kind != "word" or kind(i, True) in ("name", "month"):
        return ""
    return tokens[i].text.lower()


def _inner_chain(tokens: Sequence[Token], i: int, kind: WordKind, stop: Collection[str]) -> list[tuple[str, int]]:
    """The inner wordings starting at word ``i`` (shortest first, each with the index after it): common words joined
    by a space or hyphen, the first a function word (of ``stop``, no article) after a word, each followed by a word."""
    first = tokens[i].text.lower()
    if tokens[i].kind != "word" or first not in stop or first in _NO_START:
        return []
    if i < 2 or tokens[i - 1].text != " " or tokens[i - 2].kind != "word":
        return []  # it follows a word of the clause (a slot's)
    out: list[tuple[str, int]] = []
    j = i
    while j < len(tokens) and len(out) < MAX_INNER_WORDS:
        if tokens[j].kind != "word" or kind(j, False):
            break
        if j + 2 < len(tokens) and INSIDE_OPENER.match(tokens[j + 1].text) and tokens[j + 2].kind != "sep":
            out.append(("".join(x.text for x in tokens[i : j + 1]), j + 1))  # a word (a slot) follows
            j += 2
        else:
            break
    return out


def propose_inner(tokens: Sequence[Token], kind: WordKind, stop: Collection[str], covered: Collection[int],
                  clause_end: Callable[[str], bool]) -> list[tuple[int, str]]:
    """One document's inner wordings as items, each with its length in words less one; none starting on a word of
    ``covered`` (the document's own openers and closers reach it: it is proposed as one of them)."""
    inner: list[tuple[int, str]] = []
    key, start = "", True
    for i, t in enumerate(tokens):
        if t.kind == "sep":
            if clause_end(t.text):
                key, start = "", True
            continue
        if start:
            key, start = clause_key(tokens, i, kind), False
        elif key and i not in covered:
            inner.extend((n, inner_item(key, text)) for n, (text, _) in enumerate(_inner_chain(tokens, i, kind, stop)))
    return inner


def inner_at(tokens: Sequence[Token], i: int, kind: WordKind, stop: Collection[str], key: str, opener_count: float,
             released: Mapping[str, float], used: set[str]) -> tuple[str, int] | None:
    """The longest released inner wording of clause ``key`` at word ``i`` whose count is at least ``INNER_SHARE`` of
    ``opener_count`` (the released opener the clause starts with) and that this clause has not kept yet."""
    if not key or opener_count <= 0:
        return None
    best = None
    for text, end in _inner_chain(tokens, i, kind, stop):
        item = inner_item(key, text)
        if item not in used and released.get(item, 0.0) >= INNER_SHARE * opener_count:
            best = (text, end)
    return best
