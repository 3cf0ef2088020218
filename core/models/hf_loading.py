"""Offline, quiet loading of transformers objects.

Every load sets the offline switches and passes ``local_files_only=True``: Privet never
touches the network at run time. Transformers' own progress bars are silenced while loading
(Privet reports progress itself).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator

from core.common.errors import ModelError


def set_offline() -> None:
    """Force the Hugging Face libraries offline (read at import, so call before importing them)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


@contextlib.contextmanager
def quiet_loading() -> Iterator[None]:
    """Silence transformers' progress bars and info logs for the duration of a load."""
    set_offline()
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    level = hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        if bars:
            hf_logging.enable_progress_bar()


def load_tokenizer(folder: Path, gguf_file: str | None = None):
    """A tokenizer from a local folder (or a GGUF file in it), never from the hub."""
    with quiet_loading():
        from transformers import AutoTokenizer

        try:
            kwargs = {"gguf_file": gguf_file} if gguf_file else {}
            return AutoTokenizer.from_pretrained(str(folder), local_files_only=True, **kwargs)
        except (OSError, ValueError, KeyError, TypeError, OverflowError) as exc:
            raise ModelError(
                f"Could not load the tokenizer from {folder / gguf_file if gguf_file else folder}: {exc}",
                "Check that the folder is a complete Hugging Face model (tokenizer files included).",
            ) from exc
