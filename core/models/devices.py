"""Which compute devices exist and which one a model runs on."""

from __future__ import annotations

import os
import re

import torch

from core.common.errors import ModelError

_CUDA_RE = re.compile(r"^cuda(?::(\d+))?$")


def resolve_device(device: str) -> str:
    """Turn "auto" / "cpu" / "cuda" / "cuda:N" into a usable torch device string.

    "auto" picks the first CUDA GPU when one is usable, else the CPU. Asking for CUDA on a
    machine without it is an error rather than a silent fallback (it would be 10-50x slower).
    """
    text = (device or "auto").strip().lower()
    if text == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if text == "cpu":
        return "cpu"
    match = _CUDA_RE.match(text)
    if not match:
        raise ModelError(f"Unknown device '{device}'.", 'Use "auto", "cpu", "cuda" or "cuda:N".')
    if not torch.cuda.is_available():
        raise ModelError(
            f"Device '{device}' was requested but CUDA is not available on this machine.",
            'Use device "cpu" or "auto", or install the CUDA build of torch (see README).',
        )
    index = int(match.group(1) or 0)
    if index >= torch.cuda.device_count():
        raise ModelError(
            f"Device '{device}' was requested but only {torch.cuda.device_count()} GPU(s) exist.",
            f'Use "cuda:0" to "cuda:{torch.cuda.device_count() - 1}".',
        )
    return text


def detect_devices() -> list[dict]:
    """The CUDA GPUs (name, memory) if any, and always the CPU (core count)."""
    found: list[dict] = []
    if torch.cuda.is_available():
        for index in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(index)
            found.append(
                {"device": f"cuda:{index}", "name": props.name, "memory_bytes": int(props.total_memory)}
            )
    found.append({"device": "cpu", "name": "CPU", "cores": os.cpu_count() or 1})
    return found
