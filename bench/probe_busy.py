"""Does the estimate's speed test slow down as the writer does when the machine is busy?

Side by side in one run, idle and then beside ``--busy`` processes that only spin: the speed test's workload
(``core.run.machine_speed``) on 1 and 2 torch threads, a Python loop's share of a core, and the packaged model's
own decoding step (a 16-row batch with its cache, the transformers backend the writer uses on the CPU) on 1 and 2
threads; and the rate the plan prices the run at (``machine_speed.probe_rate``: the probe's CPU rate times the fair
share of a core). The question is which reading's busy ÷ idle ratio matches the model's, busy on the thread the
writer then takes (one) against idle on two.

    python bench/probe_busy.py [--busy 2] [--json-out W/probe-busy.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.run import machine_speed


def python_share(seconds: float = 0.5) -> float:
    """The share of a core a Python loop gets over ``seconds`` (its thread's CPU time over the wall time)."""
    start, cpu = time.perf_counter(), time.thread_time()
    total = 0
    while time.perf_counter() - start < seconds:
        total += sum(range(1000))
    return (time.thread_time() - cpu) / (time.perf_counter() - start)


def model_steps_per_s(threads: int, seconds: float = 1.0, readings: int = 3) -> float:
    """Decoding steps per second of the packaged model, 16 rows with their cache (the median of ``readings``)."""
    import torch
    from transformers import AutoModelForCausalLM

    from core.models.gguf_convert import converted_model_folder
    from core.models.sources import packaged_llm_path

    model = AutoModelForCausalLM.from_pretrained(converted_model_folder(packaged_llm_path()), dtype=torch.float32)
    torch.set_num_threads(threads)
    rates = []
    with torch.inference_mode():
        past = model(torch.full((16, 64), 42, dtype=torch.long), use_cache=True).past_key_values
        step = torch.full((16, 1), 43, dtype=torch.long)
        for _ in range(readings):
            n, start = 0, time.perf_counter()
            while time.perf_counter() - start < seconds:
                past = model(step, past_key_values=past, use_cache=True).past_key_values
                n += 1
            rates.append(n / (time.perf_counter() - start))
    return float(statistics.median(rates))


def measure() -> dict[str, float]:
    """Every reading once; the speed test's before the model is loaded (a loaded model's threads disturb it)."""
    from core.models.threads import choose_threads

    out: dict[str, float] = {"python_share": python_share()}
    for threads in (1, 2):
        speed = machine_speed.probe(threads=threads)
        out[f"probe_rounds_s_{threads}t"] = speed.rate
        out[f"probe_cpu_rounds_s_{threads}t"] = speed.cpu_rate
    out["fair_share"] = machine_speed.fair_share(choose_threads())
    out["priced_rounds_s"] = machine_speed.probe_rate()  # what the plan prices the run at
    for threads in (1, 2):
        out[f"model_steps_s_{threads}t"] = model_steps_per_s(threads)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--busy", type=int, default=2, help="spinning processes beside the busy readings")
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    idle = measure()
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        time.sleep(args.warmup)
        busy = measure()
    finally:
        for hog in hogs:
            hog.kill()
    result: dict[str, Any] = {"idle": idle, "busy": busy, "busy_processes": args.busy, "ratios": {
        "model_busy_1t_over_idle_2t": busy["model_steps_s_1t"] / idle["model_steps_s_2t"],
        "priced_busy_over_idle": busy["priced_rounds_s"] / idle["priced_rounds_s"],
        "probe_busy_1t_over_idle_1t": busy["probe_rounds_s_1t"] / idle["probe_rounds_s_1t"],
        "probe_busy_1t_over_idle_2t": busy["probe_rounds_s_1t"] / idle["probe_rounds_s_2t"],
        "model_2t_over_1t_idle": idle["model_steps_s_2t"] / idle["model_steps_s_1t"],
        "probe_2t_over_1t_idle": idle["probe_rounds_s_2t"] / idle["probe_rounds_s_1t"],
    }}
    text = json.dumps(result, indent=2)
    print(text)
    if args.json_out:
        args.json_out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
