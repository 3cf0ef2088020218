"""Identity form: what "the same text" means when budgeting (``core.ledger.booking``).

A document's text is put in identity form before it is cut into the shingles and n-grams of its content sketch
(core/corpus/content_sketch.py): markup decoded, NFKC and case-folded, look-alike letters and digits written for
letters folded, accents, format characters, punctuation and symbols removed. Upper- or lower-casing, punctuation,
zero-width characters and look-alike letters then leave almost every shingle as it was.
"""

from __future__ import annotations

import functools
import html
import re
import sys
import unicodedata

# Code points that render as nothing but are not Unicode format characters (Cf): the combining grapheme
# joiner, Hangul fillers and variation selectors (Default_Ignorable_Code_Point, less Cf).
_IGNORABLE_RANGES = ((0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F), (0x3164, 0x3164),
                     (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xE0100, 0xE01EF))
_ASCII_SEPARATORS = str.maketrans({c: " " for c in map(chr, range(128))
                                   if not c.isalnum() and not c.isspace()})

# Look-alike letters (Unicode confusables, UTS #39) folded to the Latin letter they are drawn like, after case
# folding: the Cyrillic and Greek letters that render as a Latin one in common fonts, and a few others. UTS #39's
# full skeleton table is not installed with Python; these are the letters a look-alike copy uses (a maintained
# table would also fold rarer symbols, which identity form turns into spaces anyway).
_CONFUSABLE_PAIRS = {
    # Cyrillic
    "а": "a", "в": "b", "г": "r", "д": "d", "е": "e", "ё": "e", "и": "u", "й": "u", "к": "k",
    "л": "n", "м": "m", "н": "h", "о": "o", "п": "n", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x",
    "ь": "b", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l",
    "ү": "y", "ɡ": "g", "ʏ": "y", "ᴄ": "c", "ᴏ": "o", "ᴠ": "v", "ᴡ": "w", "ᴢ": "z",
    # Greek
    "α": "a", "β": "b", "γ": "y", "δ": "d", "ε": "e", "ζ": "z", "η": "n", "ι": "i", "κ": "k", "ν": "v",
    "ο": "o", "ρ": "p", "σ": "o", "ς": "c", "τ": "t", "υ": "u", "χ": "x", "ω": "w", "ϲ": "c", "ϳ": "j",
    # Latin look-alikes outside ASCII
    "ı": "i", "ȷ": "j", "ł": "l", "ø": "o", "đ": "d", "ħ": "h", "ŀ": "l", "ſ": "s",
}
_CONFUSABLES = str.maketrans(_CONFUSABLE_PAIRS)
# Digits written for letters inside words that mix both ("pati3nt", "n0te", "c1inic"): folded to the letter.
# A word of digits only (an age, a dose) is left alone. "1" stands for l or i, so i is folded to l everywhere.
_LEET = str.maketrans("0134578", "oleastb")
_MIXED_WORD = re.compile(r"\b(?=[^\W\d_]*\d)(?=\d*[^\W\d_])\w+\b")
_I_TO_L = str.maketrans("i", "l")
# Markup: an HTML or XML tag (a letter, "/", "!" or "?" after "<"), and a word broken across lines by a hyphen
# (text extracted from a PDF: "treat-\nment").
_TAG = re.compile(r"<[A-Za-z!/?][^<>]{0,1000}>")
_LINE_HYPHEN = re.compile(r"(\w)-[ \t]*\r?\n\s*(\w)")


@functools.cache
def _separator_table() -> dict[int, str | None]:
    """Every code point that identity form deletes (``None``: format and ignorable) or turns into a space
    (punctuation, symbols, control characters). Built once per process (about a second)."""
    table: dict[int, str | None] = {cp: None for lo, hi in _IGNORABLE_RANGES for cp in range(lo, hi + 1)}
    for cp in range(sys.maxunicode + 1):
        category = unicodedata.category(chr(cp))
        if category == "Cf":
            table[cp] = None
        elif category[0] in "PS" or category == "Cc":
            table.setdefault(cp, " ")
    return table


def _strip_marks(text: str) -> str:
    """``text`` without combining marks (accents): "é" and "e" are drawn alike."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def identity_text(text: str) -> str:
    """``text`` in identity form (version ``IDENTITY_VERSION``):

    1. markup: HTML/XML character references decoded (twice, for a doubly escaped export), tags turned into
       spaces, a word hyphenated across a line break joined again;
    2. NFKC, case-folded; look-alike letters folded to the Latin letter (``_CONFUSABLE_PAIRS``); accents and
       other combining marks removed; format characters (Cf, e.g. zero-width spaces) removed;
    3. punctuation, symbols and control characters turned into spaces, whitespace collapsed;
    4. in a word that mixes letters and digits, digits folded to the letters they stand for (3→e, 0→o, 1→l,
       4→a, 5→s, 7→t, 8→b); i folded to l everywhere (1 stands for either).
    """
    if "&" in text or "<" in text:
        text = _TAG.sub(" ", html.unescape(html.unescape(text)))
    if "-" in text and "\n" in text:
        text = _LINE_HYPHEN.sub(r"\1\2", text)
    if text.isascii():  # NFKC leaves ASCII alone and its case folding is lower()
        folded = text.lower().translate(_ASCII_SEPARATORS)
    else:
        folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
        folded = _strip_marks(folded.translate(_CONFUSABLES)).translate(_CONFUSABLES)
        folded = unicodedata.normalize("NFKC", folded.translate(_separator_table()))
    folded = " ".join(folded.split())
    if any(c.isdigit() for c in folded):
        folded = _MIXED_WORD.sub(lambda m: m.group().translate(_LEET), folded)
    return folded.translate(_I_TO_L)


def spaceless(identity: str) -> str:
    """Identity form without spaces, every digit folded as in a mixed word: words joined or split, a line
    break inside a word, and a digit for a letter leave its character n-grams as they were."""
    return identity.replace(" ", "").translate(_LEET)
