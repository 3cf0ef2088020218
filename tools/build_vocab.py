"""Build the shipped public word lists: ``english.txt`` and ``stopwords.txt``.

Run from the repository root::

    .venv/bin/python -m tools.build_vocab

* ``stopwords.txt``: scikit-learn's ``ENGLISH_STOP_WORDS`` (the Glasgow Information Retrieval
  Group list, BSD-3-Clause in scikit-learn), written out verbatim, sorted.
* ``english.txt``: the most frequent English words according to ``wordfreq`` (data under
  CC BY-SA 4.0), lower-case ASCII letters only, at least 3 letters, stop words removed,
  the first :data:`N_WORDS` in frequency order, written sorted.

Both inputs are public and fixed, so the vocabulary never depends on any private corpus.
The output is deterministic for a given wordfreq / scikit-learn version.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from core.paths import resources_dir

N_WORDS = 30_000
MIN_LENGTH = 3
# Enough candidates that N_WORDS survive the filters (about 6% of wordfreq's top list is dropped).
_CANDIDATES = 60_000
_ALPHA = re.compile(r"[a-z]+")

HERE = resources_dir() / "vocab"  # the shipped word lists (core.paths locates resources)


def stop_words() -> list[str]:
    """scikit-learn's English stop-word list, sorted."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return sorted(ENGLISH_STOP_WORDS)


def english_words(stop: set[str], n_words: int = N_WORDS) -> list[str]:
    """The ``n_words`` most frequent admissible English words from wordfreq, sorted."""
    from wordfreq import top_n_list

    chosen: list[str] = []
    for word in top_n_list("en", _CANDIDATES):
        if len(word) >= MIN_LENGTH and _ALPHA.fullmatch(word) and word not in stop:
            chosen.append(word)
            if len(chosen) == n_words:
                break
    if len(chosen) < n_words:
        raise RuntimeError(f"only {len(chosen)} admissible words among wordfreq's top {_CANDIDATES}")
    return sorted(chosen)


def write_list(path: Path, words: list[str]) -> None:
    path.write_text("".join(f"{w}\n" for w in words), encoding="utf-8")


def build(out_dir: Path = HERE, n_words: int = N_WORDS) -> tuple[Path, Path]:
    """Write ``stopwords.txt`` and ``english.txt`` into ``out_dir``; return their paths."""
    stop = stop_words()
    stop_path, english_path = out_dir / "stopwords.txt", out_dir / "english.txt"
    write_list(stop_path, stop)
    write_list(english_path, english_words(set(stop), n_words))
    return stop_path, english_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="output folder (default: resources/vocab)")
    parser.add_argument("--words", type=int, default=N_WORDS, help="number of English words")
    args = parser.parse_args(argv)
    for path in build(args.out, args.words):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
