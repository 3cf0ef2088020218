"""Local model backends (transformers, llama.cpp, sentence-transformers) behind one interface.

Import the loaders from :mod:`core.models.registry`; the protocols are in :mod:`core.models.base`.
"""

from core.models.base import Embedder, LanguageModel, LogitsSession

__all__ = ["Embedder", "LanguageModel", "LogitsSession"]
