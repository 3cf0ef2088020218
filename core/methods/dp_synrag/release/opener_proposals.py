"""What each unit proposes to the openers' set union (docs/method.md §2.0b): the wordings its clauses open and close
with, at most m_o of them, the ones a form needs first. Read from one unit and public lists only; released only by the
DP set union of ``structure.py``."""

from __future__ import annotations

from functools import partial

from core.corpus import Unit
from core.methods.dp_synrag.release.form_inner import propose_inner
from core.methods.dp_synrag.release.form_proposals import (FormLists, closer_suffixes, documents_of, is_clause_end,
                                                           opener_positions, opener_prefixes, opens_a_slot, slot_kind,
                                                           tokens_of)


def propose_openers(unit: Unit, lists: FormLists, max_items: int) -> list[str]:
    """At most ``max_items`` distinct openers of one unit's own text. First each *whole* wording, in document order:
    the longest opener at each clause start and after each name or number (it ends where a slot or a punctuation
    mark begins: "Medication on discharge", "A skin biopsy confirmed"), and the longest closer before each name,
    number and month ("and went home on"); then, of a clause that is one wording from its start to a slot ("He leaves
    hospital on [drug]"), that wording less its first word ("leaves hospital on": a pronoun, an article or a time word
    is what such a clause varies at); then the shorter prefixes and suffixes and the inner wordings out of their reach
    (``form_inner.py``: "we … and"), shortest first; then the openers after commas and the beginnings of those one-wording
    clauses ("He", "He leaves"). A form's wording is whole where it meets a slot, so it comes first however many clauses
    a document has. Of this unit and public lists only."""
    whole: list[str] = []
    shorter: list[str] = []
    parts: list[tuple[int, str]] = []
    later: list[str] = []
    inner: list[tuple[int, str]] = []
    for doc in documents_of(unit):
        tokens = tokens_of(doc)
        starts, commas = opener_positions(tokens, lists)
        found: list[list[str]] = []
        clause_starts: list[bool] = []  # per opener chain: whether it starts a clause (not after a name or number)
        covered: set[int] = set()  # the words its openers and closers reach
        for p in starts:
            at_start = p == 0 or (tokens[p - 1].kind == "sep" and is_clause_end(tokens[p - 1].text))
            prefixes = opener_prefixes(tokens, p, at_start, lists)
            found.append([text for text, _ in prefixes])
            clause_starts.append(at_start)
            covered.update(range(p, prefixes[-1][1] if prefixes else p))
        for j in range(len(tokens)):
            if tokens[j].kind != "sep" and slot_kind(tokens, j, False, lists) in ("number", "name", "month", "content"):
                found.append(closer_suffixes(tokens, j, lists))
                covered.update(range(j - 2 * len(found[-1]), j))
        kinds = partial(slot_kind, tokens, lists=lists)  # form_inner.py: words inside a clause, after a slot
        inner.extend(propose_inner(tokens, kinds, lists.common, covered, is_clause_end))
        closers = {chain[-1]: chain for chain in found[len(starts):] if len(chain) > 1}
        for k, chain in enumerate(found):  # each chain shortest first: its last is the whole wording
            if chain:
                whole.append(chain[-1])
                if k < len(starts) and clause_starts[k] and chain[-1] in closers:  # one wording, start to slot:
                    shorter.append(closers[chain[-1]][-2])  # it varies at its first word ("He"/"She leaves hospital
                    later.extend(chain[:-1])  # on"): its part less that word first, its beginnings ("He") last
                else:
                    parts.extend(enumerate(chain[:-1]))
        for p in commas:  # after a comma, a wording that opens a slot ("…, confirmed by") ranks with the parts
            for n, (text, _) in enumerate(opener_prefixes(tokens, p, False, lists)):
                (parts.append((n, text)) if opens_a_slot(text, lists) else later.append(text))
    ordered = [text for _, text in sorted(parts + inner, key=lambda item: item[0])]
    return list(dict.fromkeys([*whole, *shorter, *ordered, *later]))[:max_items]
