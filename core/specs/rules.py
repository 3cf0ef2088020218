"""A run-spec setting's rule (type and range, in plain words) and the one check every section runs.

Each spec dataclass carries ``RULES`` (a ``Rule`` per field); a field without a rule is still type-checked
against its default. ``section_problems`` is the only validation of a section: ``RunSpec.problems`` and the
methods' own checks (RPSG, Aug-PE) call it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

@dataclass(frozen=True)
class Rule:
    """What one setting may hold, and what it means (for messages).

    ``kind``: "whole" (an integer), "number" (int or float, finite), "text", "flag" (true/false),
    "texts" (a list of text), "mapping" (text -> list of text). ``low``/``high`` bound numbers
    (``open_low``/``open_high``: the bound itself is excluded); ``zero_default``: 0 also allowed,
    meaning "the default"; ``choices``: allowed values of a text (or of each item of texts);
    ``optional``: may be missing (None).
    """

    kind: str
    meaning: str = ""
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False
    zero_default: bool = False
    choices: tuple[str, ...] = ()
    optional: bool = False

    def range_words(self) -> str:
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.open_low else '≥'} {self.low:g}")
        if self.high is not None:
            parts.append(f"{'<' if self.open_high else '≤'} {self.high:g}")
        words = " and ".join(parts)
        if self.zero_default:
            words += " (or 0 for the default)"
        return words


def whole(meaning: str, low: int | None = 1, high: int | None = None, zero_default: bool = False) -> Rule:
    return Rule("whole", meaning, low=low, high=high, zero_default=zero_default)


def number(meaning: str, low: float | None = None, high: float | None = None, open_low: bool = False,
           open_high: bool = False, zero_default: bool = False) -> Rule:
    return Rule("number", meaning, low=low, high=high, open_low=open_low, open_high=open_high,
                zero_default=zero_default)


def text(meaning: str = "", choices: tuple[str, ...] = ()) -> Rule:
    return Rule("text", meaning, choices=choices)


text_rule = text  # for sections with a field named "text"


def flag(meaning: str = "") -> Rule:
    return Rule("flag", meaning)


def texts(meaning: str = "", choices: tuple[str, ...] = ()) -> Rule:
    return Rule("texts", meaning, choices=choices)


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return f"true/false ({str(value).lower()})"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


def check_value(rule: Rule, value: Any) -> tuple[Any, str]:
    """``(normalised value, "")`` when ``value`` obeys ``rule``, else ``(value, what is wrong)``."""
    if value is None:
        return (None, "") if rule.optional else (value, "is missing")
    if rule.kind in ("whole", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return value, f"must be a number, not {_type_name(value)} (write it without quotes)"
        if rule.kind == "whole":
            if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
                return value, f"must be a whole number (got {value!r})"
            value = int(value)
        else:
            if not math.isfinite(value):
                return value, f"must be a finite number (got {value!r})"
            value = float(value)
        if rule.zero_default and value == 0:
            return value, ""
        too_low = rule.low is not None and (value <= rule.low if rule.open_low else value < rule.low)
        too_high = rule.high is not None and (value >= rule.high if rule.open_high else value > rule.high)
        if too_low or too_high:
            return value, f"= {value!r} is out of range: it must be {rule.range_words()}"
        return value, ""
    if rule.kind == "flag":
        if not isinstance(value, bool):
            return value, f"must be true or false, not {_type_name(value)}"
        return value, ""
    if rule.kind == "text":
        if not isinstance(value, str):
            return value, f"must be text in quotes, not {_type_name(value)}"
        if rule.choices and value not in rule.choices:
            return value, f"= {value!r} is not one of: {', '.join(rule.choices)}"
        return value, ""
    if rule.kind == "texts":
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            return value, f"must be a list of texts in quotes, not {_type_name(value)}"
        bad = [v for v in value if rule.choices and v not in rule.choices]
        if bad:
            return value, f"holds {bad!r}; allowed: {', '.join(rule.choices)}"
        return list(value), ""
    if rule.kind == "mapping":
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, list) and all(isinstance(x, str) for x in v) for k, v in value.items()
        ):
            return value, 'must be a table of lists of texts, e.g. ID = ["MRN-[0-9]+"]'
        for kind, patterns in value.items():
            for pattern in patterns:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    return value, f"has a pattern for {kind!r} that is not a valid regular expression ({exc.msg})"
        return {k: list(v) for k, v in value.items()}, ""
    raise ValueError(f"unknown rule kind {rule.kind!r}")


def _inferred_rule(default: Any) -> Rule | None:
    """The type rule of a field without an explicit one, from its default value."""
    if isinstance(default, bool):
        return flag()
    if isinstance(default, int):
        return Rule("whole")
    if isinstance(default, float):
        return Rule("number")
    if isinstance(default, str):
        return text()
    if isinstance(default, list):
        return texts()
    return None


def rules_of(cls: type) -> dict[str, Rule]:
    """Every field's rule: explicit ``RULES`` first, else inferred from the default value."""
    explicit = getattr(cls, "RULES", {})
    defaults = cls()
    out = {}
    for f in fields(cls):
        rule = explicit.get(f.name) or _inferred_rule(getattr(defaults, f.name))
        if rule is not None:
            out[f.name] = rule
    return out



def _label(where: str, name: str) -> str:
    return f"[{where}] {name}" if where else name


def section_problems(section: Any, where: str) -> list[str]:
    """Rule violations of one spec section, labelled ``[where] name``: the same check ``RunSpec.problems`` runs."""
    return _problems_of(section, where)


def _problems_of(obj: Any, where: str) -> list[str]:
    """Rule violations of one spec section (recursing into sub-sections)."""
    found = []
    rules = rules_of(type(obj))
    for f in fields(obj):
        value = getattr(obj, f.name)
        if is_dataclass(value):
            found += _problems_of(value, f.name)
            continue
        rule = rules.get(f.name)
        if rule is None:
            continue
        _, problem = check_value(rule, value)
        if problem:
            meaning = f" ({rule.meaning})" if rule.meaning else ""
            found.append(f"{_label(where, f.name)}{meaning} {problem}")
    return found
