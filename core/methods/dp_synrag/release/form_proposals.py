"""What each unit proposes to structure discovery (docs/method.md §2.0b): its clauses' openers, and each of its
documents as a skeleton of released openers and slots. Read from one unit and public lists only; released only by
the two DP set unions of ``structure.py``.

A skeleton is a document's fixed wording in order with a slot (``[name]``, ``[number]``, ``[month]``,
``[text]``) wherever a name, a number, a month or a content word stands; which wording is fixed is the released
openers (and their closers)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial

from core.corpus import Unit
from core.corpus.units import UNIT_SEPARATOR  # how a person's documents are joined into one unit
from core.methods.dp_synrag.vocab.vocabulary import load_person_names, read_word_list
from core.common.paths import resources_dir
from core.methods.dp_synrag.release.form_words import ABBREVIATIONS, MONTHS, NUMBER_WORDS, TIME_UNITS
from core.methods.dp_synrag.release.form_inner import INSIDE_OPENER, MARK, clause_key, inner_at, inner_item

MAX_OPENER_WORDS = 6

SLOT_KINDS = ("name", "number", "month", "text")

SLOT = re.compile(r"\[(name|number|month|text)\]")

MIN_FIXED_WORDS = 3  # a skeleton with fewer fixed words says nothing of a form ("[text]. [text].")

_PIECE = re.compile(r"(?P<number>\d+(?:[.,]\d+)*)|(?P<word>[^\W\d_]+(?:['’][^\W\d_]+)*)|(?P<sep>[\W_]+)")

_CLAUSE_END = re.compile(r"[.;:!?()\[\]\n|•·]")

MAX_CLOSER_WORDS = 4

@dataclass(frozen=True)
class Token:
    kind: str  # "word", "number" or "sep"
    text: str


@dataclass(frozen=True)
class FormLists:
    """The public lists a proposal reads besides its own unit: English words and people's names."""

    english: frozenset[str]
    names: frozenset[str]
    common: frozenset[str] = frozenset()  # stop words: a capitalised one at a clause's start is no name ("Will")

    @classmethod
    def shipped(cls) -> FormLists:
        return _shipped_lists()


@lru_cache(maxsize=1)
def _shipped_lists() -> FormLists:
    folder = resources_dir() / "vocab"
    stop = frozenset(read_word_list(folder / "stopwords.txt"))
    english = frozenset(read_word_list(folder / "english.txt")) | stop | ABBREVIATIONS
    return FormLists(english, load_person_names(), stop)


def tokens_of(text: str) -> list[Token]:
    out = []
    for m in _PIECE.finditer(text):
        kind = m.lastgroup or "sep"
        out.append(Token(kind, m.group()))
    return out


def documents_of(unit: Unit) -> list[str]:
    """The unit's documents (a person's are joined by a blank line; one document is taken whole)."""
    if unit.n_documents <= 1:
        return [unit.text]
    return [d for d in unit.text.split(UNIT_SEPARATOR) if d.strip()]


def slot_kind(tokens: Sequence[Token], i: int, clause_start: bool, lists: FormLists) -> str:
    """"number", "month", "name", "content" (no English word) or "" (a common word that may be fixed)."""
    t = tokens[i]
    low = t.text.lower()
    if t.kind == "number" or (low in NUMBER_WORDS and i + 2 < len(tokens) and tokens[i + 1].text == " " and
                              tokens[i + 2].text.lower() in TIME_UNITS):
        return "number"  # "2 weeks" and "two weeks" alike
    if low in MONTHS and (t.text[:1].isupper() or len(low) > 4):
        return "month"
    if t.text[:1].isupper() and low in lists.names and (not clause_start or low not in lists.common):
        return "name"  # a capitalised given name or surname, anywhere ("Austin Weaver" at a clause's start too)
    if t.text[:1].isupper() and not clause_start and i >= 2 and tokens[i - 1].text == " " and \
            slot_kind(tokens, i - 2, False, lists) == "name":
        return "name"  # "Austin Weaver": a capitalised word after a name
    if low not in lists.common and _before_a_surname(tokens, i, lists):
        return "name"  # "Nils Dunn", "Dmitri Ekberg": a capitalised word before a name, or two unknown ones
    if low.replace("’", "'") not in lists.english and not _label_letters(tokens, i):
        return "content"
    return ""


def _capitalised(t: Token) -> bool:
    return t.kind == "word" and t.text[:1].isupper() and not (len(t.text) > 1 and t.text.isupper())


def _before_a_surname(tokens: Sequence[Token], i: int, lists: FormLists) -> bool:
    """A capitalised word (no label's capitals) with, after one space, a surname: a capitalised name from the public
    list, or a word no English list holds ("Nils Dunn", "Umar Horvat", "Dmitri Ekberg"). A name
    is a given name and a surname: before one already whole the word is a title ("Patient Austin Weaver")."""
    return _name_pair(tokens, i, lists) and not _name_pair(tokens, i + 2, lists)


def _name_pair(tokens: Sequence[Token], i: int, lists: FormLists) -> bool:
    if i + 2 >= len(tokens) or tokens[i + 1].text != " " or not (_capitalised(tokens[i]) and _capitalised(tokens[i + 2])):
        return False
    second = tokens[i + 2].text.lower()
    return second in lists.names or second not in lists.english


def _label_letters(tokens: Sequence[Token], i: int) -> bool:
    """Capitals that are a form's label, not a word: "CC", "HR", "BP", or one capital before a colon ("S:", "O:") or
    a reading ("T 37.6")."""
    text = tokens[i].text
    if not text.isupper():
        return False
    after = tokens[i + 1].text if i + 1 < len(tokens) else ""
    reading = after == " " and i + 2 < len(tokens) and tokens[i + 2].kind == "number"  # "T 37.6"
    unit = i >= 2 and tokens[i - 1].text == " " and tokens[i - 2].kind == "number"  # "37.6 C"
    return 2 <= len(text) <= 5 or after.startswith(":") or reading or unit


def is_clause_end(sep: str) -> bool:
    return bool(_CLAUSE_END.search(sep))


def opener_prefixes(tokens: Sequence[Token], start: int, clause_start: bool, lists: FormLists) -> list[tuple[str, int]]:
    """Each prefix of 1..MAX_OPENER_WORDS common words from ``start`` (a word) and the index after it."""
    out: list[tuple[str, int]] = []
    i, words = start, 0
    while i < len(tokens) and words < MAX_OPENER_WORDS:
        t = tokens[i]
        kind = "" if t.kind != "word" else slot_kind(tokens, i, clause_start and i == start, lists)
        line_start = start == 0 or (tokens[start - 1].kind == "sep" and "\n" in tokens[start - 1].text)
        heading = kind == "content" and line_start and i == start and t.text[:1].isupper()  # "Triage 17:25"
        if t.kind != "word" or (kind and not heading):
            break
        words += 1
        before_number = i + 2 < len(tokens) and tokens[i + 2].kind == "number"  # "a 70-year-old" is the form's
        if t.text.lower() not in ARTICLES or before_number:  # "a"/"an" before a word agrees with it: the slot's
            out.append(("".join(x.text for x in tokens[start : i + 1]), i + 1))
        if i + 1 < len(tokens) and tokens[i + 1].kind == "sep" and INSIDE_OPENER.match(tokens[i + 1].text):
            i += 2
        else:
            break
    return out


def opener_positions(tokens: Sequence[Token], lists: FormLists) -> tuple[list[int], list[int]]:
    """Where an opener may start: (after a document's start, a clause end, or a name or number; after a comma)."""
    first: list[int] = []
    commas: list[int] = []
    previous = "start"
    for i, t in enumerate(tokens):
        if t.kind == "sep":
            if is_clause_end(t.text):
                previous = "start"
            elif "," in t.text and previous not in ("start", "hard"):
                previous = "comma"  # a comma after a name or number keeps the place a form's wording starts
            elif previous not in ("start", "hard"):
                previous = "word"
            continue
        if t.kind == "word" and previous in ("start", "hard", "comma"):
            (commas if previous == "comma" else first).append(i)
        kind = slot_kind(tokens, i, previous == "start", lists)
        previous = "hard" if kind in ("number", "name", "month") else "word"
    return first, commas


def closer_suffixes(tokens: Sequence[Token], hard: int, lists: FormLists) -> list[str]:
    """The 1..``MAX_CLOSER_WORDS`` common words just before the name, number or month at ``hard`` (one space between),
    shortest first: a form's wording that follows a text slot ("… and discharged on [month]")."""
    article = tokens[hard - 2].text.lower() in ARTICLES and tokens[hard].kind != "number"  # "a 70-year-old" stays
    if hard < 2 or tokens[hard - 1].text != " " or article:  # "a"/"an" before a word agrees with it: the slot's
        return []
    out: list[str] = []
    i = hard - 2
    while i >= 0 and len(out) < MAX_CLOSER_WORDS:
        if tokens[i].kind != "word" or slot_kind(tokens, i, i == 0, lists):
            break
        out.append("".join(x.text for x in tokens[i : hard - 1]))
        if i >= 2 and INSIDE_OPENER.match(tokens[i - 1].text):
            i -= 2
        else:
            break
    return out


def skeleton_of(document: str, openers: Mapping[str, float], lists: FormLists) -> str:
    """The document's skeleton: released openers kept at clause starts, names, numbers and months as typed slots,
    every other run of words one ``[text]`` slot (it spans commas, not a clause's end). Reads only this document,
    public lists and the released openers."""
    tokens = tokens_of(document.strip())
    pieces: list[str] = []
    in_text = False
    lookup, clause_start, after_opener = True, True, False
    i = text_start = 0
    key, opened, used = "", 0.0, set[str]()  # the clause's key, its opener's count, the inner wordings it kept
    kinds = partial(slot_kind, tokens, lists=lists)
    while i < len(tokens):
        t = tokens[i]
        if t.kind == "sep":
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            ends = is_clause_end(t.text)
            hard_next = nxt is not None and slot_kind(tokens, i + 1, False, lists) in ("number", "name", "month")
            joins = in_text and "," in t.text and nxt is not None and _joining_opener(tokens, i + 1, openers, lists)
            if in_text and not ends and not hard_next and not joins:
                i += 1  # a text slot spans commas and spaces
                continue
            if in_text and hard_next:  # the slot's last words may be a released closer: "[text] and discharged on"
                pieces[-1] = _with_closer(tokens, text_start, i + 1, openers, lists)
            in_text = False
            pieces.append(_clean_sep(t.text))
            lookup = ends or joins or lookup or (after_opener and bool(re.search(r"[^\s]", t.text)))
            clause_start = ends
            i += 1
            continue
        if clause_start:
            key, opened, used = clause_key(tokens, i, kinds), 0.0, set[str]()
        if lookup and t.kind == "word":
            found = _until_fan_out([(text, end) for text, end in opener_prefixes(tokens, i, clause_start, lists)],
                                   openers, lists, _parent)
            if found and not _labelled_value(tokens, i, found[1]):
                text, end = found
                opened = openers[text] if clause_start else opened
                pieces.append(text)
                i, lookup, clause_start, after_opener, in_text = end, False, False, True, False
                continue
        kind = slot_kind(tokens, i, clause_start, lists)
        lookup, clause_start, after_opener = False, False, False
        if kind in ("number", "month", "name"):
            if not (kind == "name" and pieces and pieces[-1] == "[name]"):  # one [name] for a whole name
                pieces.append(f"[{kind}]")
            lookup = True
        elif not in_text:
            pieces.append("[text]")
            in_text, text_start = True, i
        elif not kind and i > text_start and (inner := inner_at(tokens, i, kinds, lists.common, key, opened, openers, used)):
            used.add(inner_item(key, inner[0]))  # "We found [text] and [text]": a released inner wording (form_inner.py)
            pieces.extend([" ", MARK + inner[0]])
            i, in_text = inner[1], False
            continue
        elif (kind == "content" and i > text_start and tokens[i - 1].text == " "
              and (closed := _with_closer(tokens, text_start, i, openers, lists)) != "[text]"):
            pieces[-1:] = [closed, " ", "[text]"]  # "A [text] confirmed [text]"
            text_start = i
        i += 1
    return _merge_fillers(_merge_names("".join(pieces)), lists).replace(MARK, "").strip()

def _labelled_value(tokens: Sequence[Token], start: int, end: int) -> bool:
    """One word that is a whole clause after a label's colon ("satisfied: yes.", "Sex: female"): the label's value,
    a slot's filler however often it is written."""
    after_colon = start > 0 and ":" in tokens[start - 1].text
    whole_clause = end >= len(tokens) or is_clause_end(tokens[end].text)
    return after_colon and whole_clause and end == start + 1


ARTICLES, LIST_WORDS = frozenset({"a", "an"}), frozenset({"and", "or", "but", "nor"})


def _joining_opener(tokens: Sequence[Token], start: int, released: Mapping[str, float], lists: FormLists) -> bool:
    """Whether a text slot ends at the comma before ``start``: a released opener of two or more words begins there
    and ends on a word that opens a slot ("…, confirmed by [text]", "…, present for [text]"), not on a list's
    conjunction ("…, skin rash and …" goes on as the slot's list)."""
    if tokens[start].kind != "word":
        return False
    found = _until_fan_out(opener_prefixes(tokens, start, False, lists), released, lists, _parent)
    if found is None:
        return False
    return opens_a_slot(found[0], lists)


def opens_a_slot(wording: str, lists: FormLists) -> bool:
    """Two or more words ending on a function word other than a list's conjunction ("confirmed by", "present for")."""
    words = wording.lower().split()
    return len(words) >= 2 and words[-1] in lists.common and words[-1] not in LIST_WORDS


def _with_closer(tokens: Sequence[Token], start: int, hard: int, released: Mapping[str, float], lists: FormLists) -> str:
    """A text slot from ``start`` ending before the hard token at ``hard``: "[text]", or its longest released closer
    written out ("[text] and discharged on", or the closer alone when it is the whole slot)."""
    head = "".join(x.text for x in tokens[start : hard - 1])
    inside = [(c, 0) for c in closer_suffixes(tokens, hard, lists) if len(c) <= len(head)]  # none reaches before the slot
    found = _until_fan_out(inside, released, lists, _child_of_closer)
    if not found:
        return "[text]"
    closer = found[0]
    if head == closer:
        return closer
    return "[text]" + head[len(head) - len(closer) - 1] + closer if head.endswith(closer) else "[text]"

FAN_OUT = 3  # released wordings one word longer, at least, for a branching into fillers

EXCLUSIVE = 1.3  # ... whose counts add up to at most this much of the shorter wording's count

_LAST_WORD = re.compile(r"[ \-]?[^\W\d_]+(?:['’][^\W\d_]+)*$")

_FIRST_WORD = re.compile(r"^[^\W\d_]+(?:['’][^\W\d_]+)*[ \-]?")


def _parent(opener: str) -> str:
    return _LAST_WORD.sub("", opener)


def _child_of_closer(closer: str) -> str:
    return _FIRST_WORD.sub("", closer)


def _until_fan_out(chain: list[tuple[str, int]], released: Mapping[str, float], lists: FormLists,
                   shorter: Callable[[str], str]) -> tuple[str, int] | None:
    """The longest released wording of ``chain`` (shortest first) reached without passing a branching into fillers:
    a released wording from which ``FAN_OUT`` or more released wordings one word longer go on, each unit taking one
    of them (their noisy counts add up to about its own: "mg" → "mg once", "mg twice", "mg every"), so the filler
    stays in the slot. Wordings that co-occur ("on" → "admitted on", "home on" in every note of a form) add up to
    more and are followed. An opener ending in a stop word ("The") is always followed. Released counts only."""
    best = None
    children = _children(released, shorter)
    for text, end in chain:
        if text not in released:
            continue
        if best is not None:
            edge = best[0].lower().split()[-1] if shorter is _parent else ""
            kids = children.get(best[0], ())
            if edge not in lists.common and len(kids) >= FAN_OUT and \
                    sum(released[k] for k in kids) <= EXCLUSIVE * released[best[0]]:
                break
        best = (text, end)
    return best


def _children(released: Mapping[str, float], shorter: Callable[[str], str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for w in released:
        if shorter(w) != w:
            out.setdefault(shorter(w), []).append(w)
    return out


def _clean_sep(sep: str) -> str:
    """A separator as the skeleton writes it: brackets become parentheses, runs of spaces one space."""
    sep = sep.replace("[", "(").replace("]", ")")
    return re.sub(r"[ \t]+", " ", sep)


def _merge_names(skeleton: str) -> str:
    return re.sub(r"\[name\](?: \[name\])+", "[name]", skeleton)


_NUMBER_IN_TEXT = re.compile(r"\[text\] \[number\](?: \[text\]|(?=[.;\n]|$))")  # "[text] [number]." "[text] [number] [text]"

_WORD_IN_TEXT = re.compile(r"\[text\] ([^\W\d_]+) \[text\]")


def _merge_fillers(skeleton: str, lists: FormLists) -> str:
    """A filler's own number or stop word is no form's wording: "[text] [number]" at a clause's end ("version 4."),
    "[text] [number] [text]" ("a 2 GB file") and "[text] the [text]" become one ``[text]``."""
    skeleton = _NUMBER_IN_TEXT.sub("[text]", skeleton)
    return _WORD_IN_TEXT.sub(lambda m: "[text]" if m.group(1).lower() in lists.common else m.group(0), skeleton)


def skeleton_words(skeleton: str) -> list[str]:
    """The words a skeleton writes around its slots, in order."""
    return re.findall(r"[^\W\d_]+", SLOT.sub(" ", skeleton))


def fixed_words(skeleton: str) -> int:
    return len(skeleton_words(skeleton))


def propose_skeletons(unit: Unit, openers: Mapping[str, float], lists: FormLists, max_items: int) -> list[str]:
    """At most ``max_items`` distinct skeletons of one unit's documents, in order; only those with a form's words
    (at least ``MIN_FIXED_WORDS`` fixed words)."""
    found = [skeleton_of(doc, openers, lists) for doc in documents_of(unit)]
    return list(dict.fromkeys(s for s in found if fixed_words(s) >= MIN_FIXED_WORDS))[:max_items]

