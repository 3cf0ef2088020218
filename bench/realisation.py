"""Benchmark: the public writer of ``text = "realised"`` against plain batched HF ``generate`` with the same
constraints, measured side by side in one run on the same prompt ids (issue 33 item 6).

writer       ``public_decode_tokens`` as ``realise`` runs one batch: the shipped clinical-note form with its
             first demonstration, the copy guard (the demonstration's 4-token runs and words, the prompt's
             labels), every row's released words pulled in (bias 1 -> 6, a begun word finished, no end while
             one is missing), the writer's repetition penalty, no repeated 3-grams, temperature and top-p (public_decoding.py)
             (``--decoding greedy``: argmax); all rules shaped on the model's device for the whole batch; the
             prompts' common first tokens prefilled once; a row that ends leaves the batch.
hf_generate  Hugging Face ``generate`` on the same prompt ids (prompt + the row's lead), left-padded, KV cache:
             the same ``repetition_penalty``, ``no_repeat_ngram_size=3``, ``bad_words_ids`` = the same copy guard
             (each key followed by each token it bans), ``sequence_bias`` = +3.5 (the pull's mean) on the first
             tokens of every row's released words (``generate`` biases the whole batch alike and cannot finish a
             begun word or forbid the end per row), ``do_sample=True`` at the writer's temperature and top-p, ``top_k=0``
             (greedy: ``do_sample=False``). A row that ends is padded until every row has.

Tokens/s = tokens the rows wrote (end-of-text and padding not counted) / wall time, prefill included. The
variants run in turns (writer, hf_generate, writer, ...) ``--repeats`` times; each rate is the median turn's,
so that a busy shared machine slows both alike.

    .venv/bin/python bench/realisation.py [--rows 16] [--tokens 48] [--device cpu] [--decoding sampled|greedy]
        [--repeats 3] [--threads N] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's core/, not an installed one

from core.run.machine_speed import probe_rate
from core.methods.dp_synrag.write import public_decoding as pd
from core.methods.dp_synrag.write import realisation as rl
from core.methods.dp_synrag.shape import examples as ex
from core.methods.dp_synrag.shape import released_topics as rt
from core.methods.dp_synrag.write import writer_prompt as wp
from core.models.transformers_backend import left_pad

TASK = "Answer patients' questions about which disease matches their symptoms."
# Invented, public topics (a word and its co-keywords), cycled to fill the batch.
TOPICS = (
    ("migraine", ("nausea", "light sensitivity")), ("asthma", ("wheezing", "night cough")),
    ("eczema", ("itchy skin", "dry patches")), ("sinusitis", ("facial pressure", "blocked nose")),
    ("tendinitis", ("elbow pain",)), ("anaemia", ("tiredness", "pale skin", "dizziness")),
    ("tonsillitis", ("sore throat", "fever")), ("sciatica", ("leg numbness", "lower back pain")),
)
HF_PULL_BIAS = (pd.PULL_START + pd.PULL_END) / 2


@dataclass(frozen=True)
class Batch:
    """One writer batch, as ``realise`` builds it (first attempt)."""

    prompts: list[str]
    leads: list[str]
    guard: pd.CopyGuard
    topics: list[rt.Topic]

    def pulls(self, tokenizer) -> list[pd.WordPull]:
        return [pd.WordPull.of(tokenizer, t.words) for t in self.topics]


def writer_batch(tokenizer, rows: int) -> Batch:
    example = ex.shipped_example("clinical_note")
    demo = ex.demonstrations(example)[0]
    topics = [rt.Topic(w, rel) for w, rel in (TOPICS[i % len(TOPICS)] for i in range(rows))]
    guard = pd.with_scaffold(tokenizer, pd.copy_guard(tokenizer, demo.document, example,
                                                      (*demo.topic.words, *demo.avoid)))
    return Batch([wp.realisation_prompt(t, TASK, example, (), demo) for t in topics],
                 [wp.realisation_lead(example, t) for t in topics], guard, topics)


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def run_writer(llm, batch: Batch, T: int, decoding: pd.Decoding) -> tuple[float, int]:
    """Seconds and tokens written by the public writer."""
    tokenizer = llm.chat.tokenizer
    pulls = batch.pulls(tokenizer)
    start = time.perf_counter()
    rows = pd.public_decode_tokens(llm, batch.prompts, batch.leads, T, max_prompt_tokens=rl.DEMO_PROMPT_TOKENS,
                                   guard=batch.guard, pulls=pulls, decoding=decoding)
    _sync(llm.device)
    seconds = time.perf_counter() - start
    leads = [len(tokenizer.encode(lead, add_special_tokens=False)) if lead else 0 for lead in batch.leads]
    return seconds, sum(len(r) - n for r, n in zip(rows, leads))


def hf_constraints(llm, batch: Batch) -> dict:
    """The writer's rules as far as ``generate`` can express them."""
    bad = [list(key) + [t] for key, tokens in batch.guard.items() for t in sorted(tokens)]
    firsts = {ids[0] for pull in batch.pulls(llm.chat.tokenizer) for _, ids in pull.variants}
    return {"repetition_penalty": pd.REPETITION_PENALTY, "no_repeat_ngram_size": pd.NO_REPEAT_NGRAM,
            "bad_words_ids": bad, "sequence_bias": {(t,): HF_PULL_BIAS for t in sorted(firsts)}}


def run_hf_generate(llm, batch: Batch, T: int, decoding: pd.Decoding) -> tuple[float, int]:
    """Seconds and tokens written by batched HF ``generate`` on the same prompt ids."""
    tokenizer = llm.chat.tokenizer
    starts = [list(tokenizer.encode(s, add_special_tokens=False)) if s else [] for s in batch.leads]
    prompts = [p + s for p, s in zip(llm.chat_prompt_ids(batch.prompts, rl.DEMO_PROMPT_TOKENS), starts)]
    ids, mask = left_pad(prompts, llm.chat.pad_token_id, llm.device)
    sampling = ({"do_sample": True, "temperature": decoding.temperature, "top_p": decoding.top_p, "top_k": 0}
                if not decoding.greedy else {"do_sample": False, "temperature": None, "top_p": None, "top_k": None})
    constraints = hf_constraints(llm, batch)
    start = time.perf_counter()
    with torch.inference_mode():
        out = llm.model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=T, use_cache=True,
                                 pad_token_id=llm.chat.pad_token_id, eos_token_id=sorted(llm.eos_token_ids),
                                 **constraints, **sampling)
    _sync(llm.device)
    seconds = time.perf_counter() - start
    new = out[:, ids.shape[1]:]
    ended = torch.isin(new, torch.tensor(sorted(llm.eos_token_ids), device=new.device))
    first_end = torch.where(ended.any(1), ended.float().argmax(1), torch.full_like(ended[:, 0], new.shape[1], dtype=torch.long))
    return seconds, int(first_end.sum())


VARIANTS = {"writer": run_writer, "hf_generate": run_hf_generate}


def measure(llm, rows: int, T: int, decoding: pd.Decoding, repeats: int = 1) -> dict:
    """Both variants side by side (after a short warm-up of each), in turns ``repeats`` times; each
    variant's rate is its median turn's, and the writer's ratio is of those medians."""
    batch = writer_batch(llm.chat.tokenizer, rows)
    warm = writer_batch(llm.chat.tokenizer, 2)
    for run in VARIANTS.values():
        run(llm, warm, 2, decoding)
    turns: dict[str, list[tuple[float, int]]] = {k: [] for k in VARIANTS}
    probes: list[float] = []  # the estimate's speed test between turns (core.run.machine_speed.REFERENCE_ROUNDS_S)
    for _ in range(repeats):
        for name, run in VARIANTS.items():
            turns[name].append(run(llm, batch, T, decoding))
        probes.append(probe_rate())
    rates = {k: statistics.median(tokens / seconds for seconds, tokens in v) for k, v in turns.items()}
    prompt_ids = llm.chat_prompt_ids(batch.prompts, rl.DEMO_PROMPT_TOKENS)
    return {
        "rows": rows,
        "max_new_tokens": T,
        "decoding": "greedy" if decoding.greedy else f"temperature {decoding.temperature}, top-p {decoding.top_p}",
        "prompt_tokens_mean": round(sum(len(p) for p in prompt_ids) / len(prompt_ids), 1),
        "shared_prefix_tokens": pd.common_prefix(prompt_ids),
        "guard_entries": sum(len(v) for v in batch.guard.values()),
        "repeats": repeats,
        "seconds": {k: [round(s, 2) for s, _ in v] for k, v in turns.items()},
        "tokens": {k: [n for _, n in v] for k, v in turns.items()},
        "tokens_per_s": {k: round(v, 1) for k, v in rates.items()},
        "writer_over_hf_generate": round(rates["writer"] / rates["hf_generate"], 3),
        "speed_test_rounds_per_s": round(statistics.median(probes), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--tokens", type=int, default=48, help="T, the most tokens a row writes")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--decoding", choices=("sampled", "greedy"), default="sampled")
    parser.add_argument("--repeats", type=int, default=3, help="turns of each variant (the median is reported)")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--json-out", default="", help="also write the JSON report to this file")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    from core.models.registry import load_language_model
    from core.specs.runspec import ModelChoice

    llm = load_language_model(ModelChoice(source="default", backend="transformers", device=args.device))
    report = {
        "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device": llm.device,
        "dtype": str(next(llm.model.parameters()).dtype).replace("torch.", ""),
        "model": llm.name,
        **measure(llm, args.rows, args.tokens, pd.GREEDY if args.decoding == "greedy" else pd.SAMPLED, args.repeats),
        "torch_threads": torch.get_num_threads(),
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.json_out:
        Path(args.json_out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
