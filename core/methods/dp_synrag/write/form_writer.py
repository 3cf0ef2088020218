"""Writing in the corpus's own released forms (SPEC §7, docs/method.md §2.6b): post-processing, no cost.

Each document is given one released skeleton, drawn in proportion to the skeletons' noisy counts, and its topic's
released words. The public writer then writes the skeleton left to right, many documents at once in one batch of
the model's logits session:

* fixed wording is written verbatim (its tokens are forced);
* ``[text]`` is the writer's own words, pulled toward the topic's released words not yet written, with no digit,
  bracket or line break, ended where it writes a clause's end (the skeleton's own punctuation follows) or after
  ``TEXT_TOKENS``;
* a document whose ``[text]`` slots state a fact no released word holds (a condition, drug, symptom, institution
  or date: ``content_terms``) is dropped, as is one whose condition slot no released word of its topic fills (in a
  run with a word typed as a condition: the writer's own diagnosis, "Dx: Banana", is fiction);
* ``[number]`` is one to three digits of the writer's choosing; ``[name]`` an invented pair of initials ("K. S.");
  a date's ``[month]`` and day its document's next date: the first at random, each later one 1 to 28 days after the
  one before; a document's years are one year, drawn at its first date ("Admitted … Discharged …" keep their order).

The prompt holds only the public task, the topic's released words and the released skeleton. Nothing here reads a
private document.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from core.methods.dp_synrag.release.structure import ReleasedForms
from core.methods.dp_synrag.release.form_proposals import SLOT
from core.methods.dp_synrag.write.content_terms import holds_date, invented_terms, states_date
from core.methods.dp_synrag.write.roles import CONDITION
from core.methods.dp_synrag.write.sentence_cuts import respell_variants, tidy
from core.models import threads
from core.models.base import LanguageModel
from core.methods.dp_synrag.write.token_table import token_table
from core.methods.dp_synrag.write.slot_fillers import (DAYS, HOURS, MINUTES, MONTH_NUMBERS, YEARS, _DOSE_AFTER,
                                                     complaint_filler, number_choices, role_filler, slot_role,
                                                     some_symptoms, subject_slot, symptom_slot, SUBJECTS)

TEXT_TOKENS = 16  # the longest [text] slot the writer fills with its own words
SHORT_TEXT_TOKENS = 6  # ... before a number ("mg [text] [number] weeks": a dose's frequency)
NUMBER_DIGITS = 2  # the writer's own number (no rule knows its kind): one or two digits
PULL = 2.5  # logit bonus for the first token of a released word not yet written
CLOSE_AFTER = 6  # tokens into a [text] slot after which a clause end is favoured more and more
TEMPERATURE = 0.8
TOP_P = 0.95
TOP_K = 64
BATCH = 32
MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
               "November", "December")
_INITIALS = "ABCDEFGHIJKLMNOPRSTW"
_MARKS = set(")]|/-")  # a mark that opens the form's next words ends the slot the writer is filling
CLOSED_LIST_SHARE = 0.5  # a slot's released values stand for this share of its form's count: drawn when untyped
PROMPT = ("Write one document of a collection used for this purpose: {task}\n"
          "It is about {topic}.{related}\n"
          "Write it in exactly this form, filling each part in square brackets with your own words:\n{skeleton}")


@dataclass(frozen=True)
class Piece:
    kind: str  # "fixed" or a slot kind (structure.SLOT_KINDS)
    text: str = ""


def pieces_of(skeleton: str) -> list[Piece]:
    out: list[Piece] = []
    end = 0
    for m in SLOT.finditer(skeleton):
        if m.start() > end:
            out.append(Piece("fixed", skeleton[end : m.start()]))
        out.append(Piece(m.group(1)))
        end = m.end()
    if end < len(skeleton):
        out.append(Piece("fixed", skeleton[end:]))
    return out


def assign_forms(forms: ReleasedForms, documents: int, rng: np.random.Generator) -> list[str]:
    """Each document's skeleton, drawn in proportion to the released noisy counts (post-processing)."""
    weights = np.asarray(forms.counts, dtype=np.float64)
    chosen = rng.choice(len(forms.skeletons), size=documents, p=weights / weights.sum())
    return [forms.skeletons[int(j)] for j in chosen]


@dataclass
class _Row:
    """One document being written: its pieces, where it stands and what it has written."""

    index: int
    pieces: list[Piece]
    words: tuple[str, ...]  # the topic's released words: its word first
    pending: list[int] = field(default_factory=list)  # forced tokens still to write
    at: int = -1  # the piece being written
    slot_tokens: int = 0
    slot_text: str = ""
    written: list[int] = field(default_factory=list)
    text: str = ""  # what it has written, lower case (the pull reads it)
    done: bool = False
    space_first: bool = False  # the slot's first token carries the space its fixed wording left off
    forced: bool = False  # the piece being written is forced whole (fixed wording, initials, a month, typed words)
    year: int = 0  # the document's year, drawn at its first date (0: none yet): its dates share it
    dates: list[tuple[int, int]] = field(default_factory=list)  # its dates (month index, day), in order, as drawn
    months: int = 0  # how many of its months it has written (the next month is its dates[months]'s)
    days: int = 0  # ... and days
    used: set[str] = field(default_factory=set)  # typed words written in a slot already
    enumerated: int = 0  # the last number of an enumerated line written
    values: Mapping[int, Sequence[tuple[str, float]]] = field(default_factory=dict)  # released values per text slot
    form_count: float = 0.0  # its skeleton's released noisy count
    own: list[str] = field(default_factory=list)  # the [text] slots the model filled with its own words
    symptom_at: int = -1  # the text slot that holds the topic's symptoms in a form with none (slot_fillers.symptom_slot)
    unnamed: bool = False  # a condition slot no released word of its topic fills: the document is dropped
    subject: bool = False  # the slot being written is a sentence's subject (slot_fillers.subject_slot): one word


class FormWriter:
    """Writes documents in released skeletons with one model (see the module's docstring)."""

    def __init__(self, llm: LanguageModel, generator: torch.Generator, rng: random.Random,
                 roles: Mapping[str, str | None] | None = None) -> None:
        self.llm = llm
        self.tokenizer = llm.chat.tokenizer
        self.table = token_table(self.tokenizer, llm.vocab_size)
        self.generator = generator
        self.rng = rng
        self._first_tokens: dict[str, list[int]] = {}
        self._whole: dict[str, int | None] = {}  # a word's one token with its space, None when it takes several
        self._subject_masks: dict[bool, torch.Tensor] = {}  # SUBJECTS' tokens, with and without a space before
        self.roles = dict(roles or {})  # each released word's public role (roles.py), None: untyped
        self.known: frozenset[str] = frozenset()  # the run's released phrases ("brittle nails"): content terms too

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def _word_starts(self, word: str) -> list[int]:
        if word not in self._first_tokens:
            ids = {self.encode(" " + word)[:1][0], self.encode(word)[:1][0]} if word else set()
            self._first_tokens[word] = sorted(ids)
        return self._first_tokens[word]

    def write(self, task: str, skeletons: Sequence[str], topics: Sequence[tuple[str, Sequence[str]]],
              on_done: Callable[[int, str], None] | None = None, batch: int = BATCH,
              forms: ReleasedForms | None = None) -> list[str]:
        """Each document's text; ``on_done(index, text)`` as soon as each is finished (progress per document)."""
        out = [""] * len(skeletons)
        self.known = frozenset(w for topic, related in topics for w in (topic, *related) if " " in w)

        def finished(row: _Row) -> None:  # a document stating an unreleased fact is dropped (""): in its own words,
            released = (*row.words, *(p.text for p in row.pieces if p.kind == "fixed"))  # or a date its form lacks
            text = respell_variants(tidy(self.llm.decode(row.written)), row.words)
            dated = states_date(text) and not holds_date(skeletons[row.index])  # "March" written, then "500 mg"
            out[row.index] = "" if dated or row.unnamed or invented_terms(row.own, released, self.known) else text
            if on_done is not None:
                on_done(row.index, out[row.index])

        values = {s: forms.slot_values(s) for s in set(skeletons)} if forms else {}  # once per skeleton, not per row
        counts = {s: forms.count(s) for s in set(skeletons)} if forms else {}
        symptoms = {s: symptom_slot([(p.kind, p.text) for p in pieces_of(s)], {j for j, v in values.get(s, {}).items()
                    if sum(c for _, c in v) >= CLOSED_LIST_SHARE * counts.get(s, 0.0)}) for s in set(skeletons)}
        for start in range(0, len(skeletons), batch):
            threads.match_free_cores()  # each batch on the cores free now (a neighbour may have come or gone)
            rows = [_Row(i, pieces_of(skeletons[i]), (topics[i][0], *topics[i][1]),
                         values=values.get(skeletons[i], {}), form_count=counts.get(skeletons[i], 0.0),
                         symptom_at=symptoms[skeletons[i]])
                    for i in range(start, min(start + batch, len(skeletons)))]
            messages = [prompt(task, topics[r.index][0], topics[r.index][1], skeletons[r.index]) for r in rows]
            self._write_batch(rows, messages, finished)
        return out

    def _write_batch(self, rows: list[_Row], messages: list[str], finished: Callable[[_Row], None]) -> None:
        session = self.llm.start_logits(self.llm.chat_prompt_ids(messages))
        for row in rows:
            self._next_piece(row)
            if row.done:
                finished(row)
        live = [r for r in rows if not r.done]
        while live:
            logits = session.logits().float().cpu()
            tokens = [self._choose(row, logits[j]) for j, row in enumerate(live)]
            keep = [j for j, row in enumerate(live) if tokens[j] is not None]
            for j, row in enumerate(live):
                if tokens[j] is None:
                    finished(row)
            if len(keep) < len(live):
                session.keep(torch.tensor(keep, dtype=torch.long))
                live = [live[j] for j in keep]
                tokens = [tokens[j] for j in keep]
            if not live:
                break
            session.append(torch.tensor(tokens, dtype=torch.long))

    def _next_piece(self, row: _Row) -> None:
        """Move ``row`` to its next piece, queueing what is forced (fixed wording, initials, a month)."""
        while True:
            row.at += 1
            row.slot_tokens, row.slot_text = 0, ""
            if row.at >= len(row.pieces):
                row.done = True
                return
            piece = row.pieces[row.at]
            space = " " if row.space_first else ""
            row.space_first, row.forced = False, True
            if piece.kind == "text" and (filler := self._slot_filler(row)):
                row.pending.extend(self.encode(space + filler))
            elif piece.kind == "fixed":
                text = piece.text
                after = row.pieces[row.at + 1].kind if row.at + 1 < len(row.pieces) else ""
                if after in ("text", "name", "month") and text.endswith(" "):  # a space belongs to the word after it
                    text, row.space_first = text.rstrip(" "), True
                row.pending.extend(self.encode(text))
            elif piece.kind == "name":
                a, b = self.rng.choice(_INITIALS), self.rng.choice(_INITIALS)
                row.pending.extend(self.encode(f"{space}{a}. {b}."))
            elif piece.kind == "month":
                row.months += 1
                row.pending.extend(self.encode(space + MONTH_NAMES[self._date(row, row.months - 1)[0]]))
            elif piece.kind == "number" and (choices := self._number_choices(row)):
                row.pending.extend(self.encode(space + str(self._draw(row, choices))))
            else:
                row.space_first, row.forced = bool(space), False
                row.subject = piece.kind == "text" and subject_slot([(p.kind, p.text) for p in row.pieces], row.at)
                return  # a slot the writer fills: "text" or "number"
            if row.pending:
                return

    def _choose(self, row: _Row, logits: torch.Tensor) -> int | None:
        """The token ``row`` appends now, or None when it is finished."""
        while not row.done:
            if row.pending:
                forced = row.pending.pop(0)
                self._append(row, forced)
                if not row.pending and row.forced:
                    self._next_piece(row)
                return forced
            kind = row.pieces[row.at].kind if row.at < len(row.pieces) else ""
            token = self._sample_slot(row, kind, logits)
            if token is None:  # the slot is finished: the next piece writes now
                row.own.append(row.slot_text)
                self._next_piece(row)
                continue
            self._append(row, token)
            row.slot_tokens += 1
            row.slot_text += self.table.texts[token]
            return token
        return None

    def _number_choices(self, row: _Row) -> Sequence[int | str]:
        before = row.pieces[row.at - 1].text if row.at and row.pieces[row.at - 1].kind == "fixed" else ""
        after = row.pieces[row.at + 1].text if row.at + 1 < len(row.pieces) and row.pieces[row.at + 1].kind == "fixed" else ""
        kind = lambda k: row.pieces[k].kind if 0 <= k < len(row.pieces) else ""  # noqa: E731
        if before == "/" and kind(row.at - 2) == "number" and re.search(r"\b(bp|blood pressure)\W*$",
                                                                         row.pieces[row.at - 3].text, re.I):
            return tuple(range(60, 101))  # "BP 138/[number]": the diastolic
        if after[:1] == ":" and kind(row.at + 2) == "number":
            return HOURS  # "17:[number]"
        if before == ":" and kind(row.at - 2) == "number":
            return MINUTES
        if kind(row.at + 2) == "month" and after.strip() == "":
            return DAYS  # "19 February 2024"
        if kind(row.at - 2) == "month" and before.strip() == "":
            day_first = kind(row.at - 4) == "number" and row.pieces[row.at - 3].text.strip() == ""
            return YEARS if day_first else DAYS  # "19 February 2024" / "March 28"
        if kind(row.at - 2) == "number" and before.strip() == "," and kind(row.at - 4) == "month":
            return YEARS  # "March 28, 2024"
        if kind(row.at - 2) == "name" and before.strip() == ",":
            return tuple(range(18, 91))  # "[name], [number]": an age ("Seen today: K. S., 67")
        if (not before or before.endswith("\n")) and after[:1] in (".", ")"):  # an enumerated line: "2. Plan: …"
            row.enumerated += 1
            return (row.enumerated,)
        return number_choices(before, after)

    def _draw(self, row: _Row, choices: Sequence[int | str]) -> int | str:
        """A value of ``choices``; a document's dates share one year and follow each other (:meth:`_date`)."""
        kind = tuple(choices)
        if kind == YEARS:
            row.year = row.year or self.rng.choice(YEARS)
            return row.year
        if kind == MONTH_NUMBERS:  # a numeric date's month ("16-10-2023")
            row.months += 1
            return self._date(row, row.months - 1)[0] + 1
        if kind == DAYS:  # a date's day ("19 February", "16-10-2023")
            row.days += 1
            return self._date(row, row.days - 1)[1]
        return self.rng.choice(choices)

    def _date(self, row: _Row, k: int) -> tuple[int, int]:
        """The document's ``k``-th date (month index, day): the first at random, each later one 1 to 28 days after the
        one before it, in the document's year ("Admitted: 3 May … Discharged: 17 May"; none after 28 December)."""
        while len(row.dates) <= k:
            month, day = row.dates[-1] if row.dates else (self.rng.randrange(len(MONTH_NAMES)), 0)
            day += self.rng.choice(DAYS)
            month, day = (month + 1, day - len(DAYS)) if day > len(DAYS) else (month, day)
            row.dates.append((month, day) if month < len(MONTH_NAMES) else (len(MONTH_NAMES) - 1, len(DAYS)))
        return row.dates[k]

    def _slot_filler(self, row: _Row) -> str:
        """A ``[text]`` slot written whole: a released value of the slot that holds one of the topic's words, else the
        topic's words of the slot's role, else, in a slot of no role, a released value drawn by its noisy count when
        the slot's values stand for half its form's count (a closed list: "yes", a category; never a fact the topic's
        words do not hold); "" leaves the slot to the writer."""
        slot = sum(1 for p in row.pieces[: row.at] if p.kind == "text")  # its place among the form's text slots
        before = row.pieces[row.at - 1].text if row.at and row.pieces[row.at - 1].kind == "fixed" else ""
        values = row.values.get(slot, ())
        topical = [v for v, _ in values if any(_holds(v, w) for w in row.words)]
        if topical:
            value = self.rng.choice(topical)
            row.used.update(w for w in row.words if _holds(value, w))
            return value
        typed = self._typed_filler(row, slot, before)
        if typed or not values or slot_role(before) is not None or \
                sum(c for _, c in values) < CLOSED_LIST_SHARE * row.form_count:
            return typed  # a role's slot (a condition, a drug) never takes another topic's value
        closed = [(v, c) for v, c in values if not invented_terms([v], row.words, self.known)]  # never a symptom
        return self.rng.choices([v for v, _ in closed], weights=[max(c, 0.0) for _, c in closed])[0] if closed else typed

    def _typed_filler(self, row: _Row, slot: int, before: str) -> str:
        """A ``[text]`` slot (the ``slot``-th) whose wording ``before`` it names a role: the topic's words of that role."""
        rest = row.pieces[row.at + 1 : row.at + 4]
        dose = len(rest) >= 3 and rest[1].kind == "number" and bool(_DOSE_AFTER.match(rest[2].text))
        role = slot_role(before, dose)
        fresh = [w for w in row.words if w not in row.used] or list(row.words)
        words = fresh, self.roles, row.words[0], " ".join(p.text for p in row.pieces)  # the form's words: never listed
        pick = some_symptoms(self.rng)
        filler = complaint_filler(*words, pick) if role is None and row.symptom_at == slot else \
            role_filler(role, *words, pick)
        if dose and slot_role(before) == CONDITION and filler:  # "?[text] 25 mg given": a condition, then its drug
            condition = role_filler(CONDITION, fresh, self.roles, row.words[0])
            filler = f"{condition}, {filler}" if condition and condition != filler else filler
        row.used.update(w for w in row.words if w in filler.split(", ") or w == filler or f" {w}" in f" {filler}")
        row.unnamed = row.unnamed or (role == CONDITION and not filler and CONDITION in self.roles.values())
        return filler

    def _append(self, row: _Row, token: int) -> None:
        row.written.append(token)
        row.text += self.table.texts[token].lower()

    def _sample_slot(self, row: _Row, kind: str, logits: torch.Tensor) -> int | None:
        t = self.table
        scores = logits[: t.size].masked_fill(t.banned, -math.inf)
        if row.space_first and not row.slot_tokens:
            scores[~t.space_start] = -math.inf
        if kind == "number":
            if row.slot_tokens and (len(row.slot_text.strip()) >= NUMBER_DIGITS):
                return None
            if row.slot_tokens:  # the writer may end the number: any non-digit it prefers ends it
                choice = self._sample(scores)
                return choice if bool(t.digits[choice]) and not t.texts[choice].startswith(" ") else None
            scores[~t.digits] = -math.inf
            return self._sample(scores)
        nxt = row.pieces[row.at + 1] if row.at + 1 < len(row.pieces) else None
        if row.subject:  # "[text] leaves hospital on": one word
            if row.slot_tokens:
                return None
            if (subjects := self._subjects(row.space_first) & torch.isfinite(scores)).any():  # else the writer's own
                return self._sample(scores.masked_fill(~subjects, -math.inf))
        if row.slot_tokens >= (SHORT_TEXT_TOKENS if nxt is not None and nxt.kind == "number" else TEXT_TOKENS):
            return None
        scores[t.has_digit | t.name_like] = -math.inf
        prev = row.pieces[row.at - 1] if row.at else None
        if prev is not None and prev.kind == "number":  # written onto a number: one unit or letter ("86M")
            if row.slot_tokens:
                return None
            scores[~t.letters] = -math.inf
        if not row.slot_text.strip():
            scores[t.clause_end] = -math.inf
            if prev is None or prev.kind != "number":
                scores[t.lone_capital] = -math.inf
        elif row.slot_tokens > CLOSE_AFTER:  # the longer it runs, the likelier its clause ends
            scores[t.clause_end] += 0.5 * (row.slot_tokens - CLOSE_AFTER)
        for word in row.words:
            if self.roles.get(word) is None and word.lower() not in row.text:
                for tid in self._word_starts(word):
                    if tid < t.size:
                        scores[tid] += PULL
        scores[self._said(row.slot_text)] = -math.inf  # a slot says a word once: not "current study of current report"
        choice = self._sample(scores)
        if bool(t.clause_end[choice]):
            return None
        if nxt is not None and nxt.kind == "fixed" and row.slot_text.strip():  # it starts the form's next words itself
            head = nxt.text.strip().split(" ")[0].lower()  # ("age )) was admitted on") was admitted on")
            word = t.texts[choice].strip().lower()
            if (len(word) >= 3 and head.startswith(word)) or (head[:1] in _MARKS and head[:1] in word):  # ",)" too
                return None
        return choice

    def _subjects(self, space: bool) -> torch.Tensor:
        """The tokens that are each a whole subject word of ``SUBJECTS`` (with a space before it when ``space``)."""
        if space not in self._subject_masks:
            ids = [i[0] for w in SUBJECTS if len(i := self.encode((" " if space else "") + w)) == 1 and i[0] < self.table.size]
            self._subject_masks[space] = torch.isin(torch.arange(self.table.size), torch.tensor(ids, dtype=torch.long))
        return self._subject_masks[space]

    def _said(self, text: str) -> list[int]:
        """The tokens that are each a whole word of four letters or more that ``text`` holds (" current")."""
        for word in (found := set(re.findall(r"[a-z]{4,}", text.lower()))) - self._whole.keys():
            ids = self.encode(" " + word)
            self._whole[word] = ids[0] if len(ids) == 1 and ids[0] < self.table.size else None
        return [i for w in found if (i := self._whole[w]) is not None]

    def _sample(self, scores: torch.Tensor) -> int:
        top, index = torch.topk(scores, TOP_K)  # nucleus sampling within the likeliest TOP_K
        probs = torch.softmax(top / TEMPERATURE, dim=-1)
        cut = int(torch.searchsorted(torch.cumsum(probs, 0), torch.tensor(TOP_P)).item()) + 1
        kept = probs[:cut] / probs[:cut].sum()
        pick = int(torch.multinomial(kept, 1, generator=self.generator).item())
        return int(index[pick].item())


def _holds(value: str, word: str) -> bool:
    return len(word) >= 3 and re.search(rf"\b{re.escape(word.lower())}\b", value.lower()) is not None


def prompt(task: str, topic: str, related: Sequence[str], skeleton: str) -> str:
    words = f" Related words: {', '.join(related)}." if related else ""
    return PROMPT.format(task=task.strip(), topic=topic, related=words, skeleton=skeleton)
