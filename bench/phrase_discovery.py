"""DP phrase discovery on the demo clinic corpus (issue 23 item 7): retrieval proxy with and without the
demo domain list and with discovery on or off, the released phrases of each run verbatim, and whether
any member name or canary was released as a phrase.

Demo scale of ``privet evaluate`` (240 members with 3 planted canaries, packaged SmolLM2 / MiniLM, the
demo DP-SynRAG settings), DP-SynRAG only, and only the model-independent retrieval proxy (does retrieval
over the synthetic corpus surface the gold disease name), so it fits a small shared machine::

    python -m bench.phrase_discovery --out /tmp/phrases.json [--configs nolist-on:10,nolist-on:4,list-off:10,list-on:10]

Each run draws its own noise from OS entropy, so figures vary from run to run.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from core.common.checkpoints import Checkpoints
from core.evaluation import runs
from core.evaluation.config import make_config
from core.evaluation.data import prepare_data
from core.evaluation.retrieval import VectorIndex
from core.evaluation.utility import hit_rate, retrieval_hits
from core.models.registry import load_embedder, load_language_model

DEFAULT_CONFIGS = "nolist-on:10,list-off:10,list-on:10,nolist-on:4"


def run_one(name: str, eps: float, shared: dict, work: Path) -> dict:
    lists, phrases = name.split("-")
    config = make_config("clinic", work, "demo", (eps,), ("dp_synrag",), domain_list=lists == "list",
                         discover_phrases=phrases == "on")
    data = shared["data"]
    t0 = time.monotonic()
    corpus = runs.generate(config, data.members_csv, "dp_synrag", eps, work, shared["llm"], shared["embedder"])
    seconds = time.monotonic() - t0
    index = VectorIndex.build(corpus.texts, shared["embedder"])
    golds = [q.answers for q in data.benign]
    proxy = hit_rate(retrieval_hits(index.retrieve(shared["benign_emb"], config.scale.top_k), golds)) if corpus.texts else 0.0
    run_dir = work / "runs" / runs.label_of("dp_synrag", eps).replace(" ", "_").replace("ε=", "eps")
    released: list[str] = []
    for folder in (run_dir / "checkpoints", run_dir / "checkpoints" / "dp_synrag"):
        cp = Checkpoints(folder)
        if cp.has("phrases"):
            released = [str(p) for p in cp.load("phrases")]
    member_words = {w.lower() for n in data.member_names for w in n.split()}
    canary_words = {w.lower() for n in data.canaries for w in n.split()}
    return {
        "config": name,
        "epsilon": eps,
        "documents": len(corpus.texts),
        "retrieval_proxy": proxy,
        "seconds": round(seconds, 1),
        "released_phrases": released,
        "phrases_with_a_member_name_word": [p for p in released if set(p.split()) & member_words],
        "phrases_with_a_canary_word": [p for p in released if set(p.split()) & canary_words],
        "texts": corpus.texts,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--configs", default=DEFAULT_CONFIGS)
    args = parser.parse_args(argv)
    base = make_config("clinic", args.out.parent, "demo", (10.0,), ("dp_synrag",))
    scale = base.scale
    root = Path(tempfile.mkdtemp(prefix="privet-phrases-"))
    data = prepare_data(base.dataset, scale.max_members, scale.canaries, scale.benign_questions,
                        scale.attack_questions, root / "data")
    llm = runs.GreedyCache(load_language_model(scale.llm))
    embedder = load_embedder(scale.embedder)
    shared = {"data": data, "llm": llm, "embedder": embedder,
              "benign_emb": embedder.embed([q.question for q in data.benign])}
    results = []
    for item in args.configs.split(","):
        name, eps = item.split(":")
        results.append(run_one(name, float(eps), shared, root / name.replace(":", "_") / eps))
        args.out.write_text(json.dumps({"runs": results, "members": len(data.members),
                                        "questions": len(data.benign)}, indent=2, ensure_ascii=False), encoding="utf-8")
        r = results[-1]
        print(f"{name} eps={eps}: proxy {r['retrieval_proxy']:.2f}, {r['documents']} docs, "
              f"{len(r['released_phrases'])} phrases, {r['seconds']:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
