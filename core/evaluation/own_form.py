"""The share of documents written in one of a corpus's own templates (issue 55's "own form" figure).

A template is a format string with ``{slot}`` placeholders, as the demo generators write them
(``core/demo/clinic.py``, ``core/demo/forms.py``; a clinic-like demo folder holds its templates in
``templates.json``). Each template becomes one regular expression:

* its fixed parts are matched literally (escaped), case-insensitively;
* any run of whitespace in a fixed part matches any run of whitespace (a line break written as a space
  still counts, and the other way round), and whitespace at the edge of a fixed part next to a slot may
  be more or less (``\\s*`` where the template has none, ``\\s+`` where it has some);
* each slot matches any non-empty text (``.+?``, across lines);
* the whole document must match (leading and trailing whitespace aside): a document that opens in a
  template and then goes on in other words does not count. :func:`loose_share` relaxes this: the fixed
  parts need only appear in order somewhere in the document.

:func:`own_form_share` is the share of documents that match at least one template; :func:`template_mix`
tells which template each document matches, so the mix of a synthetic corpus can be compared with the
real one (:func:`mix_total_variation`).

Evaluation only: the templates are public (the generator's), the documents are the custodian's or the
synthetic corpus, and only counts come out.
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

_WS = re.compile(r"\s+")
MAX_CHARS = 20_000  # longer documents are cut before matching (bounds the regular expressions' backtracking)


def parse_template(template: str) -> list[tuple[str, str | None]]:
    """(fixed text, slot name or None) pairs in order, as ``string.Formatter`` reads a format string."""
    return [(literal, field) for literal, field, _, _ in string.Formatter().parse(template)]


def _fixed(literal: str, slot_before: bool, slot_after: bool) -> str:
    """A fixed part as a pattern: whitespace runs match any whitespace; around slots, edges are tolerant."""
    core = literal.strip()
    if not core:  # only whitespace (or nothing) between two slots
        return r"\s*" if not literal else r"\s+"
    body = r"\s+".join(re.escape(part) for part in _WS.split(core))
    lead = r"\s+" if literal[:1].isspace() else r"\s*"
    tail = r"\s+" if literal[-1:].isspace() else r"\s*"
    # At the document's edges (no slot beside the part) surrounding whitespace is stripped anyway.
    return (lead if slot_before else "") + body + (tail if slot_after else "")


def template_pattern(template: str, anchored: bool = True) -> re.Pattern[str]:
    """The regular expression of one template (see the module's docstring)."""
    parts = parse_template(template)
    pieces: list[str] = []
    for i, (literal, field) in enumerate(parts):
        slot_before = i > 0 and parts[i - 1][1] is not None
        if literal:
            pieces.append(_fixed(literal, slot_before, field is not None))
        if field is not None:
            pieces.append(r"(.+?)")
    body = "".join(pieces)
    if anchored:
        return re.compile(r"\A\s*" + body + r"\s*\Z", re.IGNORECASE | re.DOTALL)
    return re.compile(body, re.IGNORECASE | re.DOTALL)


class TemplateMatcher:
    """Which of a corpus's templates a document is written in."""

    def __init__(self, templates: Sequence[str], anchored: bool = True) -> None:
        if not templates:
            raise ValueError("no templates to match")
        self.templates = list(templates)
        self.patterns = [template_pattern(t, anchored) for t in self.templates]
        # A quick pre-check: every fixed word of a template must occur in the document (lower-cased).
        self._needles = [[w for lit, _ in parse_template(t) for w in _WS.split(lit.strip().lower()) if w]
                         for t in self.templates]

    def which(self, document: str) -> int | None:
        """The index of the first template the document matches, or None."""
        text = document[:MAX_CHARS]
        lowered = text.lower()
        for i, (pattern, needles) in enumerate(zip(self.patterns, self._needles)):
            if all(n in lowered for n in needles) and pattern.search(text):
                return i
        return None

    def matches(self, document: str) -> bool:
        return self.which(document) is not None


def own_form_share(documents: Sequence[str], templates: Sequence[str]) -> float | None:
    """The share of documents that match one of ``templates`` in full (None for no documents)."""
    if not documents:
        return None
    matcher = TemplateMatcher(templates)
    return sum(matcher.matches(d) for d in documents) / len(documents)


def loose_share(documents: Sequence[str], templates: Sequence[str]) -> float | None:
    """The share of documents holding one template's fixed parts in order anywhere (extra text allowed)."""
    if not documents:
        return None
    matcher = TemplateMatcher(templates, anchored=False)
    return sum(matcher.matches(d) for d in documents) / len(documents)


def template_mix(documents: Sequence[str], templates: Sequence[str]) -> list[int | None]:
    """The template each document matches (its index; None: none of them)."""
    matcher = TemplateMatcher(templates)
    return [matcher.which(d) for d in documents]


def mix_total_variation(a: Sequence[int | None], b: Sequence[int | None]) -> float | None:
    """Total variation ½·Σ|p − q| between two corpora's template mixes ("none" is a category of its own)."""
    if not a or not b:
        return None
    pa, pb = Counter(a), Counter(b)
    keys = set(pa) | set(pb)
    return 0.5 * sum(abs(pa[k] / len(a) - pb[k] / len(b)) for k in keys)


def load_templates(path: str | Path) -> list[str]:
    """Templates from a JSON file: ``templates.json`` as the demo generator writes it (``{"templates": [{"template":
    ...}, ...]}``), or a plain list of template strings."""
    payload = json.loads(Path(path).read_text(encoding="utf-8"))
    items = payload["templates"] if isinstance(payload, dict) else payload
    templates = [item["template"] if isinstance(item, dict) else str(item) for item in items]
    if not templates:
        raise ValueError(f"{path} holds no templates")
    return templates
