"""Cost curves of DP-SynRAG's non-model stages on the CPU: seconds and peak memory per stage and size.

For each corpus size n (a generated clinic-like corpus written to a CSV first), the stages run as
``run_dp_synrag`` runs them, private mode (OS-entropy noise, OpenDP's sampler), refinement off:

    load           core.corpus.load_corpus of the CSV (id, note columns)
    fingerprint    the dataset fingerprint (HMAC over the canonical unit list)
    keywords       keywords in vocabulary mode (the K rarest entries of V in each unit)
    histogram      the keyword histogram and its Gaussian release (|V| coordinates)
    clusters       topic words W from the release, soft clustering (inverted index)
    co_keywords    the co-keyword vote counts and their Gaussian release (R x 4R)
    row_bound      the Poisson subsample of every C_r at min(1, k / h'(w_r)) (docs/method.md §2.4.8)
    groups         the kept rows' prompts, tokenised with the tiny model's (SmolLM2) tokenizer
    prediction     (--prediction) private prediction with the tiny random model (T tokens; kept rows only)
    checkpoints    saving and loading the released histogram and co-keyword counts (JSON)
    export_write   writing the synthetic documents (synthetic.jsonl / .csv, at most R of them)

Peak memory: the largest resident set size seen during the stage (sampled every 5 ms) minus the
size when it started. The growth exponent of each stage is the slope of log(seconds) on log(n)
over the sizes run (1 = linear). Rows per group show that the prediction's work is flat in n.

    .venv/bin/python bench/scale.py --sizes 1000,10000,100000 [--json-out F] [--T 2]
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's core/, not an installed one

from core.common.checkpoints import Checkpoints
from core.corpus import dataset_fingerprint, load_corpus
from core.methods.base import MethodContext, SyntheticDoc
from core.methods.dp_synrag.release.clusters import (
    cluster_keyword_candidates, release_cluster_keywords, released_cluster_keywords, soft_clusters,
)
from core.methods.dp_synrag.release.histogram import release_histogram, topic_words
from core.methods.dp_synrag.release.keywords import extract_keywords
from core.methods.dp_synrag.write.private_rows import bounded_rows
from core.methods.private_prediction.groups import build_groups
from core.methods.private_prediction.prompts import answer_start, public_message
from core.methods.private_prediction.stage import private_prediction
from core.methods.dp_synrag.release.row_bound import cluster_counts
from core.methods.dp_synrag.vocab.vocabulary import load_vocabulary
from core.models.registry import load_language_model
from core.models.tiny import HashingEmbedder
from core.common.paths import resources_dir
from core.privacy.planner import STAGE_CLUSTER_KEYWORDS, STAGE_TOKENS
from core.methods.dp_synrag.release.budget import plan_dp_synrag
from core.common.progress import NULL_REPORTER
from core.specs.runspec import DPSynRAGSpec, ModelChoice

TASK = "Answer patients' questions about which disease matches their symptoms."
STAGES = ("load", "fingerprint", "keywords", "histogram", "clusters", "co_keywords", "row_bound", "groups",
          "prediction", "checkpoints", "export_write")


def _rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


@dataclass
class StageClock:
    seconds: dict[str, float] = field(default_factory=dict)
    peak_mb: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start_mb, peak = _rss_mb(), [0.0]
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(0.005):
                peak[0] = max(peak[0], _rss_mb())

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = time.perf_counter() - start
            stop.set()
            sampler.join()
            self.peak_mb[name] = max(0.0, max(peak[0], _rss_mb()) - start_mb)


def write_corpus(path: Path, n: int, seed: int = 11) -> None:
    """n clinic-like notes from an invented catalogue of 200 diseases (Dirichlet-skewed, like the demo)."""
    from core.demo.clinic import SYMPTOMS, make_disease_catalogue

    diseases = make_disease_catalogue(200, seed=seed, alpha=0.6)
    rng = np.random.default_rng(seed)
    shares = np.array([d.share for d in diseases])
    which = rng.choice(len(diseases), size=n, p=shares / shares.sum())
    ages = rng.integers(18, 95, size=n)
    extra = rng.integers(0, len(SYMPTOMS), size=n)
    openers = ("Seen today", "Clinic visit", "Follow-up", "New patient", "Walk-in")
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "note"])
        for i in range(n):
            d = diseases[which[i]]
            symptoms = ", ".join(d.symptoms[:-1]) + " and " + d.symptoms[-1]
            writer.writerow([f"note-{i:07d}", f"{openers[i % 5]}: patient aged {ages[i]}. Presenting symptoms were "
                             f"{symptoms}; also reports {SYMPTOMS[extra[i]]}. The findings are consistent with "
                             f"{d.name}; I prescribed {d.treatment}."])


def fitted_exponent(sizes: list[int], seconds: list[float]) -> float | None:
    """Slope of log(seconds) on log(n) (least squares); None with fewer than two sizes."""
    if len(sizes) < 2:
        return None
    x, y = np.log(sizes), np.log(np.maximum(seconds, 1e-6))
    return float(np.polyfit(x, y, 1)[0])


def run_size(n: int, spec: DPSynRAGSpec, llm, workdir: Path, predict: bool) -> dict:
    clock = StageClock()
    workdir.mkdir(parents=True, exist_ok=True)
    csv_path = workdir / f"corpus-{n}.csv"
    write_corpus(csv_path, n)
    vocab = load_vocabulary(spec.domain_lists)
    plan = plan_dp_synrag(spec, 10.0, 1e-6)
    charges: dict[str, float] = {}
    ctx = MethodContext(
        llm=llm, embedder=HashingEmbedder(), task=TASK,
        charge=lambda stage, rho, _d, delta_part=0.0: charges.__setitem__(stage, charges.get(stage, 0.0) + rho),
        reporter=NULL_REPORTER, checkpoints=Checkpoints(workdir / f"cp-{n}"), batch_rows=256,
    )
    with clock.stage("load"):
        corpus = load_corpus(csv_path, text_column="note", id_column="id", max_file_bytes=2_000_000_000)
    units = corpus.units
    with clock.stage("fingerprint"):
        dataset_fingerprint(corpus, key=b"scale-bench")
    with clock.stage("keywords"):
        keywords = extract_keywords(units, llm, vocab, spec.K, ctx, "vocabulary")
    with clock.stage("histogram"):
        noisy_hist = release_histogram(keywords, vocab, plan, ctx)
    with clock.stage("clusters"):
        W = topic_words(noisy_hist, vocab, spec.R, plan.sigma_h, spec.topic_words)
        clusters = soft_clusters(keywords, W, spec.L)
    with clock.stage("co_keywords"):
        candidates = cluster_keyword_candidates(noisy_hist, vocab, spec.R)
        noisy_counts = release_cluster_keywords(keywords, clusters, W, candidates, plan, ctx)
        related = released_cluster_keywords(noisy_counts, candidates, plan.M, plan.sigma_c)
    with clock.stage("row_bound"):
        rows = bounded_rows(clusters, cluster_counts(noisy_hist, vocab.index, W), spec, ctx)
    with clock.stage("groups"):
        messages = [public_message(spec.public_row, TASK, w, rel) for w, rel in zip(W, related)]
        starts = [answer_start(spec.answer_start, w, rel) for w, rel in zip(W, related)]
        groups = build_groups(rows, units, ctx, messages, starts)
    texts: dict[int, str] = {}
    if predict:
        with clock.stage("prediction"):
            texts = private_prediction(groups, plan.release(STAGE_TOKENS), spec, ctx)
    else:  # the model stage left out: the texts written are placeholders of the right number
        texts = {g.gid: "synthetic text" for g in groups}
        plan.release(STAGE_TOKENS).charge(ctx.charge)
    with clock.stage("checkpoints"):
        ctx.checkpoints.save("histogram", noisy_hist.tolist())
        ctx.checkpoints.save(STAGE_CLUSTER_KEYWORDS, noisy_counts.tolist())
        np.asarray(ctx.checkpoints.load("histogram"))
        np.asarray(ctx.checkpoints.load(STAGE_CLUSTER_KEYWORDS))
    with clock.stage("export_write"):
        from core.run.pipeline import write_synthetic

        docs = [SyntheticDoc(id=f"syn-{g:04d}", text=t, group=g) for g, t in sorted(texts.items())]
        (workdir / f"run-{n}").mkdir()
        write_synthetic(workdir / f"run-{n}", docs)
    sizes = [len(r) for r in rows]
    members = [len(c) for c in clusters]
    planned = plan.per_stage()
    assert set(charges) == set(planned) and all(math.isclose(charges[s], planned[s]) for s in planned)
    csv_path.unlink()
    return {
        "units": n,
        "clusters": len(W),
        "members_per_cluster_mean": round(float(np.mean(members)), 1) if members else 0.0,
        "members_per_cluster_max": max(members, default=0),
        "rows_per_group_mean": round(float(np.mean(sizes)), 1) if sizes else 0.0,
        "rows_per_group_max": max(sizes, default=0),
        "rows_total": int(sum(sizes)),
        "seconds": {k: round(v, 3) for k, v in clock.seconds.items()},
        "peak_mb": {k: round(v, 1) for k, v in clock.peak_mb.items()},
        "rss_mb_end": round(_rss_mb(), 1),
    }


def markdown_table(report: dict) -> str:
    """The scale table of docs/bench/scale.md: one row per stage, seconds and MB per size, and the fitted
    exponent over all sizes and over the sizes from 10^4 on (where fixed start-up costs matter less)."""
    runs = report["sizes"]
    sizes = [r["units"] for r in runs]
    big = [r for r in runs if r["units"] >= 10_000]
    head = "| stage | " + " | ".join(f"{n:,} units: s / MB" for n in sizes) + " | exponent | exponent from 10⁴ |"
    lines = [head, "|" + "---|" * (len(sizes) + 3)]
    for stage in STAGES:
        if not all(stage in r["seconds"] for r in runs):
            continue
        cells = [f"{r['seconds'][stage]:.2f} / {r['peak_mb'][stage]:.0f}" for r in runs]
        fits = [fitted_exponent([r["units"] for r in rs], [r["seconds"][stage] for r in rs]) for rs in (runs, big)]
        shown = [f"{f:.2f}" if f is not None else "-" for f in fits]
        lines.append(f"| {stage} | " + " | ".join(cells) + f" | {shown[0]} | {shown[1]} |")
    for key in ("clusters", "members_per_cluster_mean", "members_per_cluster_max", "rows_per_group_mean",
                "rows_per_group_max", "rows_total", "rss_mb_end"):
        lines.append(f"| *{key}* | " + " | ".join(str(r[key]) for r in runs) + " | | |")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--table":  # render a saved report as the Markdown table
        print(markdown_table(json.loads(Path(sys.argv[2]).read_text())))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--T", type=int, default=2, help="tokens per group in the prediction stage (tiny model)")
    parser.add_argument("--prediction", action="store_true", help="also run private prediction (tiny model, T tokens)")
    parser.add_argument("--row-bound", default="poisson", choices=("poisson", "none"))
    parser.add_argument("--warmup", type=int, default=300, help="units of a discarded first run (0 = none)")
    parser.add_argument("--json-out", default="")
    args = parser.parse_args()
    spec = DPSynRAGSpec(T=args.T, self_filter=False, row_bound=args.row_bound,
                        domain_lists=[str(resources_dir() / "vocab" / "medical_demo_domain.txt")])
    llm = load_language_model(ModelChoice(source="tiny-random", device="cpu"))
    sizes = [int(s) for s in args.sizes.split(",") if s]
    results = []
    with tempfile.TemporaryDirectory(prefix="privet-scale-") as tmp:
        os.environ.setdefault("PRIVET_HOME", str(Path(tmp) / "home"))
        if args.warmup:  # first calls (OpenDP, regexes, caches) are not part of any size's cost
            run_size(args.warmup, spec, llm, Path(tmp) / "warmup", args.prediction)
        for n in sizes:
            results.append(run_size(n, spec, llm, Path(tmp), args.prediction))
            print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    exponents = {s: fitted_exponent([r["units"] for r in results], [r["seconds"][s] for r in results])
                 for s in STAGES if all(s in r["seconds"] for r in results)}
    report = {
        "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": " ".join(["bench/scale.py", *sys.argv[1:]]),
        "spec": {k: getattr(spec, k) for k in ("K", "R", "L", "k", "T", "cluster_keywords", "row_bound", "keywords")},
        "sizes": results,
        "exponent": {k: (round(v, 2) if v is not None else None) for k, v in exponents.items()},
    }
    text = json.dumps(report, indent=1)
    print(text)
    if args.json_out:
        Path(args.json_out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
