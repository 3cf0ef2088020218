"""The writer at the machine's limit (issue 58): the product's writer on a released draw, against the same model's
plain batched decode, idle and with two busy processes beside it, in one run on one machine.

1. **A released draw.** A clinic file of ``--patients`` patients (``privet demo-data --patients N --seed 7``) and a
   minimal spec (ε = 10, the packaged model unless ``--model``) run through ``core.run.pipeline.run_pipeline`` up to the
   writing stage: the call to ``write_texts`` (``core/methods/dp_synrag/write/text.py``, step 4 of the algorithm) is
   captured with the arguments the pipeline gives it (the released shape, the released forms when they are followed,
   the loaded model) and the run stops there. Nothing is written by the pipeline; the ledger is a throw-away one
   (``PRIVET_HOME`` under ``--work``).
2. **writer** (idle): ``write_texts`` itself, as the pipeline calls it, on the first ``--documents`` documents of
   the released shape (fresh checkpoints each time), after a warm-up of two documents (its one-off start: the token
   tables, the released words' roles). Tokens/s = row-tokens the model decoded (every token appended to a logits
   session, second drafts and forced form wording included) / wall time, prefill included. The thread count is the
   writer's own choice (``core.models.threads``, chosen again at each batch).
3. **limit**: the writer's ``--limit-batches`` largest batches (the same prompts), decoded with no shaping at all,
   each row the writer's mean tokens per row of that batch, no end token: ``torch_session`` = the same torch model
   through its batched KV-cache session (the prompts' common prefix computed once, as the writer does; argmax),
   ``llamacpp`` = the same packaged GGUF through the llama.cpp backend's batched multi-sequence session (argmax;
   it shares no prefix), both on the threads the idle writer chose; with ``--with-generate`` also Hugging Face
   ``generate`` (greedy, ``min_new_tokens = max_new_tokens``, no shared prefix). The fastest is
   ``limit_tokens_per_s``.
4. **busy writer**: two ``python -c 'while True: pass'`` processes are started, the load average is given
   ``--busy-warmup`` seconds to see them, then the writer runs again as in 2 (its threads chosen from the free
   cores); the processes are killed at the end.

Writes ``--json-out`` (default ``docs/bench/writer-limit.json``) with ``writer_tokens_per_s``,
``limit_tokens_per_s``, ``busy_writer_tokens_per_s``, the ratios, the thread counts, the documents and seconds,
the extrapolation to 200 documents, the machine's cores and the command.

    .venv/bin/python bench/writer_limit.py [--patients 200] [--documents 32] [--busy-warmup 20] [--limit-batches 2]
        [--with-generate] [--skip llamacpp,torch,busy] [--model default|tiny-random] [--work DIR] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's core/, not an installed one

from core.common.checkpoints import Checkpoints  # noqa: E402
from core.models import threads  # noqa: E402
from core.common.progress import NULL_REPORTER  # noqa: E402

TASK = "Answer patients' questions about which disease matches their symptoms."
TARGETS = {"writer_over_limit": 0.7, "busy_over_idle": 0.4, "seconds_for_200_documents": 180.0}


class _StopAtWritingError(Exception):
    """Raised in place of the writing stage: the released draw is in hand."""


@dataclass
class Draw:
    """``write_texts``'s arguments as the pipeline passed them (``args``: units, shape, selected, counts, spec,
    plan, ctx, forms)."""

    args: tuple
    run_dir: Path

    @property
    def shape(self):
        return self.args[1]

    @property
    def ctx(self):
        return self.args[6]

    @property
    def forms(self):
        return self.args[7]


def released_draw(work: Path, patients: int, model: str) -> Draw:
    """Run the pipeline on a fresh clinic file up to its writing stage and keep what it would write from."""
    from core.demo.clinic import make_clinic_corpus
    from core.demo.files import write_clinic
    from core.methods.dp_synrag import algorithm
    from core.run.pipeline import run_pipeline
    from core.specs.runspec import ModelChoice, RunSpec

    write_clinic(make_clinic_corpus(patients, seed=7), work / "clinic")
    spec = RunSpec.from_dict({"method": "dp_synrag", "task": TASK, "privacy": {"epsilon": 10.0},
                              "data": {"path": str(work / "clinic" / "notes.csv"), "text_column": "note",
                                       "id_column": "id", "person_column": "patient",
                                       "dataset_name": f"writer-limit-{time.time_ns()}"}})
    if model != "default":
        spec.llm, spec.embedder = ModelChoice(source=model), ModelChoice(source=model)
    captured: dict[str, tuple] = {}

    def capture(*args: Any) -> None:
        captured["args"] = args
        raise _StopAtWritingError

    real = algorithm.write_texts
    algorithm.write_texts = capture  # type: ignore[assignment]
    try:
        run_pipeline(spec, NULL_REPORTER, run_dir=work / "run")
    except _StopAtWritingError:
        pass
    finally:
        algorithm.write_texts = real  # type: ignore[assignment]
    if "args" not in captured:
        raise SystemExit("the run ended before its writing stage (nothing released to write?)")
    return Draw(captured["args"], work / "run")


@dataclass
class Counted:
    """What the writer asked of the model: each logits session's prompts, rows appended and threads."""

    sessions: list[dict] = field(default_factory=list)
    original: Any = None

    def wrap(self, llm) -> None:
        start = llm.start_logits  # bound (or the instance's own, kept by unwrap)
        self.original = llm.__dict__.get("start_logits")
        counted = self

        class Session:
            def __init__(self, inner, record: dict) -> None:
                self._inner, self._record = inner, record

            def __getattr__(self, name: str):
                return getattr(self._inner, name)

            @property
            def n_rows(self) -> int:
                return self._inner.n_rows

            def append(self, tokens: torch.Tensor) -> None:
                self._record["row_tokens"] += int(tokens.shape[0])
                self._inner.append(tokens)

        def start_logits(prompt_ids, *args, **kwargs):
            record = {"prompts": [list(p) for p in prompt_ids], "row_tokens": 0, "threads": torch.get_num_threads()}
            counted.sessions.append(record)
            return Session(start(prompt_ids, *args, **kwargs), record)

        llm.start_logits = start_logits  # the instance's: generate() and the writers find it too

    @property
    def row_tokens(self) -> int:
        return sum(s["row_tokens"] for s in self.sessions)


    def unwrap(self, llm) -> None:
        if self.original is not None:
            llm.start_logits = self.original
        else:
            llm.__dict__.pop("start_logits", None)


def write_once(draw: Draw, documents: int, folder: Path) -> dict:
    """The product's writing stage (``write_texts``) on the first ``documents`` documents of the draw."""
    from core.methods.dp_synrag.write.text import write_texts

    units, shape, selected, counts, spec, plan, ctx, form = draw.args
    n = min(documents, len(shape.documents))
    shape = replace(shape, documents=shape.documents[:n], groups=shape.groups[:n])
    ctx = replace(ctx, checkpoints=Checkpoints(folder), reporter=NULL_REPORTER)
    counted = Counted()
    counted.wrap(ctx.llm)
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    try:
        texts = write_texts(units, shape, selected, counts, spec, plan, ctx, form)
    finally:
        counted.unwrap(ctx.llm)
    seconds = time.perf_counter() - start
    tokenizer = ctx.llm.chat.tokenizer
    doc_tokens = sum(len(tokenizer.encode(t, add_special_tokens=False)) for t in texts.values())
    thread_counts = sorted({s["threads"] for s in counted.sessions})
    return {
        "documents": n,
        "documents_kept": len(texts),
        "seconds": round(seconds, 2),
        "row_tokens": counted.row_tokens,
        "tokens_per_s": round(counted.row_tokens / seconds, 2) if seconds > 0 else 0.0,
        "document_tokens": doc_tokens,
        "document_tokens_per_s": round(doc_tokens / seconds, 2) if seconds > 0 else 0.0,
        "sessions": len(counted.sessions),
        "threads": thread_counts,
        "load_average_before": round(load_before, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
        "_sessions": counted.sessions,
        "sample": next(iter(texts.values()), ""),
    }


def replay_batches(sessions: list[dict], most: int = 0) -> list[tuple[list[list[int]], int]]:
    """The writer's batches as plain decoding work: each session's prompts and its mean tokens per row; with
    ``most`` > 0, only that many of its largest batches (the rate is per token: a few batches measure it)."""
    work = [s for s in sessions if s["prompts"] and s["row_tokens"]]
    if most > 0:
        work = sorted(work, key=lambda s: -s["row_tokens"])[:most]
    return [(s["prompts"], max(math.ceil(s["row_tokens"] / len(s["prompts"])), 1)) for s in work]


def limit_torch(llm, batches: list[tuple[list[list[int]], int]]) -> dict:
    """Hugging Face ``generate`` on the writer's prompts: greedy, exactly T tokens a row, no shaping."""
    from core.models.transformers_backend import left_pad

    tokens, start = 0, time.perf_counter()
    for prompts, T in batches:
        ids, mask = left_pad(prompts, llm.chat.pad_token_id, llm.device)
        with torch.inference_mode():
            llm.model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=T, min_new_tokens=T,
                               do_sample=False, temperature=None, top_p=None, top_k=None, use_cache=True,
                               pad_token_id=llm.chat.pad_token_id)
        tokens += len(prompts) * T
    seconds = time.perf_counter() - start
    return {"seconds": round(seconds, 2), "row_tokens": tokens, "tokens_per_s": round(tokens / max(seconds, 1e-9), 2),
            "threads": torch.get_num_threads()}


def limit_session(llm, batches: list[tuple[list[list[int]], int]]) -> dict:
    """A backend's batched logits session (prefill, the prompts' common prefix once as the writer does, then one
    token per row per step, argmax), no shaping."""
    from core.methods.dp_synrag.write.public_decoding import common_prefix

    tokens, start = 0, time.perf_counter()
    for prompts, T in batches:
        session = llm.start_logits(prompts, shared_prefix=common_prefix(prompts))
        for step in range(T):
            chosen = session.logits().argmax(dim=-1)
            tokens += len(prompts)
            if step < T - 1:
                session.append(chosen)
    seconds = time.perf_counter() - start
    return {"seconds": round(seconds, 2), "row_tokens": tokens, "tokens_per_s": round(tokens / max(seconds, 1e-9), 2)}


def busy_processes(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def ratio(a: float, b: float) -> float | None:
    return round(a / b, 3) if b else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--patients", type=int, default=200, help="the clinic file's patients (the released draw)")
    parser.add_argument("--documents", type=int, default=32,
                        help="documents written per measurement (a run of 200 writes batches of 16 per demonstration "
                             "of the shipped form, 4 of them: 64 documents fill them, at twice the time)")
    parser.add_argument("--busy-warmup", type=float, default=20.0,
                        help="seconds the busy processes run before the busy writer starts")
    parser.add_argument("--busy", type=int, default=2, help="busy processes beside the busy writer")
    parser.add_argument("--limit-batches", type=int, default=2,
                        help="the writer's largest batches the limits replay (0: all of them)")
    parser.add_argument("--with-generate", action="store_true",
                        help="also Hugging Face generate as a torch limit (no shared prefix: slow on the CPU)")
    parser.add_argument("--skip", default="", help="comma-separated: llamacpp, torch, busy")
    parser.add_argument("--model", default="default", choices=("default", "tiny-random"),
                        help="tiny-random: a dry check of the bench itself (no limit from llama.cpp)")
    parser.add_argument("--work", type=Path, default=None, help="keep the run folder and data folder here")
    parser.add_argument("--json-out", type=Path, default=ROOT / "docs" / "bench" / "writer-limit.json")
    args = parser.parse_args(argv)
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    command = " ".join(shlex.quote(a) for a in [".venv/bin/python", "bench/writer_limit.py", *(argv or sys.argv[1:])])
    tmp = tempfile.TemporaryDirectory(prefix="privet-writer-limit-")
    work = (args.work or Path(tmp.name)).resolve()
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("PRIVET_MODEL_CACHE", str(Path.home() / ".local/share/privet/cache/models"))
    os.environ["PRIVET_HOME"] = str(work / "home")  # a throw-away ledger; the converted models' cache is kept
    t0 = time.perf_counter()

    draw = released_draw(work, args.patients, args.model)
    llm = draw.ctx.llm
    print(f"released draw: {len(draw.shape.documents)} documents, forms followed: {draw.forms is not None} "
          f"({time.perf_counter() - t0:.0f} s)", flush=True)
    warm = write_once(draw, 2, work / "warm")
    print(f"warm-up: {warm['seconds']} s for 2 documents", flush=True)
    idle = write_once(draw, args.documents, work / "idle")
    idle_choice = threads.choose_threads(threads._setting)
    print(f"writer: {idle['tokens_per_s']} tok/s, {idle['documents']} documents in {idle['seconds']} s, "
          f"threads {idle['threads']}", flush=True)
    batches = replay_batches(idle["_sessions"], args.limit_batches)
    limits: dict[str, dict] = {}
    limit_threads = max(idle["threads"])
    if "torch" not in skip:
        threads.apply_threads(limit_threads)
        limits["torch_session"] = {**limit_session(llm, batches), "threads": limit_threads}
        print(f"limit torch session: {limits['torch_session']}", flush=True)
    if args.with_generate:
        threads.apply_threads(limit_threads)
        limits["torch_generate"] = limit_torch(llm, batches)
        print(f"limit torch generate: {limits['torch_generate']}", flush=True)
    if "llamacpp" not in skip and args.model == "default":
        from core.models.registry import load_language_model
        from core.specs.runspec import ModelChoice

        threads.apply_threads(limit_threads)
        gguf = load_language_model(ModelChoice(source="default", backend="llamacpp", device="cpu"))
        gguf.set_threads(limit_threads)
        limit_session(gguf, [(batches[0][0], 2)])  # its contexts made once, as a writer's first batch would
        limits["llamacpp"] = {**limit_session(gguf, batches), "threads": limit_threads,
                              "weights": Path(gguf.weights_file).name}
        gguf.close()
        print(f"limit llama.cpp: {limits['llamacpp']}", flush=True)
    best = max(limits, key=lambda k: limits[k]["tokens_per_s"]) if limits else ""
    limit = limits[best]["tokens_per_s"] if best else 0.0

    busy: dict | None = None
    busy_choice = None
    if "busy" not in skip:
        threads.choose_threads(threads._setting)  # this process's own share of the load sampled before they start
        hogs = busy_processes(args.busy)
        try:
            time.sleep(args.busy_warmup)
            busy_choice = threads.choose_threads(threads._setting)
            busy = write_once(draw, args.documents, work / "busy")
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()
        print(f"busy writer: {busy['tokens_per_s']} tok/s in {busy['seconds']} s, threads {busy['threads']}",
              flush=True)

    per_document = idle["seconds"] / max(idle["documents"], 1)
    for_200 = warm["seconds"] + 200 * per_document
    report = {
        "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": command,
        "machine": {"cores": os.cpu_count(), "usable_cores": threads.usable_cores(),
                    "torch": torch.__version__},
        "model": llm.name,
        "backend": type(llm).__name__,
        "released_draw": {"patients": args.patients, "documents_released": len(draw.shape.documents),
                          "forms_followed": draw.forms is not None,
                          "writer": "FormWriter (released forms)" if draw.forms is not None else "realise (shipped form)"},
        "documents": idle["documents"],
        "writer_tokens_per_s": idle["tokens_per_s"],
        "limit_tokens_per_s": limit,
        "limit_backend": best,
        "busy_writer_tokens_per_s": busy["tokens_per_s"] if busy else None,
        "writer_over_limit": ratio(idle["tokens_per_s"], limit),
        "busy_over_idle": ratio(busy["tokens_per_s"], idle["tokens_per_s"]) if busy else None,
        "threads": {"idle": idle["threads"], "busy": busy["threads"] if busy else None, "limit": limit_threads,
                    "idle_choice": idle_choice.words(), "busy_choice": busy_choice.words() if busy_choice else None},
        "seconds": {"idle": idle["seconds"], "busy": busy["seconds"] if busy else None, "warm_up_2_documents": warm["seconds"],
                    "whole_bench": round(time.perf_counter() - t0, 1)},
        "seconds_for_200_documents_idle": round(for_200, 1),
        "extrapolation": (f"warm-up {warm['seconds']:.0f} s + 200 x {per_document:.2f} s a document measured on "
                          f"{idle['documents']} documents (batches fill better at 200, so this is an upper bound "
                          "unless the machine is busier)"),
        "targets": TARGETS,
        "writer": {k: v for k, v in idle.items() if not k.startswith("_")},
        "busy_writer": {k: v for k, v in busy.items() if not k.startswith("_")} if busy else None,
        "limits": limits,
        "busy_processes": args.busy if busy else 0,
        "busy_warmup_s": args.busy_warmup if busy else 0,
    }
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    if args.json_out:
        args.json_out.write_text(text + "\n", encoding="utf-8")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
