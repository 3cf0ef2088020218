"""Converting a GGUF file into a cached transformers folder (and its tokenizer).

transformers can read a GGUF file directly but it dequantises every tensor on each load
(~15 s for the packaged SmolLM2). The first load therefore copies the dequantised weights
into a plain fp32 model and saves it, with the tokenizer, under
``model_cache_root()/<sha256 prefix>-model``; later loads read that folder in under a second.
Folders are written to a temporary name and renamed into place, so an interrupted conversion
never leaves a half-written cache entry.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import tempfile
from pathlib import Path
from typing import Callable

import torch

from core.common.errors import ModelError
from core.models.hf_loading import load_tokenizer, quiet_loading
from core.models.sources import model_cache_root, sha256_file

_MARKER = "privet_source.json"


def _atomic_folder(final: Path, build: Callable[[Path], None]) -> Path:
    """Build a folder in a temporary sibling, then rename it to ``final`` (first writer wins)."""
    if (final / _MARKER).is_file():
        return final
    tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}-"))
    try:
        build(tmp)
        try:
            tmp.rename(final)
        except OSError:
            if not (final / _MARKER).is_file():  # not a concurrent writer's finished copy
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def _write_marker(folder: Path, gguf: Path, sha256: str) -> None:
    (folder / _MARKER).write_text(json.dumps({"gguf_file": gguf.name, "sha256": sha256}, indent=2))


def _convert_model(gguf: Path, sha256: str, out: Path) -> None:
    # transformers' GGUF reader draws its own tqdm bar on stderr, outside its progress-bar switch.
    with quiet_loading(), contextlib.redirect_stderr(io.StringIO()):
        from transformers import AutoModelForCausalLM

        try:
            quantised = AutoModelForCausalLM.from_pretrained(
                str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32, local_files_only=True
            )
        except (OSError, ValueError, KeyError, RuntimeError, OverflowError) as exc:
            raise ModelError(
                f"transformers could not read the GGUF file {gguf}: {exc}",
                'Use the llama.cpp backend for this file (backend = "llamacpp").',
            ) from exc
        config = quantised.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config  # the copy is a plain fp32 model
        plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        plain.load_state_dict(quantised.state_dict(), strict=True)
        plain.generation_config = quantised.generation_config
        del quantised
        plain.save_pretrained(str(out))
    load_tokenizer(gguf.parent, gguf.name).save_pretrained(str(out))
    _write_marker(out, gguf, sha256)


def _convert_tokenizer(gguf: Path, sha256: str, out: Path) -> None:
    load_tokenizer(gguf.parent, gguf.name).save_pretrained(str(out))
    _write_marker(out, gguf, sha256)


def converted_model_folder(gguf: Path) -> Path:
    """The cached transformers folder (fp32 weights + tokenizer) of a GGUF file; converts on first use."""
    sha = sha256_file(gguf)
    final = model_cache_root() / f"{sha[:16]}-model"
    return _atomic_folder(final, lambda out: _convert_model(gguf, sha, out))


def gguf_tokenizer_folder(gguf: Path) -> Path:
    """A cached folder holding only the tokenizer of a GGUF file (cheap: no weight conversion)."""
    sha = sha256_file(gguf)
    model = model_cache_root() / f"{sha[:16]}-model"
    if (model / _MARKER).is_file():
        return model
    final = model_cache_root() / f"{sha[:16]}-tokenizer"
    return _atomic_folder(final, lambda out: _convert_tokenizer(gguf, sha, out))
