"""Regenerate the shipped public demo corpora: ``python -m core.demo.generate``.

Everything here is *public* demo data, so fixed seeds are allowed and generation is
deterministic: the same arguments give byte-identical files (for a given Faker version).

The pieces: core/demo/draws.py (the seed and the random streams), core/demo/clinic.py (the demo clinic, docs/method.md
§5), core/demo/forms.py (discharge summaries and triage notes in templates of their own, issue 55),
core/demo/movielens.py (one document per MovieLens user) and core/demo/files.py (a corpus's folder). This module writes
resources/demo/{clinic,movielens,discharge,triage}, the demo domain list and MANIFEST.json.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from core.common.paths import resources_dir
from core.demo.clinic import clinic_domain_words, make_clinic_corpus
from core.demo.draws import DEMO_SEED
from core.demo.files import write_clinic, write_lines, write_movielens
from core.demo.forms import FORM_KINDS, make_form_corpus
from core.demo.movielens import make_movielens_corpus

HERE = resources_dir() / "demo"  # the shipped demo corpora (core.common.paths locates resources)


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def faker_version() -> str:
    from importlib.metadata import version

    return version("faker")


def regenerate_shipped(demo_dir: Path = HERE, vocab_dir: Path = HERE.parent / "vocab") -> list[Path]:
    """Regenerate resources/demo/{clinic,movielens,discharge,triage}, the demo domain list and MANIFEST.json."""
    clinic = make_clinic_corpus()
    written = write_clinic(clinic, demo_dir / "clinic")
    domain = vocab_dir / "medical_demo_domain.txt"
    write_lines(domain, ["# Public domain word list for the demo clinic corpus (core/demo/generate.py).",
                          *clinic_domain_words(clinic.diseases)])
    written += write_movielens(make_movielens_corpus(), demo_dir / "movielens")
    for kind in FORM_KINDS:
        written += write_clinic(make_form_corpus(kind), demo_dir / kind)
    written.append(domain)
    root = demo_dir.parent.parent
    manifest = {"seed": DEMO_SEED, "faker": faker_version(),
                "files": {str(p.relative_to(root)): sha256_file(p) for p in written}}
    manifest_path = demo_dir / "MANIFEST.json"
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return [*written, manifest_path]


if __name__ == "__main__":
    for written_path in regenerate_shipped():
        print(f"wrote {written_path}")
