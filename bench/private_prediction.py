"""Benchmark: the private-prediction engine against its ceiling and a naive loop.

Measured side by side in one run, on the same groups of demo notes:

(a) engine  — ``PrivatePredictionEngine``: KV cache, clipping, segment-sum, one sample per
              group, the group's token appended to all its rows;
(b) ceiling — plain batched decoding of the same rows with the same KV cache and no
              aggregation (each row appends its own argmax token);
(c) naive   — every step re-runs the model over each row's full prefix, no cache.

Reports row-tokens/s (rows x generated tokens / wall time, prefill included) and the ratios
a/b (target >= 0.9) and a/c (target >= 5).

    .venv/bin/python bench/private_prediction.py [--groups 6] [--rows 8] [--tokens 32] [--device cpu]
"""

from __future__ import annotations

import argparse
import csv
import json
import time

import torch

from core.methods.private_prediction import EngineConfig, PredictionGroup, PrivatePredictionEngine
from core.models.base import ModelChoice
from core.models.registry import load_language_model
from core.paths import resources_dir
from core.privacy.mechanisms import TokenSampler
from core.prompts import render


def demo_groups(llm, n_groups: int, rows: int, max_prompt_tokens: int) -> list[PredictionGroup]:
    path = resources_dir() / "demo" / "clinic" / "notes.csv"
    notes = [r["note"] for r in csv.DictReader(open(path, encoding="utf-8"))][: n_groups * rows]
    prompts = llm.chat_prompt_ids([render("rephrase", document=n) for n in notes], max_prompt_tokens)
    return [
        PredictionGroup(g, tuple(tuple(p) for p in prompts[g * rows : (g + 1) * rows])) for g in range(n_groups)
    ]


class NeverEos:
    """Wraps the DP sampler so every group runs the full T steps (fair token counts)."""

    def __init__(self, sampler: TokenSampler, eos: frozenset[int]):
        self.sampler = sampler
        self.eos = torch.tensor(sorted(eos))

    def sample(self, z: torch.Tensor) -> torch.Tensor:
        z = z.clone()
        z[:, self.eos.to(z.device)] = -1e9
        return self.sampler.sample(z)


def run_engine(llm, groups, T: int) -> float:
    config = EngineConfig(max_new_tokens=T, clip=0.116, tau=1.0, max_rows=sum(len(g.prompt_ids) for g in groups))
    engine = PrivatePredictionEngine(llm, config, NeverEos(TokenSampler(1.0), llm.eos_token_ids))
    start = time.perf_counter()
    engine.run(groups)
    return time.perf_counter() - start


def run_ceiling(llm, groups, T: int) -> float:
    prompts = [p for g in groups for p in g.prompt_ids]
    start = time.perf_counter()
    session = llm.start_logits(prompts)
    for step in range(T):
        tokens = session.logits().argmax(dim=-1)
        if step < T - 1:
            session.append(tokens)
    return time.perf_counter() - start


def run_naive(llm, groups, T: int) -> float:
    prefixes = [list(p) for g in groups for p in g.prompt_ids]
    start = time.perf_counter()
    for _ in range(T):
        for g0 in range(0, len(prefixes)):
            logits = llm.start_logits([prefixes[g0]]).logits()
            prefixes[g0].append(int(logits.argmax(dim=-1)[0]))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", type=int, default=6)
    parser.add_argument("--rows", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--naive-tokens", type=int, default=8, help="steps for the (slow) naive loop")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--max-prompt-tokens", type=int, default=160)
    args = parser.parse_args()

    llm = load_language_model(ModelChoice(source="default", backend="transformers", device=args.device))
    groups = demo_groups(llm, args.groups, args.rows, args.max_prompt_tokens)
    n_rows = args.groups * args.rows
    run_ceiling(llm, groups[:1], 2)  # warm-up

    t_engine = run_engine(llm, groups, args.tokens)
    t_ceiling = run_ceiling(llm, groups, args.tokens)
    t_naive = run_naive(llm, groups, args.naive_tokens)
    rates = {
        "engine": n_rows * args.tokens / t_engine,
        "ceiling": n_rows * args.tokens / t_ceiling,
        "naive": n_rows * args.naive_tokens / t_naive,
    }
    report = {
        "device": llm.device,
        "model": llm.name,
        "groups": args.groups,
        "rows": n_rows,
        "tokens": args.tokens,
        "naive_tokens": args.naive_tokens,
        "row_tokens_per_s": {k: round(v, 1) for k, v in rates.items()},
        "engine_over_ceiling": round(rates["engine"] / rates["ceiling"], 3),
        "engine_over_naive": round(rates["engine"] / rates["naive"], 2),
        "torch_threads": torch.get_num_threads(),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
