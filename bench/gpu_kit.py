"""Build the offline kit that the GPU check carries to a bare GPU machine (bench/gpu_check.sh --offline-kit).

The machine lent for checks has its own Python stack, no package index, and takes at most 64 MiB of
files. Everything the check needs beyond the project's code and that stack is written here, on a
machine where the project is installed (its .venv), into one small folder:

    tokenizer/     the packaged SmolLM2 tokenizer (files only, ~3.5 MB; extracted from the packaged GGUF)
    zipf.tsv       wordfreq's English Zipf figures for every entry of the keyword vocabulary V and every word
                   of the shipped document forms and their demonstrations (the realised writer's guard reads
                   them); wordfreq itself is not on that machine; the figures are public
    corpus.csv     a generated (fake) clinic corpus of --units notes (columns id, patient, note)
    kit.json       what was built, from what, and the sizes

No weights: the check builds random-weight models from public configs (core/models/random_weights.py).

    .venv/bin/python bench/gpu_kit.py --out bench/kit [--units 8000]
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import sys
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's core/, not an installed one

from core.methods.dp_synrag.vocab.vocabulary import load_vocabulary, write_zipf_table
from core.models.registry import packaged_tokenizer
from core.common.paths import resources_dir

KIT_LIMIT_BYTES = 40 * 2**20  # leaves room for the project's files within the 64 MiB that travel
DOMAIN_LIST = "vocab/medical_demo_domain.txt"


def write_tokenizer(out: Path) -> None:
    folder = out / "tokenizer"
    if folder.exists():
        shutil.rmtree(folder)
    packaged_tokenizer().save_pretrained(str(folder))


def form_words() -> set[str]:
    """Every word of the shipped document forms (``resources/examples``: examples and demonstrations), whose
    everyday English frequency the realised writer's demonstration guard reads."""
    from core.methods.dp_synrag.vocab.vocabulary import split_words

    folder = resources_dir() / "examples"
    return {w for path in sorted(folder.glob("*.txt")) + sorted(folder.glob("*.demo.toml"))
            for w in split_words(path.read_text(encoding="utf-8"))}


def write_corpus(out: Path, units: int) -> int:
    from core.demo.clinic import make_clinic_corpus

    corpus = make_clinic_corpus(n_patients=units, n_questions=10)
    with open(out / "corpus.csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["id", "patient", "note"])
        writer.writeheader()
        writer.writerows({k: row[k] for k in ("id", "patient", "note")} for row in corpus.notes)
    return len(corpus.notes)


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def build_kit(out: Path, units: int) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    write_tokenizer(out)
    vocab = load_vocabulary([resources_dir() / DOMAIN_LIST])
    entries = write_zipf_table({*vocab.words, *form_words()}, out / "zipf.tsv")
    notes = write_corpus(out, units)
    info = {
        "built_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "tokenizer": "SmolLM2-135M-Instruct (from the packaged GGUF)",
        "zipf_entries": entries,
        "vocabulary_sha256": vocab.sha256,
        "corpus_units": notes,
        "domain_list": DOMAIN_LIST,
    }
    (out / "kit.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    info["bytes"] = folder_bytes(out)
    if info["bytes"] > KIT_LIMIT_BYTES:
        raise SystemExit(f"The kit is {info['bytes'] / 2**20:.1f} MiB, over {KIT_LIMIT_BYTES / 2**20:.0f} MiB: "
                         "build it with fewer --units.")
    return info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="bench/kit")
    parser.add_argument("--units", type=int, default=8000)
    args = parser.parse_args()
    info = build_kit(Path(args.out), args.units)
    print(json.dumps(info))


if __name__ == "__main__":
    main()
