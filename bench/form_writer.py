"""The writer in the corpus's own released forms, on a run's checkpointed release (docs/method.md §2.6b).

Reads a run folder's released forms (``form_skeletons.json``) and corpus shape (``corpus-shape.json``), both DP
outputs, and writes the documents again with the packaged model, timing the writing stage alone. Writes the texts and
the speed as JSON (public: released values and what the writer made of them)::

    .venv/bin/python bench/form_writer.py RUN_DIR --out /tmp/forms.json [--documents 64] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np
import torch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--documents", type=int, default=0, help="the first N documents of the shape (0: all)")
    parser.add_argument("--task", default="Answer questions about the documents of this collection.")
    parser.add_argument("--threads", type=int, default=0, help="threads (0: the free cores, as a run chooses them)")
    parser.add_argument("--batch", type=int, default=0, help="rows per batch (0: the writer's default)")
    parser.add_argument("--backend", default="transformers", choices=("transformers", "llama.cpp"))
    args = parser.parse_args()

    from core.methods.dp_synrag.write.form_writer import BATCH, FormWriter, assign_forms
    from core.methods.dp_synrag.write.slot_fillers import released_roles
    from core.methods.dp_synrag.shape.corpus_shape import CorpusShape
    from core.methods.dp_synrag.release.structure import ReleasedForms
    from core.models.registry import load_language_model
    from core.specs.runspec import ModelChoice

    from core.models import threads

    threads.configure(args.threads)  # the writer chooses its threads at each batch: 0 = the free cores, N = N
    threads.match_free_cores()
    saved = args.run_dir / "checkpoints" / "dp_synrag"
    released = json.loads((saved / "form_skeletons.json").read_text())
    forms = ReleasedForms(tuple(released["items"]), tuple(float(c) for c in released["counts"]))
    shape = CorpusShape.from_dict(json.loads((saved / "corpus-shape.json").read_text())["shape"])
    topics = list(shape.documents)[: args.documents or None]
    llm = load_language_model(ModelChoice(source="default", backend=args.backend, device="cpu"))
    roles = released_roles(llm, sorted({w for t in topics for w in t.words}))
    writer = FormWriter(llm, torch.Generator(), random.Random(), roles)
    skeletons = assign_forms(forms, len(topics), np.random.default_rng())
    start = time.perf_counter()
    texts = writer.write(args.task, skeletons, [(t.keyword, t.related) for t in topics], batch=args.batch or BATCH)
    seconds = time.perf_counter() - start
    tokens = sum(len(llm.chat.tokenizer.encode(t, add_special_tokens=False)) for t in texts)
    args.out.write_text(json.dumps({
        "documents": len(texts), "seconds": seconds, "tokens": tokens, "tokens_per_s": tokens / seconds,
        "threads": torch.get_num_threads(), "backend": args.backend,
        "texts": [{"form": s, "topic": [t.keyword, *t.related], "text": x} for s, t, x in zip(skeletons, topics, texts)],
    }, indent=1))
    print(f"{len(texts)} documents, {tokens} tokens in {seconds:.1f} s ({tokens / seconds:.1f} tok/s, "
          f"{torch.get_num_threads()} threads)")


if __name__ == "__main__":
    main()
