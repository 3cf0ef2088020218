"""Loads the shipped prompt templates from ``resources/prompts``."""

from __future__ import annotations

from functools import cache

from core.common.paths import resources_dir


@cache
def template(name: str) -> str:
    return (resources_dir() / "prompts" / f"{name}.txt").read_text(encoding="utf-8").strip()


def render(name: str, **fields: object) -> str:
    """Fill a template; unknown placeholders raise KeyError (a bug, not a user error)."""
    return template(name).format(**fields)
