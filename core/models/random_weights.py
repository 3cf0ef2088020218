"""Random-weight language models built from public configs, for throughput checks only.

Speed does not depend on the values of the weights, so a GPU check can measure a model of a given
shape without its weight files (an 8B model's 16 GB cannot travel to a machine that takes 64 MiB).
:data:`SHAPES` holds public architecture configs: SmolLM2-135M's (the packaged model) and one shaped
like Llama-3.1-8B, both with the packaged SmolLM2 tokenizer, plus tiny shapes for dry runs on a CPU.
The weights are drawn from a fixed-seed generator (public test weights, not privacy noise). Never
used for real runs: what such a model writes is noise.
"""

from __future__ import annotations

from typing import Any

import torch

from core.models.transformers_backend import TransformersLanguageModel, torch_dtype_for

RANDOM_PREFIX = "random:"
_WEIGHT_SEED = 20261201  # public test weights, not privacy noise

# Llama-architecture shapes (vocab_size comes from the tokenizer: the packaged SmolLM2 one, 49,152).
SHAPES: dict[str, dict[str, Any]] = {
    "smollm2-135m": {  # HuggingFaceTB/SmolLM2-135M-Instruct config.json
        "hidden_size": 576, "intermediate_size": 1536, "num_hidden_layers": 30, "num_attention_heads": 9,
        "num_key_value_heads": 3, "head_dim": 64, "max_position_embeddings": 8192, "rms_norm_eps": 1e-5,
        "rope_theta": 100000.0, "tie_word_embeddings": True,
    },
    "llama-3.1-8b-shape": {  # meta-llama/Llama-3.1-8B's config.json shape, with the SmolLM2 vocabulary
        "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 131072, "rms_norm_eps": 1e-5,
        "rope_theta": 500000.0, "tie_word_embeddings": False,
    },
    "tiny": {  # dry runs on a CPU
        "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 16, "max_position_embeddings": 2048, "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0, "tie_word_embeddings": True,
    },
    "tiny-wide": {  # dry runs on a CPU, standing in for the 8B shape (untied head, 4:1 grouped queries)
        "hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 8,
        "num_key_value_heads": 2, "head_dim": 16, "max_position_embeddings": 2048, "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0, "tie_word_embeddings": False,
    },
}


def shape_config(shape: str | dict[str, Any], tokenizer):
    """A ``LlamaConfig`` of ``shape`` (a name in :data:`SHAPES` or a config dict) for ``tokenizer``."""
    from transformers import LlamaConfig

    fields = dict(SHAPES[shape]) if isinstance(shape, str) else dict(shape)
    if isinstance(shape, str) and shape not in SHAPES:
        raise ValueError(f"unknown model shape {shape!r}; use one of {', '.join(SHAPES)}")
    for key in ("architectures", "model_type", "torch_dtype", "dtype", "transformers_version"):
        fields.pop(key, None)
    fields.update(
        vocab_size=len(tokenizer),
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return LlamaConfig(**fields)


@torch.no_grad()
def random_llama(config, device: str, dtype: torch.dtype | None = None, seed: int = _WEIGHT_SEED):
    """A Llama model of ``config`` built on ``device`` in ``dtype`` (bf16 on CUDA, fp32 on the CPU),
    every matrix N(0, 0.02^2) from a seeded generator on that device, every norm weight 1."""
    from transformers import AutoModelForCausalLM

    dtype = dtype or torch_dtype_for(device)
    with torch.device(device):  # built where it runs: an 8B model never sits in CPU memory
        model = AutoModelForCausalLM.from_config(config, dtype=dtype)
    generator = torch.Generator(device=torch.device(device)).manual_seed(seed)
    for _, param in sorted(model.named_parameters()):
        if param.dim() == 1:
            param.fill_(1.0)
        else:
            param.normal_(0.0, 0.02, generator=generator)
    model.generation_config.eos_token_id = config.eos_token_id
    return model.eval()


def random_language_model(shape: str | dict[str, Any], tokenizer, device: str = "cpu") -> TransformersLanguageModel:
    """A random-weight chat model of ``shape`` with ``tokenizer`` (its chat template) on ``device``."""
    name = shape if isinstance(shape, str) else str(shape.get("name", "custom"))
    model = random_llama(shape_config(shape, tokenizer), device)
    return TransformersLanguageModel(model, tokenizer, RANDOM_PREFIX + name, device)


def parameter_count(llm: TransformersLanguageModel) -> int:
    return sum(p.numel() for p in llm.model.parameters())
