"""PII masking for RPSG seeds and the final scan of RPSG outputs (docs/method.md §3, steps 1 and 5).

Why not Presidio: ``presidio-analyzer`` was tried on this machine (2.2.366). Its
``AnalyzerEngine`` downloads a spaCy model at start-up and its e-mail recogniser asks
``tldextract`` to download the public-suffix list, so it is not offline; the package also
pulls in spaCy (~390 MB with dependencies) for what, without an NLP model, is a set of
regular expressions. Privet therefore uses its own pattern recognisers here:

* e-mail addresses, URLs, phone numbers, dates, ID-like numbers (SSN shape, labelled IDs such
  as ``MRN: 12345``, long digit runs, letter+digit codes), street addresses and
  "City, ST 12345" lines;
* person names from (a) the public first- and last-name lists that ship inside ``faker``
  (en_US), (b) titles (Mr./Mrs./Ms./Dr./...) followed by a capitalised word, and (c) every
  other occurrence, in the same text, of a name part already found by (a) or (b);
* the custodian's own regular expressions (any kind) and name / place lists.

Masking replaces each match by a placeholder such as ``[NAME]``. Only *counts* by kind leave
this module; matched strings are never returned, logged or stored.

Limits, stated plainly: this is a recall-oriented heuristic, not a guarantee. Names that are
in no list, follow no title and are never written next to a listed name are missed. Listed
names that are also common words (``_AMBIGUOUS``: "Mark", "Rose", "Brown") are masked alone only
in mid-sentence, and never when they are usually a month, place or language (``_NOT_PERSON``:
"May", "Austin", "English"), unless they appear in a full name or after a title in the same
text. Measured on faker en_US data: every full name, e-mail, phone, SSN, address and date in
300 generated records was masked; 7 of 600 lone first or last names survived (all such words).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Protocol

from core.common.errors import PrivetError
from core.common.links import SCHEMED_LINK

KINDS = ("NAME", "EMAIL", "PHONE", "ID", "DATE", "URL", "PLACE")
_KIND_RE = re.compile(r"^[A-Z][A-Z_]{1,19}$")


def placeholder(kind: str) -> str:
    """The text that replaces a match of ``kind``: ``[NAME]``, ``[EMAIL]``, ..."""
    return f"[{kind}]"


@dataclass(frozen=True)
class Span:
    """A match: characters ``start:end`` of the text are PII of ``kind``."""

    start: int
    end: int
    kind: str


class Recognizer(Protocol):
    kind: str

    def find(self, text: str) -> list[Span]: ...


# ----------------------------------------------------------------------------- patterns


@dataclass(frozen=True)
class PatternRecognizer:
    """A regular expression; ``group`` selects the part that is PII (e.g. the value after 'MRN:')."""

    kind: str
    pattern: re.Pattern[str]
    group: int = 0

    def find(self, text: str) -> list[Span]:
        spans = []
        for match in self.pattern.finditer(text):
            start, end = match.span(self.group)
            if start >= 0 and end > start:
                spans.append(Span(start, end, self.kind))
        return spans


_MONTHS = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
           r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
_ORD = r"\d{1,2}(?:st|nd|rd|th)?"

_EMAIL = re.compile(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}\b")
_DATE = re.compile(
    r"\b(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}"  # 2024-03-05
    r"|\d{1,2}[-/.]\d{1,2}[-/.](?:\d{4}|\d{2})"  # 05/03/2024, 3.5.24
    rf"|{_ORD}\s+(?:of\s+)?{_MONTHS},?\s+\d{{4}}"  # 5 March 2024
    rf"|{_MONTHS}\s+{_ORD}(?:,?\s+\d{{4}})?"  # March 5, 2024 / March 5
    rf"|{_MONTHS}\s+\d{{4}})\b"  # March 2024
)
_PHONE = re.compile(
    r"(?<![\w.-])(?:(?:\+|00)\d{1,3}[\s.-]?|1[\s.-])?"  # +44 / 001 / 1-
    r"(?:\(\d{2,5}\)\s?|\d{2,5}[\s.-])"  # area code
    r"\d{3,4}[\s.-]?\d{3,4}"  # number
    r"(?:\s?(?:x|ext\.?|extension)\s?\d{1,6})?(?![\w-])"
    r"|(?<![\w.-])(?:\+\d{1,3}[\s.-]?)?\d{10,11}(?:x\d{1,6})?(?![\w-])"  # 5551234567
    r"|(?<![\w.-])(?:\+|00)\d{1,3}[\s.-]?\d{3,5}[\s.-]\d{3,8}(?![\w-])"  # international, no parentheses
)
_SSN = re.compile(r"\b\d{3}-\d{2}-\d{4}\b")
_LABELLED_ID = re.compile(
    r"\b(?:MRN|NHS|SSN|NPI|DOB|ID|I\.D\.|No|Nr|Number|Record|Account|Acct|Policy|Member|Patient|"
    r"Case|Chart|Ref|Reference|Passport|Licen[cs]e)\.?(?:\s+(?:ID|No\.?|Number|#))?\s*[:#]\s*"
    r"((?=[A-Z0-9\-/]*\d)[A-Z0-9][A-Z0-9\-/]{2,})",
    re.IGNORECASE,
)
_LONG_NUMBER = re.compile(r"(?<![\w.])\d{6,}(?![\w.]\d)")
_CODE = re.compile(r"\b(?=[A-Z0-9\-]*\d{3})[A-Z]{1,4}-?\d{4,}[A-Z]?\b")


def _street_pattern() -> re.Pattern[str]:
    from faker.providers.address.en_US import Provider as Address

    suffixes = set(Address.street_suffixes) | {"St", "Ave", "Rd", "Blvd", "Ln", "Dr", "Ct", "Pl", "Hwy", "Sq"}
    alternation = "|".join(sorted((re.escape(s) for s in suffixes), key=len, reverse=True))
    return re.compile(
        rf"\b\d{{1,6}}[ \t]+(?:[A-Z][a-z]+[ \t]+){{1,3}}(?:{alternation})\b\.?"
        r"(?:,?[ \t]+(?:Apt\.?|Suite|Unit|#)[ \t]*[\w-]+)?"
    )


_CITY_STATE_ZIP = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+){0,2},[ \t]+[A-Z]{2}[ \t]+\d{5}(?:-\d{4})?\b")
_MILITARY = re.compile(r"\b(?:(?:PSC|Unit)[ \t]+\d{4},?[ \t]+Box[ \t]+\d{4}|[ADF]PO[ \t]+A[AEP][ \t]+\d{5}"
                       r"|(?:USNS|USNV|USS|USCGC)[ \t]+[A-Z][a-z]+)\b")
_UK_POSTCODE = re.compile(r"\b[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}\b")


# ----------------------------------------------------------------------------- term lists


@dataclass(frozen=True)
class TermListRecognizer:
    """Exact terms (custodian names or places), matched whole-word and case-insensitively."""

    kind: str
    terms: tuple[str, ...]
    _regex: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, kind: str, terms: Iterable[str]) -> "TermListRecognizer":
        cleaned = tuple(sorted({t.strip() for t in terms if t and t.strip()}, key=len, reverse=True))
        regex = None
        if cleaned:
            body = "|".join(r"\s+".join(map(re.escape, t.split())) for t in cleaned)
            regex = re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.IGNORECASE)
        return cls(kind, cleaned, regex)

    def find(self, text: str) -> list[Span]:
        if self._regex is None:
            return []
        return [Span(m.start(), m.end(), self.kind) for m in self._regex.finditer(text)]


# ----------------------------------------------------------------------------- person names

# Capitalised words that are in the faker name lists but are far more often ordinary English
# words. At the start of a sentence they are left alone; in mid-sentence (where capitals mark a
# proper noun), inside a full name or after a title they are masked.
_AMBIGUOUS = frozenset("""
Good May Day Best Love Long Little House Case White Small Black Young Guy York Short West Summer
Price Strong Weeks English April King Park Church Bill Green Page Key French Washington Mark Wall
Ball Miles Cross Rich Gay Hall Christian Glass Rose Hill Faith Stone Wood Frank Prince Powers Moon
Ray Banks Grant Golden Snow Max Fox Cook Flowers Bird Walls Virginia Bright Fields Bond Bell Branch
Lane Grace Rice Joy Sydney Francisco Wise Jordan Roman Le Ford Marks Hunt Bush Sharp Rush Drew Woods
Waters Gross Gray Duke Angel Victoria Chase Walker Houston Diamond Crystal Dean Pope Pace Bishop Ward
Hunter Wolf Carter Parks Foster Rivers Gates Clay Knight Bass Dawn Noble Autumn Destiny Cherry
Baker Mills Hood Holder Villa Sandy Cole Kent Horn Farmer Mason Potter Bridges Booth Petty Penny
Beard Sierra Hull Chambers Savage Hart Harper Brooks Lamb Fisher Cannon Buck Stark Wade Porter
Mercedes Bean Berry Amber Drake Curry Frost Newton Lynch Lance Pierce Downs Crane Carson Shepherd
Moss Monroe Fry Shields Marsh Heather Hayes Graves Hardy Sellers Nash Miranda Tracy Melody Forbes
Carpenter Barber Archer Raven Gamble Fuller Jade Flynn Daisy Valentine Sparks Heath Summers Chandler
Payne Mayo Mann Mack Moody Carr Will Hope June August Holly Ivy Iris Pearl Ruby Jasmine Olive Violet
Lily Brook River Sky Cliff Rod Norm Art Sunny Patience Charity Mercy Honor Trinity Harmony Spring
Winter Fall Camp Field Street Lake Mount Port Center Virginia Georgia Dakota Carolina Austin Madison
Jackson Lincoln Charleston Orlando Phoenix Denver Dallas Paris London Florence Eugene Aurora Asia
India China Nevada Montana Indiana Sharon Salem Logan Tyler
""".split())

# Ambiguous words that, capitalised in mid-sentence, are usually a month, place, language or
# season rather than a person: never masked alone.
_NOT_PERSON = frozenset("""
May April June August Virginia Georgia Washington York Houston Dallas Denver Phoenix Orlando
Charleston Lincoln Sydney Francisco Paris London Florence Aurora Asia India China Nevada Montana
Indiana Dakota Carolina Salem English French Christian Roman Church Spring Summer Winter Fall Autumn
West Street Lake Mount Port Center Park Camp Field Day Key Le
""".split())
_SENTENCE_END = frozenset(".!?:;([{\"'*\u2022-")

_TITLE = re.compile(r"\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Dame|Madam|Mme|Mlle|Herr|Frau|Sr|Sra|Srta)\.?[ \t]+"
                    r"(?P<name>[A-Z][a-zA-Z'\-]+(?:[ \t]+[A-Z]\.)?(?:[ \t]+[A-Z][a-zA-Z'\-]+)?)")
_CAP_WORD = re.compile(r"\b[A-Z][a-zA-Z'\-]*[a-zA-Z]\b")


@lru_cache(maxsize=1)
def _faker_names() -> tuple[frozenset[str], frozenset[str]]:
    """First and last names from faker's public en_US lists (read once, never changed)."""
    from faker.providers.person.en_US import Provider as Person

    return frozenset(Person.first_names), frozenset(Person.last_names)


def _canonical(token: str) -> str:
    """'SMITH' → 'Smith' so all-caps headers match the lists; other tokens unchanged."""
    return token.title() if token.isupper() and len(token) > 1 else token


@dataclass(frozen=True)
class PersonNameRecognizer:
    """Names from lists, titles and same-text repetition (see the module docstring)."""

    first_names: frozenset[str]
    last_names: frozenset[str]
    ambiguous: frozenset[str] = _AMBIGUOUS
    kind: str = "NAME"

    @classmethod
    def default(cls) -> "PersonNameRecognizer":
        first, last = _faker_names()
        return cls(first, last)

    def _is_name(self, token: str) -> bool:
        """Listed, or hyphenated with every part listed ('Garcia-Lopez', not 'X-Ray')."""
        return all(p in self.first_names or p in self.last_names for p in token.split("-"))

    def find(self, text: str) -> list[Span]:
        tokens = [(m.start(), m.end(), _canonical(m.group())) for m in _CAP_WORD.finditer(text)]
        spans: list[Span] = []
        parts: set[str] = set()
        # (a) runs of adjacent listed names starting with a first name: "Mark Brown", "Jennifer Ann Smith".
        i = 0
        while i < len(tokens):
            j = i
            while (j + 1 < len(tokens) and self._is_name(tokens[j + 1][2])
                   and _only_space_or_initial(text[tokens[j][1]:tokens[j + 1][0]])):
                j += 1
            if j > i and tokens[i][2] in self.first_names:
                spans.append(Span(tokens[i][0], tokens[j][1], self.kind))
                parts.update(t[2] for t in tokens[i:j + 1])
                i = j + 1
                continue
            i += 1
        # (b) a title followed by one or two capitalised words.
        for match in _TITLE.finditer(text):
            spans.append(Span(match.start("name"), match.end("name"), self.kind))
            parts.update(_canonical(w) for w in re.findall(r"[A-Za-z'\-]{2,}", match.group("name")))
        # (c) single listed names, unless ambiguous at a sentence start or a place/month, and
        #     every repetition of a part found above.
        for start, end, token in tokens:
            if token in parts or (self._is_name(token) and self._alone_is_name(token, text, start)):
                spans.append(Span(start, end, self.kind))
        return spans

    def _alone_is_name(self, token: str, text: str, start: int) -> bool:
        pieces = set(token.split("-"))
        if not pieces <= self.ambiguous:
            return True
        return not pieces & _NOT_PERSON and not _starts_sentence(text, start)


def _starts_sentence(text: str, start: int) -> bool:
    """True when only spaces separate ``start`` from the text start, a line break or punctuation."""
    before = text[:start].rstrip(" \t")
    return not before or before[-1] == "\n" or before[-1] in _SENTENCE_END


def _only_space_or_initial(gap: str) -> bool:
    return bool(re.fullmatch(r"[ \t]+(?:[A-Z]\.[ \t]+)?", gap))


# ----------------------------------------------------------------------------- assembly


@dataclass(frozen=True)
class PIIOptions:
    """What the custodian adds to the built-in recognisers.

    ``patterns`` maps a kind (e.g. "ID" or a new upper-case kind such as "WARD") to regular
    expressions; ``names`` and ``places`` are exact terms (e.g. staff names, local clinics).
    """

    patterns: Mapping[str, Sequence[str]] = field(default_factory=dict)
    names: Sequence[str] = ()
    places: Sequence[str] = ()
    use_name_lists: bool = True


def default_recognizers(options: PIIOptions | None = None) -> list[Recognizer]:
    """The built-in recognisers plus the custodian's patterns and lists."""
    options = options or PIIOptions()
    recognizers: list[Recognizer] = [
        PatternRecognizer("EMAIL", _EMAIL),
        PatternRecognizer("URL", SCHEMED_LINK),
        PatternRecognizer("DATE", _DATE),
        PatternRecognizer("PHONE", _PHONE),
        PatternRecognizer("ID", _SSN),
        PatternRecognizer("ID", _LABELLED_ID, group=1),
        PatternRecognizer("ID", _LONG_NUMBER),
        PatternRecognizer("ID", _CODE),
        PatternRecognizer("PLACE", _street_pattern()),
        PatternRecognizer("PLACE", _CITY_STATE_ZIP),
        PatternRecognizer("PLACE", _UK_POSTCODE),
        PatternRecognizer("PLACE", _MILITARY),
    ]
    if options.use_name_lists:
        recognizers.append(PersonNameRecognizer.default())
    else:
        recognizers.append(PersonNameRecognizer(frozenset(), frozenset()))
    recognizers.extend(custom_recognizers(options))
    return recognizers


def custom_recognizers(options: PIIOptions) -> list[Recognizer]:
    """The custodian's regexes and term lists; a bad regex or kind is a ``PrivetError``."""
    out: list[Recognizer] = []
    for kind, patterns in options.patterns.items():
        if not _KIND_RE.match(kind):
            raise PrivetError(
                f"The PII kind {kind!r} is not a valid name.",
                "Use 2–20 upper-case letters or underscores, e.g. ID or WARD.",
            )
        for pattern in patterns:
            try:
                out.append(PatternRecognizer(kind, re.compile(pattern)))
            except re.error as exc:
                raise PrivetError(
                    f"The custom PII pattern number {list(patterns).index(pattern) + 1} for {kind} "
                    f"is not a valid regular expression ({exc.msg}).",
                    "Fix the pattern (Python regular-expression syntax) or remove it.",
                ) from None
    if options.names:
        out.append(TermListRecognizer.of("NAME", options.names))
    if options.places:
        out.append(TermListRecognizer.of("PLACE", options.places))
    return out


def find_pii(text: str, recognizers: Sequence[Recognizer] | None = None) -> list[Span]:
    """Non-overlapping matches, longest first, in text order."""
    recognizers = default_recognizers() if recognizers is None else recognizers
    candidates = [s for r in recognizers for s in r.find(text)]
    candidates.sort(key=lambda s: (-(s.end - s.start), s.start))
    taken: list[Span] = []
    for span in candidates:
        if all(span.end <= t.start or span.start >= t.end for t in taken):
            taken.append(span)
    return sorted(taken, key=lambda s: s.start)


def mask_pii(text: str, recognizers: Sequence[Recognizer] | None = None) -> tuple[str, dict[str, int]]:
    """Replace every match by its placeholder; returns the masked text and counts by kind."""
    spans = find_pii(text, recognizers)
    pieces, cursor = [], 0
    for span in spans:
        pieces.append(text[cursor:span.start])
        pieces.append(placeholder(span.kind))
        cursor = span.end
    pieces.append(text[cursor:])
    return "".join(pieces), dict(Counter(s.kind for s in spans))


def scan_pii(text: str, recognizers: Sequence[Recognizer] | None = None) -> dict[str, int]:
    """Counts by kind of what ``mask_pii`` would mask (placeholders themselves never count)."""
    return dict(Counter(s.kind for s in find_pii(text, recognizers)))
