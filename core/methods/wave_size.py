"""How many rows one wave of the private-prediction engine holds (speed only: no privacy effect).

A row holds its KV cache (prompt + T tokens) and a few vocabulary-wide float32 buffers; the wave
is sized so that its rows fit the memory budget (half the free GPU memory by default). On CUDA
out-of-memory the engine halves the wave anyway.
"""

from __future__ import annotations

from core.specs.runspec import RunSpec

__all__ = ["default_batch_rows", "default_memory_budget_mb", "kv_bytes_per_token", "wave_rows"]


def default_batch_rows(device: str) -> int:
    """Rows per wave when the model's cache size is unknown (e.g. the llama.cpp backend)."""
    return 512 if device.startswith("cuda") else 64


def wave_rows(spec: RunSpec, llm) -> int:
    """Rows per private-prediction wave: ``batch_rows`` if set, else what fits the memory budget.

    A row holds its KV cache (prompt + T tokens) and a few vocabulary-wide float32 buffers
    (logits, clipped logits). The budget is ``memory_budget_mb``, else 1 GB on the CPU and
    half the free memory on a GPU. On CUDA out-of-memory the engine halves the wave anyway.
    """
    w = spec.writing
    if w.batch_rows:
        return w.batch_rows
    per_token = kv_bytes_per_token(llm)
    if per_token is None:
        return default_batch_rows(llm.device)
    budget = (w.memory_budget_mb or default_memory_budget_mb(llm.device)) * 1e6
    per_row = (w.max_prompt_tokens + spec.dp_synrag.T) * per_token + 4 * 4 * llm.vocab_size
    return max(1, min(4096, int(budget // per_row)))


def kv_bytes_per_token(llm) -> int | None:
    model = getattr(llm, "model", None)
    config = getattr(model, "config", None)
    if config is None or not hasattr(config, "num_hidden_layers"):
        return None
    heads = config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    element = next(model.parameters()).element_size()
    return config.num_hidden_layers * 2 * kv_heads * head_dim * element


def default_memory_budget_mb(device: str) -> float:
    if device.startswith("cuda"):
        import torch

        free, _total = torch.cuda.mem_get_info(torch.device(device))
        return free / 2e6
    return 1024.0
