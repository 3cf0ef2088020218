"""A GGUF whose weight type llama.cpp cannot multiply fast in batches on the CPU, re-encoded once.

llama.cpp's fast CPU kernels for many rows at once (repacked Q4_0, and its tiled GEMM for F32,
F16, BF16 and Q8_0) do not cover every weight type; Q4_1, the packaged SmolLM2 file's type, falls
back to one dot product per row and column. Measured on the 2-core CPU machine (32 rows of demo
notes, ~105 prompt tokens each; ``/tmp`` script, 2026-11-30): prefill 19.9 s with the Q4_1 file
against 13.2 s for the same weights re-encoded as Q8_0 and 10.3 s for the transformers backend.

So on the CPU a file of a type in :data:`SLOW_BATCHED_ON_CPU` is re-encoded once as Q8_0 (8 bits
per weight, one scale per 32 weights: its rounding error is about 1/16 of Q4_1's own, so the
model is the certified file's up to that), written atomically into the model cache under the
source file's SHA-256, and reused. The certificate names the source file, as it does when the
transformers backend dequantises a GGUF. On a GPU the file is used as it is (CUDA has batched
kernels for these types). Anything that fails here leaves the source file in use.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import tempfile
from pathlib import Path

from core.models.sources import model_cache_root, sha256_file
from core.models.threads import current_threads

SLOW_BATCHED_ON_CPU = frozenset({"LLAMA_FTYPE_MOSTLY_Q4_1"})  # measured; other types are used as they are
CPU_TYPE = "LLAMA_FTYPE_MOSTLY_Q8_0"

log = logging.getLogger(__name__)


def slow_on_cpu(lib, file_type: int) -> bool:
    return any(int(getattr(lib, name, -1)) == file_type for name in SLOW_BATCHED_ON_CPU)


@contextlib.contextmanager
def _quiet_llama_log():
    """llama.cpp logs every tensor while it quantises; keep errors only (as ``Llama(verbose=False)``)."""
    logger = logging.getLogger("llama-cpp-python")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _copy_path(gguf: Path) -> Path:
    return model_cache_root() / f"{sha256_file(gguf)[:16]}-q8_0.gguf"


def existing_cpu_copy(gguf: Path) -> Path | None:
    """The Q8_0 copy of ``gguf`` made by an earlier start, if there is one (so the source need not be
    loaded just to read its weight type again)."""
    try:
        target = _copy_path(gguf)
    except OSError:
        return None
    return target if target.is_file() else None


def cpu_copy(lib, gguf: Path) -> Path | None:
    """The cached Q8_0 copy of ``gguf`` (made now if missing), or None when it cannot be made."""
    try:
        target = _copy_path(gguf)
        if target.is_file():
            return target
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}-")
        os.close(fd)
    except OSError as exc:  # e.g. a read-only cache folder
        log.warning("Could not prepare the CPU copy of %s (%s); using it as it is.", gguf.name, exc)
        return None
    tmp = Path(tmp_name)
    log.info("Re-encoding %s as Q8_0 for batched decoding on the CPU (once; kept in the model cache).", gguf.name)
    try:
        params = lib.llama_model_quantize_default_params()
        params.ftype = int(getattr(lib, CPU_TYPE))
        params.allow_requantize = True
        params.nthread = current_threads()  # the free cores, not every core
        with _quiet_llama_log():
            status = lib.llama_model_quantize(str(gguf).encode(), str(tmp).encode(), ctypes.byref(params))
        if status != 0:
            log.warning("llama.cpp could not re-encode %s for the CPU (status %s); using it as it is.", gguf.name, status)
            return None
        os.replace(tmp, target)  # a finished copy only ever appears whole
        return target
    except OSError as exc:
        log.warning("Could not write the CPU copy of %s (%s); using it as it is.", gguf.name, exc)
        return None
    finally:
        tmp.unlink(missing_ok=True)
