"""The same released draw gives the same documents (issue 59): test-mode runs on the tiny models, with fixed public
seeds, compared with the documents they wrote before DP-SynRAG's modules were split by Algorithm 1's steps
(``snapshots/same_draw.json``, written by this file's ``main`` at main a5dfd51, before the split).

A change meant to alter what the writer writes (a new rule, a new decoding step) rewrites the snapshot on purpose:
``python -m tests.methods.dp_synrag.test_same_draw_same_documents`` from the repository root."""

from __future__ import annotations

import json
import random
from pathlib import Path

import torch

from tests.helpers import tiny_spec

SNAPSHOT = Path(__file__).parent / "snapshots" / "same_draw.json"
SKELETON = "Seen today: [name], [number]. Presenting symptoms were [text]. Plan: start [text] [number] mg for [month]."


def _run(tmp_path: Path, **dp: object) -> list[dict]:
    from core.run.pipeline import run_pipeline

    spec = tiny_spec(tmp_path, text="realised", T=24, **dp)
    spec.test_mode_seed = 1234  # NON-PRIVATE test mode: every draw (noise, sampling) from fixed seeds
    result = run_pipeline(spec)
    return [json.loads(line) for line in result.synthetic_path.read_text().splitlines()]


def _form_writer_texts() -> list[str]:
    from core.methods.dp_synrag.write.form_writer import FormWriter
    from core.models.registry import packaged_tokenizer
    from core.models.tiny import build_tiny_language_model

    writer = FormWriter(build_tiny_language_model(packaged_tokenizer()), torch.Generator().manual_seed(3),
                        random.Random(3))
    return writer.write("Answer questions about symptoms.", [SKELETON] * 3, [("vemrenopathy", ("hives",))] * 3,
                        batch=2)


def written(tmp_path: Path) -> dict[str, object]:
    """What the writer writes: in the corpus's own released forms, in the shipped form (realisation), and from one
    fixed released skeleton."""
    (tmp_path / "forms").mkdir()
    (tmp_path / "shipped").mkdir()
    return {
        "own_forms": _run(tmp_path / "forms"),
        "shipped_form": _run(tmp_path / "shipped", discover_forms=False),
        "form_writer": _form_writer_texts(),
    }


ONE_THREAD = "1"  # the models on one thread whatever the load: two threads sum in another order (other sampled tokens)


def test_the_same_released_draw_gives_the_same_documents(tmp_path, monkeypatch):
    monkeypatch.setenv("PRIVET_THREADS", ONE_THREAD)
    assert written(tmp_path) == json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def main() -> None:  # pragma: no cover - rewrites the snapshot on purpose
    import os
    import tempfile

    os.environ["PRIVET_THREADS"] = ONE_THREAD
    with tempfile.TemporaryDirectory() as folder:
        SNAPSHOT.write_text(json.dumps(written(Path(folder)), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
