"""Surface-changed copies of a corpus (issue 57): the same people's text with only its surface changed.

Each ``COPIES`` entry turns a list of note texts into the texts of a copy. ``tests/ledger/test_surface_copies.py``
books every copy against the capped demo corpus; ``python -m tests.ledger.surface_copies`` prints the measured
shares recorded in docs/reliability.md.
"""

from __future__ import annotations

import csv
import random
import re
import textwrap
from collections.abc import Callable
from pathlib import Path

from core.common.paths import resources_dir

DEMO_NOTES = resources_dir() / "demo" / "clinic" / "notes.csv"
MOVIES = resources_dir() / "demo" / "movielens" / "users.csv"

_CYRILLIC_ALL = str.maketrans("aeopcxyiABEKMHOPCTXsj", "аеорсхуіАВЕКМНОРСТХѕј")
_CYRILLIC_OE = str.maketrans("oe", "ое")
_GREEK = str.maketrans("oaevpiktux", "οαεvρικτυχ")
_LEET_E = str.maketrans("eE", "33")
_LEET_ALL = str.maketrans("eEoOaAsStTiI", "330044557711")
_ACCENTS = str.maketrans("aeiouc", "áéíóúç")
# The template words of the demo notes in Spanish (names, ages, diseases, drugs and doses stay).
_SPANISH = {
    "seen": "visto", "today": "hoy", "presenting": "presentando", "symptoms": "síntomas", "were": "eran",
    "the": "los", "findings": "hallazgos", "are": "son", "consistent": "compatibles", "with": "con",
    "i": "yo", "prescribed": "receté", "once": "una", "daily": "diaria", "for": "durante", "weeks": "semanas",
    "a": "un", "year": "año", "old": "edad", "woman": "mujer", "man": "hombre", "came": "vino", "in": "en",
    "complaining": "quejándose", "of": "de", "after": "tras", "examination": "examen", "she": "ella",
    "he": "él", "was": "fue", "diagnosed": "diagnosticada", "treatment": "tratamiento", "and": "y",
    "patient": "paciente", "age": "edad", "reports": "refiere", "assessment": "evaluación", "plan": "plan",
    "start": "iniciar", "three": "tres", "times": "veces", "day": "día", "twice": "dos veces",
    "skin": "piel", "rash": "erupción", "pain": "dolor", "fever": "fiebre", "low": "baja",
    "sore": "dolor de", "throat": "garganta", "back": "espalda", "stiffness": "rigidez", "joint": "articular",
}
_FILLER = "basically"


def read_notes(path: Path = DEMO_NOTES, column: str = "note") -> list[str]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [row[column] for row in csv.DictReader(fh)]


def _words(f: Callable[[list[str]], list[str]]) -> Callable[[list[str]], list[str]]:
    return lambda notes: [" ".join(f(t.split())) for t in notes]


def _shuffled(words: list[str]) -> list[str]:
    words = list(words)
    random.Random(" ".join(words)).shuffle(words)
    return words


def _filler_every(n: int) -> Callable[[list[str]], list[str]]:
    return _words(lambda ws: [x for i, w in enumerate(ws, 1) for x in ([w, _FILLER] if i % n == 0 else [w])])


def _drop_every(n: int) -> Callable[[list[str]], list[str]]:
    return _words(lambda ws: [w for i, w in enumerate(ws, 1) if i % n])


def _joined_pairs(words: list[str]) -> list[str]:
    return ["".join(words[i:i + 2]) for i in range(0, len(words), 2)]


def _html(text: str) -> str:
    return "<p>" + "&nbsp;".join(text.replace("&", "&amp;").split()) + "</p>"


def _pdf(text: str) -> str:
    """Text extracted from a PDF: hard line breaks at 40 columns, words hyphenated across lines."""
    lines = textwrap.wrap(text, 40, break_long_words=False)
    out = []
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and len(line) > 6 and line.split()[-1].isalpha() and len(line.split()[-1]) > 6:
            last = line.split()[-1]
            line = line[: -len(last)] + last[:4] + "-"
            lines[i + 1] = last[4:] + lines[i + 1]
        out.append(line)
    return "\n".join(out) + "\n\f"


def _translated(text: str) -> str:
    return " ".join(_SPANISH.get(w.strip(".,;:").lower(), w) for w in text.split())


def _sentences_shuffled(text: str) -> str:
    sentences = re.split(r"(?<=[.;])\s+", text)
    random.Random(text).shuffle(sentences)
    return " ".join(sentences)


def _entities(text: str) -> str:
    return "".join(f"&#{ord(c)};" if c in "aeiou" else c for c in text)


def _filler_rows(n: int) -> list[str]:
    """Rows of the same kind but other people: the demo's generator with another seed."""
    from core.demo.clinic import make_clinic_corpus

    return [r["note"] for r in make_clinic_corpus(n, seed=4242).notes][:n]


def _diluted(real: int, filler: int) -> Callable[[list[str]], list[str]]:
    def make(notes: list[str]) -> list[str]:
        rows = random.Random(57).sample(notes, real) + _filler_rows(filler)
        random.Random(58).shuffle(rows)
        return rows
    return make


def _subset(share: float) -> Callable[[list[str]], list[str]]:
    return lambda notes: random.Random(59).sample(notes, round(share * len(notes)))


def _halves(text: str) -> tuple[str, str]:
    words = text.split()
    return " ".join(words[: len(words) // 2]), " ".join(words[len(words) // 2:])


def _each(f: Callable[[str], str]) -> Callable[[list[str]], list[str]]:
    return lambda notes: [f(t) for t in notes]


COPIES: dict[str, tuple[str, Callable[[list[str]], list[str]]]] = {
    # the audit's escapes (issue 57)
    "cyrillic_all": ("look-alike Cyrillic letters for every a, e, o, p, c, x, y, i …",
                     _each(lambda t: t.translate(_CYRILLIC_ALL))),
    "cyrillic_oe": ("Cyrillic о and е only", _each(lambda t: t.translate(_CYRILLIC_OE))),
    "shuffled": ("words shuffled within each row", _words(_shuffled)),
    "reversed": ("words reversed within each row", _words(lambda ws: ws[::-1])),
    "filler_4": ("a filler word after every 4th word", _filler_every(4)),
    "drop_5": ("every 5th word dropped", _drop_every(5)),
    "html": ("HTML export: <p>…</p>, &nbsp; between words", _each(_html)),
    "leet_e": ("every e written as 3", _each(lambda t: t.translate(_LEET_E))),
    "joined_pairs": ("words joined in pairs", _words(_joined_pairs)),
    "dilution_20": ("40 real rows (20 %) among 160 filler rows", _diluted(40, 160)),
    # caught before (issue 31) and kept
    "upper": ("upper-cased", _each(str.upper)),
    "lower": ("lower-cased", _each(str.lower)),
    "space_dot": ('" ." after each note', _each(lambda t: t + " .")),
    "note_prefix": ('"Note: " before each note', _each(lambda t: "Note: " + t)),
    "zero_width": ("a zero-width space in each note", _each(lambda t: t[:12] + "\u200b" + t[12:])),
    "dilution_45": ("45 % of the rows among filler rows", _diluted(270, 330)),
    "split": ("notes split in two", lambda notes: [h for t in notes for h in _halves(t)]),
    "merged": ("notes merged in pairs", lambda notes: [notes[i] + " " + notes[i + 1] for i in range(0, len(notes) - 1, 2)]),
    # new ones (issue 57)
    "pdf": ("PDF-to-text: line breaks at 40 columns, words hyphenated across lines", _each(_pdf)),
    "translated": ("template words translated into Spanish", _each(_translated)),
    "truncated_half": ("each row cut to its first half", _each(lambda t: _halves(t)[0])),
    "greek": ("look-alike Greek letters (ο, α, ε, ρ, ι, κ, τ, υ, χ)", _each(lambda t: t.translate(_GREEK))),
    "fullwidth": ("full-width letters", _each(lambda t: "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in t))),
    "accents": ("accents on every vowel", _each(lambda t: t.translate(_ACCENTS))),
    "entities": ("every vowel as a numeric character reference (&#101;)", _each(_entities)),
    "xml": ("each note wrapped in XML tags", _each(lambda t: f"<record><note type=\"clinical\">{t}</note></record>")),
    "leet_all": ("3 for e, 0 for o, 4 for a, 5 for s, 7 for t, 1 for i", _each(lambda t: t.translate(_LEET_ALL))),
    "newlines": ("a line break between every two words", _each(lambda t: "\n".join(t.split()))),
    "title_case": ("Title Case", _each(str.title)),
    "sentences_shuffled": ("sentences shuffled within each note", _each(_sentences_shuffled)),
    "no_punctuation": ("punctuation removed", _each(lambda t: re.sub(r"[^\w\s]", "", t))),
    "soft_hyphens": ("soft hyphens inside every word", _words(lambda ws: [w[:2] + "\u00ad" + w[2:] for w in ws])),
    "subset_30": ("a 30 % sample of the rows alone", _subset(0.3)),
    "doubled": ("every row twice", lambda notes: notes + notes),
    "cyrillic_shuffled": ("Cyrillic look-alikes and words shuffled",
                          lambda n: [t.translate(_CYRILLIC_ALL) for t in _words(_shuffled)(n)]),
    "html_leet": ("HTML export with every e written as 3", _each(lambda t: _html(t.translate(_LEET_E)))),
    "markdown": ("Markdown: a bullet per note, names in bold",
                 _each(lambda t: "- **" + " ".join(t.split()[:2]) + "** " + " ".join(t.split()[2:]))),
}


def different_corpora() -> dict[str, tuple[str, list[str]]]:
    """Corpora that are not the demo's: they must stay their own datasets."""
    from core.demo.clinic import make_clinic_corpus
    from core.demo.draws import DEMO_SEED

    def clinic(n: int, seed: int) -> list[str]:
        return [r["note"] for r in make_clinic_corpus(n, seed=seed).notes]

    return {
        "patients_200": ("`privet demo-data --patients 200` (the demo's seed: its diseases, drugs, templates)",
                         clinic(200, DEMO_SEED)),
        "seed_7": ("`--seed 7` (600 notes)", clinic(600, 7)),
        "seed_7_patients_1000": ("`--seed 7 --patients 1000`", clinic(1000, 7)),
        "movielens": ("the MovieLens demo corpus", read_notes(MOVIES, "document")),
    }
