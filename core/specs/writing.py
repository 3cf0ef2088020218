"""The run spec's ``[writing]`` section: how every method drives the model, whatever the method (speed and memory
only: none of these settings changes what a stage draws or what it costs).

Specs written before this section existed kept these settings in ``[dp_synrag]``; they are read from there
into ``[writing]`` (``move_shared_settings``), and a setting stated in both with different values is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from core.common.errors import PrivetError
from core.specs.rules import MAX_BATCH, MAX_MEMORY_MB, MAX_PROMPT_TOKENS, Rule, whole

# The settings [dp_synrag] held before [writing] existed (a spec that states them there is read as before).
SHARED_SETTINGS = ("max_prompt_tokens", "batch_rows", "memory_budget_mb")


@dataclass
class WritingSpec:
    max_prompt_tokens: int = 256  # the longest prompt the model reads, in tokens (a longer message is cut)
    batch_rows: int = 0  # rows per wave of the private-prediction engine; 0 = from the memory budget
    memory_budget_mb: int = 0  # the memory a wave may use, MB; 0 = automatic

    RULES: ClassVar[dict[str, Rule]] = {
        "max_prompt_tokens": whole("the longest prompt, in tokens", low=16, high=MAX_PROMPT_TOKENS),
        "batch_rows": whole("rows per wave", low=0, high=MAX_BATCH),
        "memory_budget_mb": whole("the memory budget in MB", low=0, high=MAX_MEMORY_MB),
    }


def move_shared_settings(data: dict[str, Any]) -> dict[str, Any]:
    """A spec's settings (a table read from TOML or a saved run's spec) with those an older spec states in
    ``[dp_synrag]`` moved to ``[writing]``, where they mean the same; unchanged when there are none. A setting
    stated in both sections with different values raises ``PrivetError``."""
    return move_settings(data, "dp_synrag", "writing", SHARED_SETTINGS)


def move_settings(data: dict[str, Any], source: str, target: str, names: tuple[str, ...]) -> dict[str, Any]:
    """``data`` with the settings ``names`` that section ``source`` states moved to the shared section ``target``
    (where they mean the same); unchanged when ``source`` states none. A setting stated in both sections with
    different values raises ``PrivetError``."""
    section = data.get(source)
    if not isinstance(section, dict) or not any(name in section for name in names):
        return data
    section, shared = dict(section), data.get(target, {})
    moved = dict(shared) if isinstance(shared, dict) else shared
    for name in names:
        if name not in section:
            continue
        value = section.pop(name)
        if isinstance(moved, dict) and name in moved and moved[name] != value:
            raise PrivetError(
                f"The run spec states {name} twice with different values: [{source}] {name} = {value!r} and "
                f"[{target}] {name} = {moved[name]!r}.",
                f"Keep {name} under [{target}] only (it applies to every method); [{source}] held it in older specs.")
        if isinstance(moved, dict):
            moved[name] = value
    return {**data, source: section, target: moved}
