"""The run spec's ``[document]`` section: the form of the documents a run writes, whatever the method (the shipped
form a public writer follows or a self-filter reads, and the custodian's own invented example of it).

Specs written before this section existed kept these settings in the method's section (``[dp_synrag]``, or
``[dp_synth]`` for a DP-Synth run that has one); they are read from there into ``[document]``
(``move_document_settings``), and a setting stated in both with different values is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from core.specs import method_catalogue
from core.specs.document_forms import DOCUMENT_FORMS
from core.specs.rules import Rule, text_rule
from core.specs.writing import move_settings

# The settings the method sections held before [document] existed (a spec that states them there is read as before).
DOCUMENT_SETTINGS = ("document_form", "public_example")
SHARED_SECTION = "dp_synrag"  # the section whose form every method without its own read (and the wizard showed)


@dataclass
class DocumentSpec:
    # one of DOCUMENT_FORMS; "" = chosen from the task's words (else the chosen column names); "none" = no example
    document_form: str = ""
    public_example: str = ""  # the custodian's own INVENTED example of the form (replaces document_form)

    RULES: ClassVar[dict[str, Rule]] = {
        "document_form": text_rule("the shipped example of the document form", choices=("", *DOCUMENT_FORMS, "none")),
        "public_example": text_rule("the invented example of the document form"),
    }


def move_document_settings(data: dict[str, Any]) -> dict[str, Any]:
    """A spec's settings with the form an older spec states in a method's section moved to ``[document]``: from the
    section of the spec's method when that method's section held a form (``MethodEntry.form_in_section``: DP-Synth's
    self-filter read its own) and the spec has it, else from ``[dp_synrag]`` (DP-SynRAG's, and every other method's
    as the wizard showed it). Another section's form was read by no run of this spec and is dropped. A setting
    stated in the section read and in ``[document]`` with different values raises ``PrivetError``."""
    held = [m.key for m in method_catalogue.METHODS if m.form_in_section]
    method = data.get("method")
    own = method if method in held and isinstance(data.get(method), dict) else SHARED_SECTION
    for name in held:
        section = data.get(name)
        if name != own and isinstance(section, dict) and any(key in section for key in DOCUMENT_SETTINGS):
            data = {**data, name: {k: v for k, v in section.items() if k not in DOCUMENT_SETTINGS}}
    return move_settings(data, own, "document", DOCUMENT_SETTINGS)
