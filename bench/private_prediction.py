"""Benchmark: the private-prediction engine against what a user would pick instead.

Measured side by side in one run, on the same rows (the same demo notes, the same prompt ids):

engine        ``PrivatePredictionEngine`` on the transformers backend: KV cache, clipping,
              segment-sum, one sample per group from softmax(z/tau) over the whole vocabulary,
              the group's token appended to all its rows; all groups share one batch, and the
              public template's first tokens are prefilled once for all rows (as DP-SynRAG runs).
hf_generate   plain batched decoding of the same rows with Hugging Face ``generate`` (the honest
              ceiling): left-padded batch, KV cache, ``do_sample=True, top_k=0, top_p=1.0,
              temperature=1.0`` (full-vocabulary sampling, like the engine) and
              ``min_new_tokens = max_new_tokens`` so every row decodes exactly T tokens.
dp_rag_style  a DP-RAG-style loop: HF ``generate`` over ONE group's rows at a time, with a logits
              processor that clips every row, sums them, samples one token from softmax(z/tau) and
              forces it on every row of the group.
naive         no cache: every step re-runs the model over each row's full prefix (fewer steps;
              its rate is per row-token, so the ratio is fair).
llamacpp      ``PrivatePredictionEngine`` on the llama.cpp backend (batched multi-sequence session)
              with the packaged GGUF (Q4_1) itself, on the same prompt ids.

Every variant runs the full T steps (EOS is never sampled), so the row-token counts are equal.
Row-tokens/s = rows x generated tokens / wall time, prefill included.

    .venv/bin/python bench/private_prediction.py [--groups 6] [--rows 8] [--tokens 32] [--device cpu]
        [--skip llamacpp,naive] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's core/, not an installed one

from core.methods.private_prediction.prompts import template_prefix_length
from core.methods.private_prediction import EngineConfig, PredictionGroup, PrivatePredictionEngine
from core.models.registry import load_language_model
from core.models.transformers_backend import left_pad
from core.common.paths import resources_dir
from core.privacy.mechanisms import TokenSampler, clip_logits
from core.common.prompts import render
from core.specs.runspec import ModelChoice

CLIP, TAU = 0.116, 1.0
VARIANTS = ("engine", "hf_generate", "dp_rag_style", "naive", "llamacpp")


def demo_groups(llm, n_groups: int, rows: int, max_prompt_tokens: int) -> list[PredictionGroup]:
    path = resources_dir() / "demo" / "clinic" / "notes.csv"
    with open(path, encoding="utf-8") as handle:
        notes = [r["note"] for r in csv.DictReader(handle)][: n_groups * rows]
    prompts = llm.chat_prompt_ids([render("rephrase", document=n) for n in notes], max_prompt_tokens)
    return [
        PredictionGroup(g, tuple(tuple(p) for p in prompts[g * rows : (g + 1) * rows])) for g in range(n_groups)
    ]


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def run_engine(llm, groups, T: int) -> float:
    config = EngineConfig(
        max_new_tokens=T,
        clip=CLIP,
        tau=TAU,
        max_rows=sum(len(g.prompt_ids) for g in groups),
        shared_prefix=template_prefix_length(llm),  # as DP-SynRAG runs it (llama.cpp: not used yet)
        force_length=True,  # EOS never sampled: every group runs the full T steps
    )
    engine = PrivatePredictionEngine(llm, config, TokenSampler(TAU))
    start = time.perf_counter()
    engine.run(groups)
    _sync(llm.device)
    return time.perf_counter() - start


def run_hf_generate(llm, groups, T: int) -> float:
    prompts = [p for g in groups for p in g.prompt_ids]
    ids, mask = left_pad(prompts, llm.chat.pad_token_id, llm.device)
    start = time.perf_counter()
    with torch.inference_mode():
        out = llm.model.generate(
            input_ids=ids,
            attention_mask=mask,
            max_new_tokens=T,
            min_new_tokens=T,
            do_sample=True,
            top_k=0,
            top_p=1.0,
            temperature=1.0,
            use_cache=True,
            pad_token_id=llm.chat.pad_token_id,
        )
    _sync(llm.device)
    elapsed = time.perf_counter() - start
    assert out.shape[1] == ids.shape[1] + T, "HF generate did not decode exactly T tokens"
    return elapsed


class AggregateOneGroup:
    """DP-RAG-style logits processor: clip each row, sum, sample one token, force it on every row."""

    def __init__(self, sampler: TokenSampler, eos: frozenset[int]):
        self.sampler = sampler
        self.eos = sorted(eos)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        z = clip_logits(scores.float(), CLIP).sum(dim=0, keepdim=True)
        z[:, self.eos] = -1e9
        token = self.sampler.sample(z).to(scores.device)
        forced = torch.full_like(scores, float("-inf"))
        forced[:, token] = 0.0
        return forced


def run_dp_rag_style(llm, groups, T: int) -> float:
    from transformers import LogitsProcessorList

    processor = LogitsProcessorList([AggregateOneGroup(TokenSampler(TAU), llm.eos_token_ids)])
    start = time.perf_counter()
    for group in groups:
        ids, mask = left_pad(group.prompt_ids, llm.chat.pad_token_id, llm.device)
        with torch.inference_mode():
            llm.model.generate(
                input_ids=ids,
                attention_mask=mask,
                max_new_tokens=T,
                min_new_tokens=T,
                do_sample=False,  # the processor already sampled: greedy takes the forced token
                top_k=None,
                top_p=None,
                temperature=None,
                logits_processor=processor,
                use_cache=True,
                pad_token_id=llm.chat.pad_token_id,
            )
    _sync(llm.device)
    return time.perf_counter() - start


def run_naive(llm, groups, T: int) -> float:
    prefixes = [list(p) for g in groups for p in g.prompt_ids]
    start = time.perf_counter()
    for _ in range(T):
        for row in prefixes:
            logits = llm.start_logits([row]).logits()
            row.append(int(logits.argmax(dim=-1)[0]))
    _sync(llm.device)
    return time.perf_counter() - start


def run_llamacpp(device: str, groups, T: int) -> tuple[float, str]:
    llm = load_language_model(ModelChoice(source="default", backend="llamacpp", device=device))
    run_engine(llm, groups[:1], 2)  # warm-up: builds the batch context
    return run_engine(llm, groups, T), llm.name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", type=int, default=6)
    parser.add_argument("--rows", type=int, default=8, help="rows per group")
    parser.add_argument("--tokens", type=int, default=32, help="T, tokens per row")
    parser.add_argument("--naive-tokens", type=int, default=8, help="steps for the (slow) naive loop")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--max-prompt-tokens", type=int, default=160)
    parser.add_argument("--skip", default="", help=f"comma-separated variants to leave out of {VARIANTS}")
    parser.add_argument("--json-out", default="", help="also write the JSON report to this file")
    args = parser.parse_args()
    skip = {s for s in args.skip.split(",") if s}

    llm = load_language_model(ModelChoice(source="default", backend="transformers", device=args.device))
    groups = demo_groups(llm, args.groups, args.rows, args.max_prompt_tokens)
    n_rows = args.groups * args.rows
    run_engine(llm, groups[:1], 2)  # warm-up

    seconds: dict[str, float] = {}
    steps = dict.fromkeys(VARIANTS, args.tokens) | {"naive": args.naive_tokens}
    if "engine" not in skip:
        seconds["engine"] = run_engine(llm, groups, args.tokens)
    if "hf_generate" not in skip:
        seconds["hf_generate"] = run_hf_generate(llm, groups, args.tokens)
    if "dp_rag_style" not in skip:
        seconds["dp_rag_style"] = run_dp_rag_style(llm, groups, args.tokens)
    if "naive" not in skip:
        seconds["naive"] = run_naive(llm, groups, args.naive_tokens)
    llamacpp_name = ""
    if "llamacpp" not in skip:
        seconds["llamacpp"], llamacpp_name = run_llamacpp(args.device, groups, args.tokens)
    rates = {k: n_rows * steps[k] / s for k, s in seconds.items()}

    def ratio(a: str, b: str) -> float | None:
        return round(rates[a] / rates[b], 3) if a in rates and b in rates else None

    report = {
        "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device": llm.device,
        "dtype": str(next(llm.model.parameters()).dtype).replace("torch.", ""),
        "model": llm.name,
        "llamacpp_model": llamacpp_name,
        "groups": args.groups,
        "rows": n_rows,
        "tokens": args.tokens,
        "naive_tokens": args.naive_tokens,
        "seconds": {k: round(v, 2) for k, v in seconds.items()},
        "row_tokens_per_s": {k: round(v, 1) for k, v in rates.items()},
        "engine_over_hf_generate": ratio("engine", "hf_generate"),
        "engine_over_dp_rag_style": ratio("engine", "dp_rag_style"),
        "engine_over_naive": ratio("engine", "naive"),
        "llamacpp_over_engine": ratio("llamacpp", "engine"),
        "torch_threads": torch.get_num_threads(),
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")


if __name__ == "__main__":
    main()
