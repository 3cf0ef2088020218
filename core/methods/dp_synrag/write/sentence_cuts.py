"""Sentences a reader would cut from a written document (post-processing of public text).

Two kinds go. The sentences of the document's public lead (the form's opening) stay, cut back to the lead.

**Misspelt copies of a released word.** A released word the writer may not write bare outside its slot
(``slots.py``: "Plan: shesoltinib"), or one it has no good tokens for, comes back misspelt elsewhere: "after
taking sisotinilib for ten years", "due to brufnoma in his left leg". On a 200-note file the demo generator
never wrote (seed 11, ε = 10, the minimal spec) 31 of 136 documents held one (round 4, session 15). Such a word
is neither the released word nor any word: a reader takes it for a second drug or condition. So a sentence that
holds one goes; a sentence of the public lead is cut at the clause that brings the variant in (writing the released word there
instead put drugs and conditions among the complaints: 22 of 31 misplaced words, role accuracy 0.94, in a demo
clinic evaluation at d54e6a4).
:func:`guarantee_words` then restores a released word lost with a sentence.

A *variant* of a released word w is a word of at least ``MIN_LETTERS`` letters that is not w, is no English
word (public wordfreq frequency below ``ENGLISH_ZIPF``: wordfreq does not know it), and is at least
``SIMILARITY`` alike to w (difflib's ratio).

**Talk about a text.** A small writer that has written the form goes on about it: "The above are the
examples.", "The above two documents are related to a clinical trial …", "This content was used to support
the previous response." (6 of the 136 documents above, by this rule). A sentence goes when the junk rule's
meta-text pattern finds something in it (``core.common.junk.talks_about_a_text``) or it opens with "The above" or
"This content / response / example".

:func:`respell_variants` writes a variant as its released word instead, for the form writer, whose variant stands
in the slot of its role.

It reads the document, the topic's released words and public frequencies only.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import Sequence

from core.common.junk import talks_about_a_text
from core.methods.dp_synrag.vocab.vocabulary import english_zipf

MIN_LETTERS = 6
ENGLISH_ZIPF = 1.0  # wordfreq's Zipf scale: a word it knows at all ("ulcerous" 1.1, "palmar" 2.2) is English; "sisotinilib" is 0
SIMILARITY = 0.75
_WORD = re.compile(r"[^\W\d_]+")
_CLAUSE = re.compile(r"[,;(]|\s(?:after|with|due to|following|because|since|from|while|when|during|caused by)\s",
                     re.IGNORECASE)  # where a clause or an aside begins
_ABOUT_TEXT = re.compile(r"\s*(?:the|these)\s+above\b|\s*this\s+(?:content|response|is\s+an?\s+(?:\w+\s+)?example)\b",
                         re.IGNORECASE)


def variant_of(token: str, released: Sequence[str]) -> str | None:
    """The released word ``token`` misspells, or None."""
    word = token.lower()
    singles = {w for phrase in released for w in phrase.lower().split()}
    if len(word) < MIN_LETTERS or word in singles or english_zipf(word) >= ENGLISH_ZIPF:
        return None
    best = max(singles, key=lambda w: SequenceMatcher(None, word, w).ratio(), default=None)
    if best is None or len(best) < MIN_LETTERS or SequenceMatcher(None, word, best).ratio() < SIMILARITY:
        return None
    return best


def respell_variants(text: str, released: Sequence[str]) -> str:
    """``text`` with each variant of a released word written as that word (the form writer's documents: there a
    variant stands in a form's slot of its role, so the released word belongs where it stands)."""
    return _WORD.sub(lambda m: _cased(variant_of(m.group(0), released), m.group(0)), text)


def _cased(word: str | None, like: str) -> str:
    """``word`` with ``like``'s capital first letter (``like`` itself when ``word`` is None)."""
    if word is None:
        return like
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def about_a_text(sentence: str) -> bool:
    """The sentence talks about a text instead of being part of one."""
    return bool(_ABOUT_TEXT.match(sentence)) or talks_about_a_text(sentence)


def cut_sentences(sentences: Sequence[str], released: Sequence[str], lead: Sequence[str] = (),
                  lead_ends_bare: bool = False) -> list[str]:
    """The sentences without those that hold a variant of a released word or talk about a text. The first
    ``len(lead)`` sentences begin with the public ``lead``'s sentences and stay; one that holds a variant is cut
    at the last clause break before it (:func:`_cut_before`), so the variant goes with the writer's clause. When
    the lead ends on a bare slot label (``lead_ends_bare``: "… reports", no released word after it) and nothing
    of the writer's is left in its sentence, that sentence goes."""
    out = []
    for i, sentence in enumerate(sentences):
        at = _first_variant(sentence, released)
        if i < len(lead):
            if at < 0:
                out.append(sentence)
                continue
            cut = _cut_before(sentence, len(lead[i].rstrip()), at)
            if cut is not None:
                out.append(cut)
            elif not (lead_ends_bare and i == len(lead) - 1):
                out.append(_ended(lead[i]))
        elif at < 0 and not about_a_text(sentence):
            out.append(sentence)
    return out


def _first_variant(sentence: str, released: Sequence[str]) -> int:
    """Where the sentence's first variant of a released word starts (-1: none)."""
    return next((m.start() for m in _WORD.finditer(sentence) if variant_of(m.group(0), released) is not None), -1)


def _cut_before(sentence: str, start: int, at: int) -> str | None:
    """``sentence`` up to the last clause break (``_CLAUSE``) between ``start`` (the end of the lead's part) and
    ``at`` (the variant), ended with a full stop; None when no break leaves a word of the writer's."""
    breaks = [m.start() for m in _CLAUSE.finditer(sentence, start, at)]
    for cut in reversed(breaks):
        head = sentence[:cut].rstrip(" ,;")
        if len(head) > start and _WORD.search(head[start:]):
            return _ended(head)
    return None


def _ended(sentence: str) -> str:
    sentence = sentence.rstrip()
    return sentence if sentence.endswith((".", "!", "?", ":")) else sentence + "."


def tidy(text: str) -> str:
    """Spaces the joins left: doubled spaces, a space before a punctuation mark, an empty pair of commas."""
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r"(?<=\w) ([,.])(?=\s|$)", r"\1", text)  # "sweating ." left at a join; a form's own spacing stays
    text = re.sub(r",\s*([.;:])", r"\1", text)
    text = re.sub(r"\b(for|to|on|in|of|at|and|the|a|an|with|by|mg) \1\b", r"\1", text)  # "mg for for 5 weeks": doubled at a join
    return text.strip()
