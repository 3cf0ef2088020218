"""A run-spec setting's rule (type and range, in plain words) and the one check every section runs.

Each spec dataclass carries ``RULES`` (a ``Rule`` per field); a field without a rule is still type-checked
against its default. ``section_problems`` is the only validation of a section: ``RunSpec.problems`` calls it on
loading a spec, and ``check_section`` (the same problems, refused) guards each method's plan and run against a
section handed to it directly (DP-SynRAG's and Aug-PE's plans, RPSG's run).

Every size a run allocates or loops over has an upper bound, from the size limits below (one table, each
with why): a typo such as ``population = 1e9`` is refused when the spec is loaded, by ``privet plan`` and
``privet run`` alike, instead of being charged and then running out of memory or for ever. The limits are
far above any useful setting; ``tests/specs/test_runspec_validation.py`` checks that every whole-number rule has
one (a seed and the public bound on the number of units are the only exceptions, see ``UNBOUNDED``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from core.common.errors import PrivetError

# -- size limits (the one table; the sections' RULES refer to these) ---------------------------------------
# Tokens: one document, one generation. 4096 is twice the packaged model's whole context (2048 tokens in
# llama.cpp); a longer document is never useful and, with a model that does not stop, is hours of decoding.
MAX_TOKENS = 4_096
MAX_PROMPT_TOKENS = 32_768  # the longest prompt: the largest contexts of local models
MAX_CLUSTERS = 50_000  # R (the seeds use 500, 1000 for very broad corpora); the histogram and clusters grow with it
MAX_KEYWORDS = 1_000  # K, and co-keywords per cluster (M = 5): each is a noisy count per cluster
MAX_UNITS_PER_CLUSTER = 1_000_000  # k: the largest corpora a single machine embeds
# Top-k+ candidates: the largest vocabularies of current models hold about 256k tokens (k ≥ the
# vocabulary means "all"); above it a value is a typo.
MAX_VOCABULARY = 262_144
# Aug-PE: candidate texts each vote is taken over. The Aug-PE paper's synthetic sets hold a few thousand
# texts; 20,000 candidates of 96 tokens are already about 2M generated tokens per iteration.
MAX_POPULATION = 20_000
MAX_ITERATIONS = 100  # Aug-PE vote rounds (the paper uses up to about 20); each costs a share of ε
MAX_VARIATIONS = 64  # Aug-PE variations per winner; RPSG candidates and variants per seed
MAX_BATCH = 4_096  # texts or rows generated together: far above what one GPU's memory holds
MAX_MEMORY_MB = 4_194_304  # 4 TiB: a memory budget above it is a typo (the wave size grows with it)
MAX_WORKERS = 1_024  # Ray workers: far above the GPUs of one site
MAX_THREADS = 4_096  # [compute] threads: far above the cores of one machine (the count used is at most its cores)
MAX_UNIT_CHARS = 10_000_000  # the longest privacy unit: ten million characters (a few thousand pages)
MAX_PHRASES_PER_UNIT = 64  # K_p: phrases each unit proposes
MAX_UNITS = 10**12  # the public bound N on units: more than any corpus; δ = 1/(10 N) stays a normal float
# A label column's values (docs/method.md §6.3): a category with few values. Each class is synthesised on its own,
# so a class needs many units to say anything; 50 classes is far above what a corpus of a few thousand supports.
MAX_LABELS = 50
MAX_NAME_CHARS = 200  # a dataset name, custodian, organisation or protocol number: one line of a certificate
MAX_PATH_CHARS = 4_096  # PATH_MAX on Linux
# Whole-number settings that are not sizes (nothing grows with them), so they need no upper bound.
UNBOUNDED = ("test_mode_seed",)


@dataclass(frozen=True)
class Rule:
    """What one setting may hold, and what it means (for messages).

    ``kind``: "whole" (an integer), "number" (int or float, finite), "text", "flag" (true/false),
    "texts" (a list of text), "mapping" (text -> list of text). ``low``/``high`` bound numbers
    (``open_low``/``open_high``: the bound itself is excluded); ``zero_default``: 0 also allowed,
    meaning "the default"; ``choices``: allowed values of a text (or of each item of texts);
    ``optional``: may be missing (None); ``printable``: text of printable characters only (no control,
    format or zero-width character), because it is echoed on a terminal and printed on the certificate;
    ``max_chars``: the longest text; ``pattern``: a regular expression the whole text must match, ``form`` what
    it allows in words (for messages).
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
    printable: bool = False  # text: printable characters only (a name or path that is shown and exported)
    max_chars: int | None = None  # text: at most this many characters
    pattern: str = ""  # text: a regular expression the whole text must match (re.fullmatch)
    form: str = ""  # text: what ``pattern`` allows, in words

    def range_words(self) -> str:
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.open_low else '≥'} {_bound_words(self.low)}")
        if self.high is not None:
            parts.append(f"{'<' if self.open_high else '≤'} {_bound_words(self.high)}")
        words = " and ".join(parts)
        if self.zero_default:
            words += " (or 0 for the default)"
        return words


def _bound_words(bound: float) -> str:
    """A bound as written in a spec: whole numbers in full up to 10^9 (4194304, not 4.1943e+06)."""
    return str(int(bound)) if float(bound).is_integer() and abs(bound) < 1e9 else f"{bound:g}"


def whole(meaning: str, low: int | None = 1, high: int | None = None, zero_default: bool = False) -> Rule:
    return Rule("whole", meaning, low=low, high=high, zero_default=zero_default)


def number(meaning: str, low: float | None = None, high: float | None = None, open_low: bool = False,
           open_high: bool = False, zero_default: bool = False) -> Rule:
    return Rule("number", meaning, low=low, high=high, open_low=open_low, open_high=open_high,
                zero_default=zero_default)


def text(meaning: str = "", choices: tuple[str, ...] = (), pattern: str = "", form: str = "") -> Rule:
    """A text, one of ``choices`` if given, matching ``pattern`` (described by ``form``) if given."""
    return Rule("text", meaning, choices=choices, pattern=pattern, form=form)


def name(meaning: str = "") -> Rule:
    """A name shown and exported: printable characters only, at most ``MAX_NAME_CHARS`` (``name_problem``)."""
    return Rule("text", meaning, printable=True, max_chars=MAX_NAME_CHARS)


def path_text(meaning: str = "") -> Rule:
    """A file or folder path: printable characters only, at most ``MAX_PATH_CHARS``."""
    return Rule("text", meaning, printable=True, max_chars=MAX_PATH_CHARS)


def name_problem(value: str, max_chars: int | None = MAX_NAME_CHARS) -> str:
    """What is wrong with a name ('' if nothing): a non-printable character (never echoed), or its length."""
    for i, ch in enumerate(value):
        if not ch.isprintable():
            return (f"holds a control or other non-printable character (U+{ord(ch):04X}, character {i + 1}); "
                    "use letters, digits, spaces and punctuation only")
    if max_chars is not None and len(value) > max_chars:
        return f"is {len(value)} characters long; at most {max_chars} are allowed"
    return ""


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
        shown = f"{value:g}" if isinstance(value, float) and abs(value) >= 1e16 else repr(value)  # 1e+300, not 301 digits
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
            return value, f"= {shown} is out of range: it must be {rule.range_words()}"
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
        if rule.pattern and not re.fullmatch(rule.pattern, value, flags=re.S):
            return value, f"= {value!r} is not {rule.form or 'of the form ' + rule.pattern}"
        if rule.printable or rule.max_chars is not None:
            problem = name_problem(value, rule.max_chars) if rule.printable else (
                f"is {len(value)} characters long; at most {rule.max_chars} are allowed"
                if rule.max_chars is not None and len(value) > rule.max_chars else "")
            if problem:
                return value, problem
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


def check_section(section: Any, where: str) -> None:
    """Refuse a section that breaks its rules, naming each problem (``section_problems``)."""
    problems = section_problems(section, where)
    if problems:
        raise PrivetError(f"The [{where}] settings are invalid: " + "; ".join(problems) + ".",
                          f"Fix [{where}] in the run spec and start again.")


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
