"""The GPU check's Python half (bench/gpu_check.sh runs it after the CUDA tests).

Steps, each timed; any failure stops the check with a non-zero exit:

1. ``oom``       — forced out-of-memory halving on the real GPU: this process is capped to a small
                   slice of the GPU (``torch.cuda.set_per_process_memory_fraction``) and the engine is
                   given a memory budget far too large (4096 rows of the packaged model), so the first
                   wave runs out of memory; the engine must halve until the wave fits and finish every group.
2. ``dp_synrag`` — a timed DP-SynRAG run at the seed's defaults (K=10, R=500, L=5, k=80, T=70) on a
                   generated 8,000-note clinic corpus with the packaged model on CUDA (bf16), in the
                   non-private test mode (nothing is exported; the ledger is a throw-away one).

Prints ONE JSON line of figures (and writes it to --json-out).

    python bench/gpu_check.py --bench-json bench.json --json-out gpu_check.json [--units 8000]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's core/, not an installed one

from core.methods.private_prediction import EngineConfig, PredictionGroup, PrivatePredictionEngine
from core.models.registry import load_language_model
from core.privacy.mechanisms import TokenSampler
from core.runspec import ModelChoice


def fail(step: str, what: str) -> None:
    print(f"GPU CHECK FAILED at {step}: {what}", file=sys.stderr)
    sys.exit(1)


def forced_oom_halving(budget_rows: int = 4096, fraction: float = 0.08) -> dict:
    llm = load_language_model(ModelChoice(source="default", backend="transformers", device="cuda"))
    if next(llm.model.parameters()).dtype != torch.bfloat16 and torch.cuda.is_bf16_supported():
        fail("oom", "the model is not in bf16 on a bf16-capable GPU")
    torch.cuda.empty_cache()
    torch.cuda.set_per_process_memory_fraction(fraction)
    prompt = llm.chat_prompt_ids(["Patient note: " + "fever, cough and a rash since Monday. " * 40], 256)[0]
    rows_per_group = 16
    groups = [PredictionGroup(g, tuple(tuple(prompt) for _ in range(rows_per_group))) for g in range(budget_rows // rows_per_group)]
    engine = PrivatePredictionEngine(llm, EngineConfig(8, 0.116, 1.0, max_rows=budget_rows), TokenSampler(1.0))
    start = time.perf_counter()
    results = engine.run(groups)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    torch.cuda.set_per_process_memory_fraction(1.0)
    if engine.config.max_rows >= budget_rows:
        fail("oom", f"the first wave of {budget_rows} rows did not run out of memory (cap {fraction:.0%} of the GPU)")
    if sorted(results) != [g.gid for g in groups]:
        fail("oom", "not every group finished after halving")
    return {"budget_rows": budget_rows, "rows_after_halving": engine.config.max_rows, "groups": len(results),
            "memory_fraction": fraction, "seconds": round(seconds, 1)}


def dp_synrag_run(units: int, workdir: Path) -> dict:
    from core.demo.generate import make_clinic_corpus, write_clinic
    from core.pipeline import run_pipeline
    from core.progress import CallbackReporter
    from core.runspec import RunSpec

    start = time.perf_counter()
    write_clinic(make_clinic_corpus(n_patients=units, n_questions=10), workdir / "clinic")
    generate_s = time.perf_counter() - start

    spec = RunSpec()
    spec.data.path = str(workdir / "clinic" / "notes.csv")
    spec.data.text_column, spec.data.id_column = "note", "id"
    spec.llm = ModelChoice(source="default", backend="transformers", device="cuda")
    spec.embedder = ModelChoice(source="default", device="cuda")
    for key, value in {"K": 10, "R": 500, "L": 5, "k": 80, "T": 70}.items():
        setattr(spec.dp_synrag, key, value)
    spec.test_mode_seed = 1  # NON-PRIVATE test mode: nothing leaves the throw-away run folder

    stage_times: dict[str, list[float]] = {}

    def on_event(event) -> None:
        now = time.perf_counter()
        span = stage_times.setdefault(event.stage, [now, now])
        span[1] = now

    start = time.perf_counter()
    result = run_pipeline(spec, CallbackReporter(on_event), run_dir=workdir / "run")
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    return {
        "units": units,
        "seconds": round(seconds, 1),
        "corpus_generation_s": round(generate_s, 1),
        "synthetic_documents": result.n_synthetic,
        "stage_seconds": {s: round(b - a, 1) for s, (a, b) in stage_times.items() if s not in ("run",)},
        "peak_gpu_memory_gb": round(torch.cuda.max_memory_allocated() / 2**30, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--units", type=int, default=8000)
    parser.add_argument("--bench-json", default="", help="the engine benchmark's JSON report, folded into the line")
    parser.add_argument("--tests", default="", help="the CUDA tests' result line, folded into the line")
    parser.add_argument("--json-out", default="")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        fail("start", "torch sees no CUDA device (is the CUDA build of torch installed?)")

    figures: dict = {
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cuda_tests": args.tests,
    }
    if args.bench_json:
        bench = json.loads(Path(args.bench_json).read_text())
        figures["bench"] = {k: bench[k] for k in ("dtype", "rows", "tokens", "row_tokens_per_s",
                                                  "engine_over_hf_generate", "engine_over_dp_rag_style") if k in bench}
    with tempfile.TemporaryDirectory(prefix="privet-gpu-check-") as tmp:
        os.environ["PRIVET_HOME"] = str(Path(tmp) / "home")  # a throw-away ledger and run folder
        figures["oom"] = forced_oom_halving()
        figures["dp_synrag"] = dp_synrag_run(args.units, Path(tmp))
    line = json.dumps(figures, separators=(",", ":"))
    print(line)
    if args.json_out:
        Path(args.json_out).write_text(line + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
