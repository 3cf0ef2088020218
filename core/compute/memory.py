"""How much memory a run needs: the wave's KV cache on top of the loaded models (a rough plan figure)."""

from __future__ import annotations

from core.methods.wave_size import default_batch_rows
from core.specs.runspec import RunSpec

BASE_MB = 1200.0  # the loaded models and the process, before any KV cache
# The packaged model (SmolLM2-135M): 30 layers, K and V, 3 KV heads x 64 dims, float32.
KV_BYTES_PER_TOKEN = 30 * 2 * 192 * 4
PROMPT_TOKENS_CAP = 200  # prompts are usually shorter than max_prompt_tokens


def run_memory_mb(spec: RunSpec) -> float:
    """Memory (MB) of one private-prediction wave of the packaged model on top of the loaded models."""
    w = spec.writing
    prompt = min(w.max_prompt_tokens, PROMPT_TOKENS_CAP)
    wave_rows = w.batch_rows or default_batch_rows(spec.llm.device)
    kv_mb = wave_rows * (prompt + spec.dp_synrag.T) * KV_BYTES_PER_TOKEN / 1e6
    return BASE_MB + kv_mb
