"""The demo corpora's files: notes.csv, questions.jsonl, diseases.json, domain_words.txt and templates.json of a
clinic-like corpus, users.csv and questions.jsonl of MovieLens, and the plain writers they share.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from core.demo.clinic import ClinicCorpus, clinic_domain_words
from core.demo.forms import note_templates, template_fixed_parts, template_slots
from core.demo.movielens import MovieLensCorpus


def templates_payload(kind: str, templates: Sequence[str]) -> dict:
    """templates.json: a corpus kind's public note templates, each with its fixed parts and slots."""
    return {
        "kind": kind,
        "about": "The public templates the generator (core/demo/generate.py) writes this corpus's notes in: "
                 "format strings whose {slots} hold each note's name, age, dates, symptoms, condition and drug. "
                 "Evaluation counts the share of documents in one of them (core/evaluation/own_form.py).",
        "templates": [{"id": i, "template": t, "fixed_parts": template_fixed_parts(t), "slots": template_slots(t)}
                      for i, t in enumerate(templates)],
    }


def write_clinic(corpus: ClinicCorpus, out_dir: Path) -> list[Path]:
    """Write notes.csv, questions.jsonl, diseases.json, domain_words.txt and templates.json into ``out_dir``
    (any clinic-like kind: the demo clinic, discharge summaries, triage notes)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    notes_path = out_dir / "notes.csv"
    write_csv(notes_path, ["id", "patient", "note"], corpus.notes)
    questions_path = out_dir / "questions.jsonl"
    write_jsonl(questions_path, corpus.questions)
    diseases_path = out_dir / "diseases.json"
    payload = {"seed": corpus.seed, "n_patients": len(corpus.notes),
               "diseases": [asdict(d) for d in corpus.diseases]}
    diseases_path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    domain_path = out_dir / "domain_words.txt"
    write_lines(domain_path, clinic_domain_words(corpus.diseases))
    templates_path = out_dir / "templates.json"
    payload = templates_payload(corpus.kind, corpus.templates or note_templates(corpus.kind))
    templates_path.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return [notes_path, questions_path, diseases_path, domain_path, templates_path]


def write_movielens(corpus: MovieLensCorpus, out_dir: Path) -> list[Path]:
    """Write users.csv and questions.jsonl into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    users_path, questions_path = out_dir / "users.csv", out_dir / "questions.jsonl"
    write_csv(users_path, ["id", "user", "document"], corpus.users)
    write_jsonl(questions_path, corpus.questions)
    return [users_path, questions_path]


# ----------------------------------------------------------------------------- plain writers


def write_csv(path: Path, columns: list[str], rows: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def write_lines(path: Path, lines: Sequence[str]) -> None:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
