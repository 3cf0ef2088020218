"""Which GPUs this computer has, without touching CUDA in the GUI process.

The GUI must not create a CUDA context (it would hold GPU memory the pipeline child
needs), so GPUs are listed with ``nvidia-smi`` when it exists.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuInfo:
    index: int
    name: str
    memory_mb: int

    def label(self) -> str:
        return f"GPU {self.index}: {self.name} ({self.memory_mb / 1024:.0f} GiB)"


def parse_nvidia_smi(output: str) -> list[GpuInfo]:
    """Parse ``nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader,nounits``."""
    gpus = []
    for line in output.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 3:
            continue
        try:
            gpus.append(GpuInfo(int(parts[0]), parts[1], int(float(parts[2]))))
        except ValueError:
            continue
    return gpus


def detect_gpus(timeout_s: float = 5.0) -> list[GpuInfo]:
    """NVIDIA GPUs found by ``nvidia-smi``; an empty list when there is none or it fails."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return []
    try:
        out = subprocess.run(
            [exe, "--query-gpu=index,name,memory.total", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return parse_nvidia_smi(out)
